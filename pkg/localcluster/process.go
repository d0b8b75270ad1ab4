package localcluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	// tailLines is how many log lines an error message quotes.
	tailLines = 30
	// stopTimeout is how long Stop waits after SIGTERM before it sends SIGKILL.
	stopTimeout = 15 * time.Second
	// healthPollInterval is the pause between two health probes.
	healthPollInterval = 50 * time.Millisecond
	// maxBindAttempts bounds the retries of a component whose port was taken between the
	// moment we picked it and the moment the component bound it.
	maxBindAttempts = 3
)

// process is one running control-plane component.
type process struct {
	name    string // component name, also the log file name: logs/<name>.log
	logPath string
	cmd     *exec.Cmd
	started time.Time
	ready   time.Duration // exec to healthy

	done    chan struct{} // closed when the process has exited and was reaped
	waitErr error         // set before done is closed

	stopMu   sync.Mutex
	stopping bool // set when Stop signalled it; an exit after that is expected
}

// startProcess execs bin with args; stdout and stderr go to logDir/<name>.log (appended, so
// that a retried start keeps the first attempt's output above a separator). The child gets
// its own process group and is SIGKILLed by the kernel if this process dies.
func startProcess(name, logDir, bin string, args []string) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("failed to open log of %s: %w", name, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		fmt.Fprintf(f, "\n===== restarting %s at %s =====\n", name, time.Now().Format(time.RFC3339Nano))
	}
	fmt.Fprintf(f, "+ %s %s\n", bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.Env = os.Environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("failed to start %s: %w", name, err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// pid returns the process id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// unexpectedExit returns an error if the process ended without being asked to.
func (p *process) unexpectedExit() error {
	p.stopMu.Lock()
	stopping := p.stopping
	p.stopMu.Unlock()
	if stopping || !p.exited() {
		return nil
	}
	return fmt.Errorf("%s (pid %d) exited unexpectedly: %w\n--- last lines of %s ---\n%s",
		p.name, p.pid(), p.waitErr, p.logPath, logTail(p.logPath))
}

// stop sends SIGTERM to the process group, waits up to timeout, then sends SIGKILL and waits
// for the process to be reaped. It is safe to call more than once and on an exited process.
func (p *process) stop(timeout time.Duration) error {
	p.stopMu.Lock()
	first := !p.stopping
	p.stopping = true
	p.stopMu.Unlock()
	if !first || p.exited() {
		<-p.done
		return nil
	}
	pgid := p.pid()
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("failed to send SIGTERM to %s (pid %d): %w", p.name, pgid, err)
	}
	select {
	case <-p.done:
	case <-time.After(timeout):
		if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("failed to send SIGKILL to %s (pid %d): %w", p.name, pgid, err)
		}
		<-p.done
	}
	// Reap stragglers of the group (none expected: components do not fork).
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return nil
}

// kill stops the process right away (SIGKILL); used to clean up a failed start.
func (p *process) kill() { _ = p.stop(0) }

// probe reports whether a component is healthy; a non-nil error is kept as the last reason.
type probe func(ctx context.Context) error

// httpProbe returns a probe that GETs url and wants status 200 (and, if want is not empty, a
// body containing want). tlsConfig may be nil for plain HTTP.
func httpProbe(url string, tlsConfig *tls.Config, want string) probe {
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true, Proxy: nil},
	}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(body))
		}
		if want != "" && !bytes.Contains(body, []byte(want)) {
			return fmt.Errorf("GET %s: body %q does not contain %q", url, bytes.TrimSpace(body), want)
		}
		return nil
	}
}

// errBindConflict marks a start that failed because a port was taken; the caller retries
// with new ports.
var errBindConflict = errors.New("address already in use")

// waitHealthy polls check until it succeeds, the process exits, timeout elapses or ctx ends.
// On success it records the start-up duration. On failure the error carries the last probe
// error and the tail of the component's log; it wraps errBindConflict when the log says a
// port was already taken.
func (p *process) waitHealthy(ctx context.Context, timeout time.Duration, check probe) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(healthPollInterval)
	defer tick.Stop()
	var last error
	for {
		last = check(ctx)
		if last == nil {
			p.ready = time.Since(p.started)
			return nil
		}
		select {
		case <-p.done:
			tail := logTail(p.logPath)
			err := fmt.Errorf("%s exited before becoming healthy: %w", p.name, p.waitErr)
			if strings.Contains(tail, "address already in use") {
				err = fmt.Errorf("%w: %w", err, errBindConflict)
			}
			return fmt.Errorf("%w\n--- last lines of %s ---\n%s", err, p.logPath, tail)
		case <-ctx.Done():
			if strings.Contains(logTail(p.logPath), "address already in use") {
				last = fmt.Errorf("%w (%w)", last, errBindConflict)
			}
			return fmt.Errorf("%s not healthy after %s (%w): last probe: %w\n--- last lines of %s ---\n%s",
				p.name, time.Since(p.started).Round(time.Millisecond), context.Cause(ctx), last, p.logPath, logTail(p.logPath))
		case <-tick.C:
		}
	}
}

// logTail returns the last tailLines lines of the component log at path (LogTail).
func logTail(path string) string { return LogTail(path, tailLines) }

// LogTail returns the last n lines of the file at path, reading at most its last 64 KiB, or a
// sentence naming the read error: the end of a process's log, for error messages.
func LogTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer f.Close()
	const maxRead = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > maxRead {
		_, _ = f.Seek(st.Size()-maxRead, io.SeekStart)
	}
	data, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
