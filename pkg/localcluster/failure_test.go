package localcluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// requireTools skips or fails like StartT when the tools are missing, and returns ToolsDir().
func requireTools(t *testing.T) string {
	t.Helper()
	dir := ToolsDir()
	if missing := missingTools(dir); len(missing) > 0 {
		if os.Getenv("VCSYNCER_SKIP_IF_NO_TOOLS") != "" {
			t.Skip(missingToolsError(dir, missing))
		}
		t.Fatal(missingToolsError(dir, missing))
	}
	return dir
}

// fakeTools returns a tools dir that links to the real tools except for the given binaries,
// which are replaced by shell scripts.
func fakeTools(t *testing.T, real string, scripts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(real, kwokStagesFile), filepath.Join(dir, kwokStagesFile)); err != nil {
		t.Fatal(err)
	}
	for _, b := range toolBinaries {
		dst := filepath.Join(dir, "bin", b)
		var err error
		if script, ok := scripts[b]; ok {
			err = os.WriteFile(dst, []byte("#!/bin/sh\n"+script+"\n"), 0o755)
		} else {
			err = os.Symlink(filepath.Join(real, "bin", b), dst)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestStartFailure checks that a port conflict is retried, that a component failing to start
// yields an error quoting its log, and that everything started before is stopped.
func TestStartFailure(t *testing.T) {
	real := requireTools(t)
	marker := filepath.Join(t.TempDir(), "etcd-attempted")
	tools := fakeTools(t, real, map[string]string{
		// First attempt: pretend the port was taken; then run the real etcd.
		Etcd: fmt.Sprintf(`if [ ! -e %[1]s ]; then touch %[1]s; echo "listen tcp 127.0.0.1:1: bind: address already in use" >&2; exit 1; fi
echo $$ > %[1]s.pid
exec %[2]s "$@"`, marker, filepath.Join(real, "bin", Etcd)),
		KubeAPIServer: `echo "Error: unknown flag: --made-up-flag" >&2; exit 1`,
	})
	_, err := StartTenant(t.Context(), "broken", Options{Dir: t.TempDir(), ToolsDir: tools})
	if err == nil {
		t.Fatal("StartTenant succeeded with a broken kube-apiserver")
	}
	t.Logf("error: %v", err)
	for _, want := range []string{`control plane "broken"`, "kube-apiserver exited before becoming healthy", "unknown flag: --made-up-flag", "logs kept in"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q", want)
		}
	}
	data, err := os.ReadFile(marker + ".pid")
	if err != nil {
		t.Fatalf("etcd was not retried after the port conflict: %v", err)
	}
	var pid int
	if _, err := fmt.Sscan(string(data), &pid); err != nil {
		t.Fatal(err)
	}
	if alive(pid) {
		t.Errorf("etcd (pid %d) still alive after the failed start", pid)
	}
}

// TestStopReportsCrashedComponent checks that Stop reports a component that died on its own.
func TestStopReportsCrashedComponent(t *testing.T) {
	tools := requireTools(t)
	cp, err := StartTenant(t.Context(), "crash", Options{ToolsDir: tools, Progress: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	pids := cp.PIDs()
	var kcm *process
	for _, p := range cp.processes() {
		if p.pid() == pids[KubeControllerManager] {
			kcm = p
		}
	}
	if kcm == nil {
		t.Fatalf("no kube-controller-manager process among %v", pids)
	}
	if err := syscall.Kill(pids[KubeControllerManager], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select { // the control plane has seen it die
	case <-kcm.done:
	case <-time.After(30 * time.Second):
		t.Fatal("kube-controller-manager not reaped 30 s after SIGKILL")
	}
	err = cp.Stop()
	if err == nil || !strings.Contains(err.Error(), "kube-controller-manager") || !strings.Contains(err.Error(), "exited unexpectedly") {
		t.Fatalf("Stop() = %v, want an error about kube-controller-manager exiting unexpectedly", err)
	}
	for name, pid := range pids {
		if alive(pid) {
			t.Errorf("%s (pid %d) alive after Stop", name, pid)
		}
	}
	if _, err := os.Stat(cp.Dir); err != nil {
		t.Errorf("state dir removed although Stop failed: %v", err)
	}
	_ = os.RemoveAll(filepath.Dir(cp.Dir))
}

// TestNoLeakWhenParentDies starts a tenant in a child test process, SIGKILLs that process and
// checks that the kernel killed the components too (Pdeathsig).
func TestNoLeakWhenParentDies(t *testing.T) {
	if os.Getenv("VCSYNCER_LEAK_HELPER") != "" {
		cp, err := StartTenant(t.Context(), "orphan", Options{Dir: os.Getenv("VCSYNCER_LEAK_HELPER")})
		if err != nil {
			fmt.Println("ERROR", err)
			os.Exit(1)
		}
		data, _ := json.Marshal(cp.PIDs())
		fmt.Printf("PIDS %s\n", data)
		select {} // wait to be killed
	}
	requireTools(t)
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestNoLeakWhenParentDies$", "-test.count=1")
	cmd.Env = append(os.Environ(), "VCSYNCER_LEAK_HELPER="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var pids map[string]int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "PIDS "); ok {
			if err := json.Unmarshal([]byte(rest), &pids); err != nil {
				t.Fatal(err)
			}
			break
		}
		t.Logf("helper: %s", sc.Text())
	}
	if len(pids) != 3 {
		t.Fatalf("helper reported PIDs %v, want 3", pids)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	err = poll(t.Context(), 10*time.Second, func(context.Context) error {
		for name, pid := range pids {
			if alive(pid) {
				return fmt.Errorf("%s (pid %d) still alive", name, pid)
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("components outlived the killed test process: %v", err)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestRestartAPIServer checks that RestartAPIServer kills the kube-apiserver, starts it again
// on the same address with the same data (an object written before is read after through the
// same client), and that Stop counts neither the kill nor the new process as a crash.
func TestRestartAPIServer(t *testing.T) {
	tools := requireTools(t)
	ctx := t.Context()
	cp, err := StartTenant(ctx, "restart", Options{ToolsDir: tools, Progress: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before-restart"}}
	if _, err := cp.Client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := cp.PIDs()[KubeAPIServer]
	if err := cp.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	after := cp.PIDs()[KubeAPIServer]
	if after == before || alive(before) {
		t.Fatalf("kube-apiserver pid %d → %d (old alive: %t), want a new process", before, after, alive(before))
	}
	if _, err := cp.Client.CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("reading the ConfigMap written before the restart: %v", err)
	}
	if err := cp.Stop(); err != nil {
		t.Fatalf("Stop after a restart: %v", err)
	}
	if alive(after) {
		t.Errorf("restarted kube-apiserver (pid %d) alive after Stop", after)
	}
}

// TestStopStartAPIServer checks that StopAPIServer leaves the kube-apiserver down (a request
// fails) until StartAPIServer, which refuses to start a second one while it runs, and that
// Stop counts neither the kill nor the new process as a crash.
func TestStopStartAPIServer(t *testing.T) {
	tools := requireTools(t)
	ctx := t.Context()
	cp, err := StartTenant(ctx, "stopstart", Options{ToolsDir: tools, Progress: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	if err := cp.StartAPIServer(ctx); err == nil {
		t.Fatal("StartAPIServer while the kube-apiserver runs did not fail")
	}
	before := cp.PIDs()[KubeAPIServer]
	if err := cp.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	if alive(before) {
		t.Fatalf("kube-apiserver pid %d alive after StopAPIServer", before)
	}
	if _, err := cp.Client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err == nil {
		t.Fatal("a request succeeded while the kube-apiserver was stopped")
	}
	if err := cp.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	after := cp.PIDs()[KubeAPIServer]
	if _, err := cp.Client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("a request after StartAPIServer: %v", err)
	}
	if err := cp.Stop(); err != nil {
		t.Fatalf("Stop after a stop and a start: %v", err)
	}
	if alive(after) {
		t.Errorf("started kube-apiserver (pid %d) alive after Stop", after)
	}
}
