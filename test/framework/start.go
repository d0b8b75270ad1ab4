package framework

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/vcsyncer/syncer/pkg/localcluster"
)

// StartT starts a localcluster.Environment for a test or benchmark (see localcluster.Start) under a directory from
// t.TempDir() (unless o.Dir is set), with progress lines going to t.Logf, and registers a
// t.Cleanup that stops it. If the test failed, the cleanup then copies every component log
// to $VCSYNCER_TEST_ARTIFACTS/<test name>/<control plane>/ (default
// os.TempDir()/vc-syncer-test-logs/...) and logs where they are.
//
// StartT never builds tools: if some are missing it calls t.Fatal with a message telling to
// run `make tools`, or t.Skip when VCSYNCER_SKIP_IF_NO_TOOLS is set. A start failure is
// fatal too. Start-up is bounded by 10 minutes. Under `go test -short` it skips the test
// (t.Skip) before starting anything.
func StartT(t testing.TB, o localcluster.SuperOptions, tenants int) *localcluster.Environment {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real control planes (skipped with -short)")
	}
	if o.ToolsDir == "" {
		o.ToolsDir = localcluster.ToolsDir()
	}
	if err := localcluster.CheckTools(o.ToolsDir); err != nil {
		if os.Getenv("VCSYNCER_SKIP_IF_NO_TOOLS") != "" {
			t.Skipf("skipping (VCSYNCER_SKIP_IF_NO_TOOLS is set): %v", err)
		}
		t.Fatal(err)
	}
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	if o.Progress == nil {
		o.Progress = func(s string) { t.Logf("%s", s) }
	}
	var env *localcluster.Environment
	t.Cleanup(func() {
		if env != nil {
			if err := env.Stop(); err != nil {
				t.Errorf("failed to stop test environment: %v", err)
			}
		}
		if t.Failed() {
			if dest, err := keepLogs(o.Dir, t.Name()); err != nil {
				t.Logf("failed to keep control-plane logs of %s: %v", o.Dir, err)
			} else {
				t.Logf("control-plane logs of the failed test kept in %s", dest)
			}
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	var err error
	if env, err = localcluster.Start(ctx, o, tenants); err != nil {
		t.Fatal(err)
	}
	return env
}

var unsafePathChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// keepLogs copies dir/<control plane>/logs/*.log to the artifacts directory of the test and
// returns that directory.
func keepLogs(dir, testName string) (string, error) {
	base := os.Getenv("VCSYNCER_TEST_ARTIFACTS")
	if base == "" {
		base = filepath.Join(os.TempDir(), "vc-syncer-test-logs")
	}
	dest := filepath.Join(base, unsafePathChars.ReplaceAllString(testName, "_"))
	logs, err := filepath.Glob(filepath.Join(dir, "*", "logs", "*.log"))
	if err != nil {
		return "", err
	}
	if len(logs) == 0 {
		return "", fmt.Errorf("no logs found under %s", dir)
	}
	// Only each control plane's directory is replaced: the test's own cleanups may already have
	// kept other artifacts (a syncer's logs) beside them.
	cleared := map[string]bool{}
	for _, src := range logs {
		plane := filepath.Base(filepath.Dir(filepath.Dir(src)))
		if !cleared[plane] {
			if err := os.RemoveAll(filepath.Join(dest, plane)); err != nil {
				return "", err
			}
			cleared[plane] = true
		}
		if err := copyFile(src, filepath.Join(dest, plane, filepath.Base(src))); err != nil {
			return "", err
		}
	}
	return dest, nil
}

// copyFile copies src to dst, creating dst's directory.
func copyFile(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
