package conformance_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// TestParitySmoke runs the conformance parity smoke and checks that every test of it passed
// on the super cluster (the harness works) and on the tenant (parity).
func TestParitySmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real control planes")
	}
	tools := localcluster.ToolsDir()
	for _, b := range []string{"e2e.test", "ginkgo"} {
		if _, err := os.Stat(filepath.Join(tools, "bin", b)); err != nil {
			t.Fatalf("%s missing in %s: build it with `make e2e-tools` (hack/build-tools.sh e2e, about 11 minutes once)", b, tools)
		}
	}
	out := t.TempDir()
	cmd := exec.CommandContext(t.Context(), "go", "run", "./test/bench", "conformance", "--smoke", "--procs", "4", "--timeout", "10m", "--out", out)
	cmd.Dir = itest.RepoRoot(t)
	log, err := os.Create(filepath.Join(out, "bench.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		keep(t, out)
		t.Fatalf("conformance smoke: %v (see %s)", err, log.Name())
	}
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Selected, SuperPassed, TenantPassed int
		OnlySuperPassed                     []struct{ Name, Reason string }
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	t.Logf("selected %d, super passed %d, tenant passed %d", res.Selected, res.SuperPassed, res.TenantPassed)
	if res.Selected < 12 || res.SuperPassed != res.Selected {
		keep(t, out)
		t.Errorf("the smoke selected %d tests and %d passed on the super cluster; want all of at least 12 (the harness or the super cluster is broken)", res.Selected, res.SuperPassed)
	}
	for _, f := range res.OnlySuperPassed {
		keep(t, out)
		t.Errorf("passed on the super cluster, failed on the tenant: %s: %s", f.Name, f.Reason)
	}
}

// keep copies the run's reports and logs to the test's artifacts directory once.
func keep(t *testing.T, dir string) {
	t.Helper()
	dst := itest.ArtifactsDir(t)
	if _, err := os.Stat(dst); err == nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Log(err)
		return
	}
	if out, err := exec.Command("cp", "-r", dir, dst).CombinedOutput(); err != nil {
		t.Logf("keeping %s: %v: %s", dir, err, out)
		return
	}
	t.Logf("reports and logs kept in %s", dst)
}
