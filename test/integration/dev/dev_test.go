package dev

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vcsyncer/syncer/pkg/localcluster"
)

const repoRoot = "../../.."

// processesUnder returns the pids of processes whose command line mentions dir (the dev
// environment's control planes all get paths under it).
func processesUnder(t *testing.T, dir string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(dir)) {
			if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(st), ") Z ") {
				continue // a zombie has already exited
			}
			pids = append(pids, pid)
		}
	}
	return pids
}

// startDev runs `sh -c script` (which starts dev with --dir dir) and waits until dev reports it
// is up. It returns the started command.
func startDev(t *testing.T, script, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = repoRoot
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the test's own process group is not signalled
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for _, pid := range processesUnder(t, dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	up, ended := make(chan struct{}), make(chan struct{})
	var log bytes.Buffer
	go func() { _ = cmd.Wait(); _ = pw.Close() }()
	go func() {
		defer close(ended)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "vc-syncer dev is up") {
				close(up)
			}
		}
	}()
	select {
	case <-up:
	case <-ended:
		t.Fatalf("vc-syncer dev exited before it was up:\n%s", log.String())
	case <-time.After(5 * time.Minute):
		t.Fatalf("vc-syncer dev did not come up:\n%s", log.String())
	}
	return cmd
}

// waitGone waits until no process mentions dir, and fails the test listing the ones left.
func waitGone(t *testing.T, dir string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		left := processesUnder(t, dir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var names []string
			for _, pid := range left {
				comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
				names = append(names, fmt.Sprintf("%d (%s)", pid, strings.TrimSpace(string(comm))))
			}
			t.Fatalf("still running %s after the stop: %s", within, strings.Join(names, ", "))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func devArgs(dir string) string {
	return "--tenants 1 --nodes 1 --metrics-bind-address 0 --health-probe-bind-address 0 --dir " + dir
}

// The pid hack/dev.sh was started with is vc-syncer dev itself: SIGINT to it stops everything.
func TestDevScriptStopsOnSIGINT(t *testing.T) {
	if _, err := localcluster.EnsureTools(context.Background(), func(s string) { t.Log(s) }); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := startDev(t, "exec ./hack/dev.sh "+devArgs(dir), dir)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitGone(t, dir, time.Minute)
}

// A dev whose parent is killed (SIGKILL: the parent cannot pass anything on) stops too, with
// every control plane it started.
func TestDevStopsWhenItsParentDies(t *testing.T) {
	if _, err := localcluster.EnsureTools(context.Background(), func(s string) { t.Log(s) }); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "vc-syncer")
	build := exec.Command("go", "build", "-o", bin, "./cmd/vc-syncer")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	// bash stays the parent: the command is not the last one of the script.
	cmd := startDev(t, bin+" dev "+devArgs(dir)+"; echo dev exited", dir)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, dir, time.Minute)
}
