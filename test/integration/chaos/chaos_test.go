package chaos_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/chaos"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

const (
	tenants  = 2
	replicas = 2
)

// TestChaosSoak runs two short soaks on one environment: the fixed seed 1 and a random seed.
// A violated invariant fails the test with the seed, the violations and the fault log.
func TestChaosSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real control planes")
	}
	seconds := 45
	if v, err := strconv.Atoi(os.Getenv("VCSYNCER_CHAOS_SECONDS")); err == nil && v > 0 {
		seconds = v
	}
	random := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("VCSYNCER_CHAOS_SEED"), 10, 64); err == nil {
		random = v
	}
	t.Logf("seeds: 1 (fixed) and %d (random; rerun with VCSYNCER_CHAOS_SEED=%d)", random, random)
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 2}, tenants)
	bin := itest.BuildSyncer(t)
	out := t.TempDir()
	t.Cleanup(func() {
		// The replicas' logs and the fault logs of a failed run, beside the components' logs.
		if t.Failed() {
			dst := filepath.Join(itest.ArtifactsDir(t), "replicas")
			// os.CopyFS does not overwrite: an earlier failed run's copy goes first.
			if err := os.RemoveAll(dst); err != nil {
				t.Logf("keeping the replicas' logs: %v", err)
			} else if err := os.CopyFS(dst, os.DirFS(out)); err != nil {
				t.Logf("keeping the replicas' logs: %v", err)
			} else {
				t.Logf("replicas' logs and fault logs kept in %s", dst)
			}
		}
	})
	h, err := chaos.Start(t.Context(), env, bin, chaos.Options{Replicas: replicas, Out: out, OpsPerSecond: 2,
		SettleTimeout: 90 * time.Second, QuietWindow: 10 * time.Second, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Stop()
	failed := false
	for _, seed := range []uint64{1, random} {
		// A tenant apiserver down for long is kept down 20-25 s here (CI time).
		faults := chaos.Schedule(seed, chaos.ScheduleOptions{Duration: time.Duration(seconds) * time.Second, Tenants: tenants, Replicas: replicas,
			LongHoldMax: 25 * time.Second})
		logPath := filepath.Join(out, "faults-"+strconv.FormatUint(seed, 10)+".jsonl")
		res, err := h.Soak(t.Context(), seed, faults, logPath)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		t.Logf("seed %d: faults %v (%d found nothing), load %s, %d continuous checks, %d objects settled in p99 %.1fs",
			seed, res.Faults, res.FaultErrors, res.Load, res.ContinuousChecks, res.ObjectsChecked, res.SettleSecondsP99)
		if total := len(faults) - res.FaultErrors; total < len(faults)/2 {
			t.Errorf("seed %d: only %d of %d faults acted on something", seed, total, len(faults))
		}
		if res.ObjectsChecked == 0 {
			t.Errorf("seed %d: the settle check checked no tenant object", seed)
		}
		if len(res.Violations) > 0 {
			failed = true
			log, _ := os.ReadFile(logPath)
			for _, v := range res.Violations {
				t.Errorf("seed %d: %s", seed, v)
			}
			t.Errorf("seed %d: fault log %s (replay: go run ./test/bench chaos --replay <file>):\n%s", seed, logPath, log)
		}
	}
	checkTheChecker(t, h, env)
	if failed || t.Failed() {
		dest := itest.ArtifactsDir(t)
		_ = os.MkdirAll(dest, 0o755)
		logs, _ := filepath.Glob(filepath.Join(out, "*"))
		for _, l := range logs {
			if b, err := os.ReadFile(l); err == nil {
				_ = os.WriteFile(filepath.Join(dest, filepath.Base(l)), b, 0o644)
			}
		}
		t.Logf("syncer logs and fault logs kept in %s", dest)
	}
}

// checkTheChecker stops the replicas (they would repair it at once), edits the data of one
// super ConfigMap copy and checks that the settled invariants report it.
func checkTheChecker(t *testing.T, h *chaos.Harness, env *localcluster.Environment) {
	t.Helper()
	h.Stop()
	ctx := t.Context()
	cms, err := env.Super.Client.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: chaos.LabelLoad + "=" + chaos.ValueLoad})
	if err != nil || len(cms.Items) == 0 {
		t.Fatalf("no super ConfigMap copy to change (%v)", err)
	}
	cm := cms.Items[0]
	cm.Data = map[string]string{"gen": "changed behind the syncer's back"}
	if _, err := env.Super.Client.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, &cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	vs, err := h.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Invariant == chaos.InvOneCopy && strings.Contains(v.Message, cm.Namespace+"/"+cm.Name) && strings.Contains(v.Message, "behind the syncer") {
			return
		}
	}
	t.Errorf("the settled invariants missed the changed data of super ConfigMap %s/%s: %v", cm.Namespace, cm.Name, vs)
}
