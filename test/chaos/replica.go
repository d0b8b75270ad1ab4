package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/vcsyncer/syncer/pkg/localcluster"
)

// Replica is one vc-syncer process the soak starts, kills and starts again.
type Replica struct {
	ID      string
	Metrics string // host:port of its /metrics
	Pprof   string // host:port of its /debug/pprof/ (--pprof-bind-address)
	Log     string // its log file (appended to by every incarnation)
	bin     string
	args    []string

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	stopping bool // the harness is stopping it: an exit is not a crash
	crashes  []string
}

// Start starts a new incarnation of the replica.
func (r *Replica) Start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		return fmt.Errorf("replica %s already running (pid %d)", r.ID, r.cmd.Process.Pid)
	}
	f, err := os.OpenFile(r.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(r.bin, r.args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	done := make(chan struct{})
	r.cmd, r.done, r.stopping = cmd, done, false
	go func() {
		_ = cmd.Wait()
		f.Close()
		r.mu.Lock()
		if r.cmd == cmd {
			if !r.stopping {
				r.crashes = append(r.crashes, fmt.Sprintf("replica %s (pid %d) exited by itself at %s: %s (log %s); its last lines:\n%s",
					r.ID, cmd.Process.Pid, time.Now().UTC().Format(time.RFC3339), cmd.ProcessState, r.Log, localcluster.LogTail(r.Log, 8)))
			}
			r.cmd = nil
		}
		r.mu.Unlock()
		close(done)
	}()
	return nil
}

// PID returns the pid of the running incarnation, 0 when none runs.
func (r *Replica) PID() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return 0
	}
	return r.cmd.Process.Pid
}

// Signal sends sig to the running incarnation and waits until it has exited (a process that
// outlives a SIGTERM by 45 s is killed). It returns the pid it signalled, 0 when none ran.
func (r *Replica) Signal(sig syscall.Signal) int {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	if cmd == nil {
		r.mu.Unlock()
		return 0
	}
	r.stopping = true
	r.mu.Unlock()
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(45 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
	return cmd.Process.Pid
}

// Crashes returns (and forgets) the exits the harness did not cause.
func (r *Replica) Crashes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.crashes
	r.crashes = nil
	return out
}

// EnsureRunning starts the replica when no incarnation runs (after a crash).
func (r *Replica) EnsureRunning() error {
	if r.PID() != 0 {
		return nil
	}
	return r.Start()
}
