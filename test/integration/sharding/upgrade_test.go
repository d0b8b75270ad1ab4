package sharding_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// tenantListed are the resources the syncer's informers list in a tenant; a hand-over through
// a checkpoint lists none of them.
var tenantListed = []string{"configmaps", "pods", "services", "serviceaccounts", "namespaces", "endpoints", "secrets"}

// TestRollingUpgrade upgrades two sharded replicas one at a time, as a StatefulSet's rolling
// update does (the highest ordinal first), from the earlier build (itest.EarlierSyncer: the
// first commit with the working tree's CheckpointSchema) to the working tree's: each replica is
// stopped gracefully (its tenants handed over through checkpoints to the other, of the other
// version) and started again as the new build with the same id (its tenants handed back). Across
// the upgrade no tenant apiserver serves a LIST of a listed kind, no hand-over starts cold, no
// checkpoint is discarded, the moved tenants reconcile at most 5% of their objects, no replica
// writes for a tenant it does not hold (the super apiserver's audit log), and the new build
// syncs what changes afterwards.
func TestRollingUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real control planes")
	}
	dir := t.TempDir()
	auditArgs, auditLog := auditedSuper(t, dir)
	logs := make([]string, 2)
	for i := range logs {
		itest.KeepLogAs(t, &logs[i], "vc-syncer-upgrade-"+shards[i]+".log")
	}
	from := itest.EarlierSyncer(t)
	to := itest.BuildSyncer(t)
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 2, SuperAPIServerArgs: auditArgs}, tenantCount)
	ctx := t.Context()
	replicas := []*replica{newReplica(t, env, from, shards[0], dir), newReplica(t, env, from, shards[1], dir)}
	for i, r := range replicas {
		logs[i] = r.p.LogPath
		r.p.Start(t)
	}
	c := itest.RegisterTenants(t, env)
	waitOnRing(t, c, env, replicas)
	populate(t, env)
	converged := func(what string) {
		t.Helper()
		waitConverged(t, c, env, what)
	}
	converged("every tenant's objects synced by the earlier build")
	// (Each graceful stop below writes the replica's final checkpoint: the hand-over's.)
	lists := func() map[string]float64 {
		out := map[string]float64{}
		for _, tc := range env.Tenants {
			byResource := itest.APIServerRequests(t, tc.Client, "LIST")
			for _, res := range tenantListed {
				out[tc.Name+" "+res] = byResource[res]
			}
		}
		return out
	}
	lists0 := lists()

	// The rolling update: shard-1, then shard-0.
	for _, i := range []int{1, 0} {
		r, other := replicas[i], replicas[1-i]
		r.p.Stop(t)
		waitOnRing(t, c, env, []*replica{other})
		r.p.SetBinary(to)
		r.p.Start(t)
		waitOnRing(t, c, env, replicas)
		t.Logf("%s upgraded: its tenants handed over to %s and back", r.id, other.id)
	}
	// Read before the checks below, which list the tenants' objects themselves.
	listsAfter := lists()
	converged("objects exact after the rolling upgrade")
	since := time.Now()
	for _, r := range replicas {
		itest.WaitCheckpoint(t, r.port, since, time.Minute) // every queue found empty: the counters are complete
	}

	for key, n := range listsAfter {
		if d := n - lists0[key]; d != 0 {
			t.Errorf("LIST %s during the rolling upgrade: %.0f, want 0 (hand-overs through checkpoints)", key, d)
		}
	}
	reconciles, objects := 0.0, 0
	for _, tc := range env.Tenants {
		for _, r := range replicas {
			reconciles += itest.ScrapeSum(t, r.port, "vcsyncer_sync_duration_seconds", map[string]string{"tenant": tc.Name})
		}
		objects += tenantObjects(t, env, tc.Name)
	}
	t.Logf("after the rolling upgrade: %.0f reconciles on the new processes for the tenants' %d objects", reconciles, objects)
	if reconciles > 0.05*float64(objects) {
		t.Errorf("%.0f reconciles after the rolling upgrade, want at most 5%% of the tenants' %d objects", reconciles, objects)
	}
	for _, r := range replicas {
		adopted := itest.ScrapeSum(t, r.port, "vcsyncer_shard_handovers_total", map[string]string{"result": "adopted"})
		cold := itest.ScrapeSum(t, r.port, "vcsyncer_shard_handovers_total", map[string]string{"result": "cold"})
		discarded := itest.ScrapeSum(t, r.port, "vcsyncer_checkpoint_discarded_total", nil)
		t.Logf("%s (new build): %.0f tenants adopted from checkpoints, %.0f cold, %.0f checkpoints discarded", r.id, adopted, cold, discarded)
		if adopted == 0 || cold != 0 || discarded != 0 {
			t.Errorf("%s after the upgrade: adopted %.0f, cold %.0f, discarded %.0f; want some adopted, none cold or discarded", r.id, adopted, cold, discarded)
		}
	}

	// The new build syncs what changes afterwards.
	for _, tc := range env.Tenants {
		itest.Created(t)(tc.Client.CoreV1().ConfigMaps("app").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "after-upgrade", Labels: map[string]string{"sharding-test": "1"}}}, metav1.CreateOptions{}))
	}
	converged("a ConfigMap created after the upgrade synced")
	// The counter read above is the one these reconciles raise (one per tenant at least).
	since = time.Now()
	for _, r := range replicas {
		itest.WaitCheckpoint(t, r.port, since, time.Minute)
	}
	later := 0.0
	for _, tc := range env.Tenants {
		for _, r := range replicas {
			later += itest.ScrapeSum(t, r.port, "vcsyncer_sync_duration_seconds", map[string]string{"tenant": tc.Name})
		}
	}
	if later-reconciles < tenantCount {
		t.Errorf("the ConfigMaps created after the upgrade raised vcsyncer_sync_duration_seconds by %.0f, want at least %d: the reconcile count above is not what this test reads", later-reconciles, tenantCount)
	}

	writes, violations := auditOverlaps(t, auditLog, c, env)
	for _, v := range violations {
		t.Error(v)
	}
	t.Logf("audit log: %d writes of the replicas to tenants' super namespaces, %d outside their writer's claim", writes, len(violations))
}
