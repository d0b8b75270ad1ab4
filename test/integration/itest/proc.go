package itest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// SyncerProc runs `vc-syncer run` again and again (start, SIGKILL, start, ...), appending
// every incarnation's output to one log file with a marker line before each start.
type SyncerProc struct {
	bin     string
	args    []string
	LogPath string
	log     *os.File

	n       int // incarnations started
	cmd     *exec.Cmd
	done    chan error
	started time.Time
}

// NewSyncerProc returns a SyncerProc of binary bin with arguments args (not started yet); its
// log is in a temporary directory (LogPath), and the running incarnation is stopped when the
// test ends.
func NewSyncerProc(t *testing.T, bin string, args []string) *SyncerProc {
	t.Helper()
	// Not t.TempDir: KeepLog (registered earlier, so run later) still reads it.
	dir, err := os.MkdirTemp("", "vc-syncer-kill-")
	if err != nil {
		t.Fatal(err)
	}
	p := &SyncerProc{bin: bin, args: args, LogPath: filepath.Join(dir, "vc-syncer.log")}
	f, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	p.log = f
	t.Cleanup(func() {
		p.Stop(t)
		f.Close()
	})
	return p
}

// SetBinary makes the next incarnations run bin (an upgrade or a rollback between two builds).
func (p *SyncerProc) SetBinary(bin string) { p.bin = bin }

// Start starts a new incarnation; the previous one must have exited.
func (p *SyncerProc) Start(t *testing.T) {
	t.Helper()
	p.n++
	fmt.Fprintf(p.log, "\n===== kill test: start #%d at %s =====\n", p.n, time.Now().Format(time.RFC3339Nano))
	p.cmd = exec.Command(p.bin, p.args...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	// The child dies with the test binary.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("failed to start vc-syncer: %v", err)
	}
	p.started = time.Now()
	done := make(chan error, 1)
	go func(c *exec.Cmd) { done <- c.Wait() }(p.cmd)
	p.done = done
}

// Started returns when the running (or last) incarnation was started.
func (p *SyncerProc) Started() time.Time { return p.started }

// Exited returns a non-nil error when the running incarnation has exited on its own.
func (p *SyncerProc) Exited() error {
	select {
	case err := <-p.done:
		p.done <- err
		return fmt.Errorf("vc-syncer #%d exited on its own: %w; log tail:\n%s", p.n, err, Tail(p.LogPath, 30))
	default:
		return nil
	}
}

// Kill SIGKILLs the running incarnation and waits for it; it returns how long it had run.
func (p *SyncerProc) Kill(t *testing.T) time.Duration {
	t.Helper()
	if err := p.Exited(); err != nil {
		t.Fatal(err)
	}
	up := time.Since(p.started)
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	exit := <-p.done // "signal: killed", as intended
	p.cmd = nil
	fmt.Fprintf(p.log, "\n===== kill test: SIGKILL #%d after %s (%v) =====\n", p.n, up.Round(time.Millisecond), exit)
	return up
}

// Signal sends sig (SIGSTOP, SIGCONT, ...) to the running incarnation.
func (p *SyncerProc) Signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %s to vc-syncer #%d: %v", sig, p.n, err)
	}
	fmt.Fprintf(p.log, "\n===== kill test: %s to #%d =====\n", sig, p.n)
}

// Stop stops the running incarnation (if any) with SIGTERM, then SIGKILL after 30 s.
func (p *SyncerProc) Stop(t *testing.T) {
	if p.cmd == nil {
		return
	}
	if err := p.Exited(); err != nil {
		t.Error(err)
		p.cmd = nil
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			t.Logf("vc-syncer stopped on SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("vc-syncer did not stop within 30s of SIGTERM; killing it")
		_ = p.cmd.Process.Kill()
		t.Logf("vc-syncer killed: %v", <-p.done)
	}
	p.cmd = nil
}

// KeepLog registers a cleanup that copies the syncer log to
// $VCSYNCER_TEST_ARTIFACTS/<test>/vc-syncer.log (default $TMPDIR/vc-syncer-test-logs/...) when
// the test failed, then removes the log's directory. Register it before framework.StartT,
// whose cleanup empties that directory.
func KeepLog(t *testing.T, logPath *string) { KeepLogAs(t, logPath, "vc-syncer.log") }

// KeepLogAs is KeepLog with the kept file's name (several syncers in one test).
func KeepLogAs(t *testing.T, logPath *string, name string) {
	t.Cleanup(func() {
		if *logPath == "" {
			return
		}
		defer os.RemoveAll(filepath.Dir(*logPath))
		if !t.Failed() {
			return
		}
		dest := filepath.Join(ArtifactsDir(t), name)
		data, err := os.ReadFile(*logPath)
		if err == nil {
			if err = os.MkdirAll(filepath.Dir(dest), 0o755); err == nil {
				err = os.WriteFile(dest, data, 0o644)
			}
		}
		if err != nil {
			t.Logf("failed to keep the vc-syncer log: %v", err)
		} else {
			t.Logf("vc-syncer log kept in %s", dest)
		}
	})
}
