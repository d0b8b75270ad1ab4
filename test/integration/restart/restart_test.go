package restart_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/chaos"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

func envInt(name string, def int64) int64 {
	if v, err := strconv.ParseInt(os.Getenv(name), 10, 64); err == nil {
		return v
	}
	return def
}

func TestKillRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real control planes")
	}
	begin := time.Now()
	seed := envInt("VCSYNCER_KILL_SEED", time.Now().UnixNano())
	kills := int(envInt("VCSYNCER_KILL_COUNT", 12))
	t.Logf("seed %d (rerun with VCSYNCER_KILL_SEED=%d), %d kills", seed, seed, kills)
	rng := rand.New(rand.NewSource(seed))

	var logPath string
	itest.KeepLog(t, &logPath)
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 2}, 3)
	bin := itest.BuildSyncer(t)
	args := []string{"run", "--super-kubeconfig", env.Super.KubeconfigPath,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--zap-log-level", "debug",
		// One replica: a killed leader's Lease would otherwise make every restart wait for its
		// expiry (leader failover is test/integration/incluster's subject).
		"--leader-elect=false",
		// No remediation scans: convergence must come from the restarts themselves (initial
		// lists or a resumed checkpoint), not from a scan repairing what a restart lost.
		"--remediation-interval", "0"}
	supported := supportsCheckpoints(t, bin)
	checkpoints := supported && os.Getenv("VCSYNCER_KILL_CHECKPOINT") != "off"
	switch {
	case checkpoints:
		args = append(args, "--checkpoint-store", "file:"+filepath.Join(t.TempDir(), "ckpt"), "--checkpoint-interval", "2s")
	case supported:
		args = append(args, "--checkpoint-store", "none") // the default would be a Secret store
	}
	t.Logf("checkpointing: %t; vc-syncer %s", checkpoints, strings.Join(args, " "))
	p := itest.NewSyncerProc(t, bin, args)
	logPath = p.LogPath
	p.Start(t)

	ctx := t.Context()
	c := itest.RegisterTenants(t, env)
	var tenants []tenantRef
	watches := make([]*readyWatch, len(env.Tenants))
	for i, tc := range env.Tenants {
		if err := wait(ctx, 2*time.Minute, func(ctx context.Context) bool {
			if err := p.Exited(); err != nil {
				t.Fatal(err)
			}
			tn := &tenancyv1alpha1.Tenant{}
			return c.Get(ctx, client.ObjectKey{Name: tc.Name}, tn) == nil && tn.Status.Phase == tenancyv1alpha1.TenantRunning
		}); err != nil {
			t.Fatalf("Tenant %s not Running: %v", tc.Name, err)
		}
		tenants = append(tenants, tenantRef{name: tc.Name, uid: itest.TenantUID(t, c, tc.Name), cs: tc.Client})
		for _, ns := range stableNamespaces {
			itest.MustCreateNS(t, tc.Client, ns)
		}
		watches[i] = &readyWatch{tenant: tc.Name}
		watches[i].start(ctx, tc.Client)
	}

	// The load: one goroutine per tenant, each with its own seeded generator.
	stats := &chaos.LoadStats{}
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	var wg sync.WaitGroup
	for i, tn := range tenants {
		l := chaos.NewLoad(tn.cs, uint64(seed)+uint64(i)+1, loadPeriod, stats)
		wg.Go(func() { l.Run(loadCtx) })
	}
	time.Sleep(5 * time.Second) // the first Pods become Ready before the first kill

	// Kill at a random uptime in [0.5 s, 9 s), stay down [0, 2 s), restart.
	readyAtKills := 0
	var lastKill time.Time
	for k := 1; k <= kills; k++ {
		uptime := 500*time.Millisecond + time.Duration(rng.Int63n(int64(8500*time.Millisecond)))
		down := time.Duration(rng.Int63n(int64(2 * time.Second)))
		time.Sleep(time.Until(p.Started().Add(uptime)))
		ready := 0
		for _, w := range watches {
			ready += len(w.readyNow())
		}
		readyAtKills += ready
		up := p.Kill(t)
		lastKill = time.Now()
		t.Logf("kill %d/%d: SIGKILL after %s up (%d test Pods Ready), down %s; load so far: %s",
			k, kills, up.Round(time.Millisecond), ready, down.Round(time.Millisecond), stats)
		time.Sleep(down)
		p.Start(t)
	}
	time.Sleep(3 * time.Second) // some load against the last incarnation
	stopLoad()
	wg.Wait()
	t.Logf("load stopped after %s: %s", time.Since(begin).Round(time.Second), stats)
	if stats.Creates.Load() == 0 || stats.Updates.Load() == 0 || stats.Deletes.Load() == 0 {
		t.Fatalf("the load did not create, update and delete (%s); errors: %v", stats, stats.FirstErrors())
	}
	if n := stats.Errors.Load(); n > 0 {
		t.Logf("%d load calls failed (expected a few: Namespace terminating, races), first ones: %v", n, stats.FirstErrors())
	}

	// Convergence.
	converged := time.Now()
	var problems []string
	err := wait(ctx, 3*time.Minute, func(ctx context.Context) bool {
		if err := p.Exited(); err != nil {
			t.Fatal(err)
		}
		problems = nil
		for _, tn := range tenants {
			problems = append(problems, checkTenant(ctx, env.Super.Client, tn)...)
		}
		return len(problems) == 0
	})
	if err != nil {
		for _, w := range watches {
			_, violations := w.snapshot()
			for _, v := range violations {
				t.Errorf("Ready condition flipped: %s", v)
			}
		}
		if len(problems) > 40 {
			problems = append(problems[:40], fmt.Sprintf("... and %d more", len(problems)-40))
		}
		t.Fatalf("not converged %s after the load stopped:\n%s", time.Since(converged).Round(time.Second), strings.Join(problems, "\n"))
	}
	t.Logf("converged %s after the load stopped", time.Since(converged).Round(100*time.Millisecond))

	// Ready conditions survived: no watched flip, and for every Pod that was Ready before the
	// last kill and still exists, the Ready lastTransitionTime is the one first seen.
	survivors := 0
	for i, w := range watches {
		first, violations := w.snapshot()
		for _, v := range violations {
			t.Errorf("Ready condition flipped: %s", v)
		}
		now, names, err := podReady(ctx, tenants[i].cs)
		if err != nil {
			t.Fatal(err)
		}
		for uid, cond := range now {
			f, ok := first[uid]
			if !ok || !f.seen.Before(lastKill) {
				continue
			}
			survivors++
			if cond == nil || !cond.LastTransitionTime.Equal(&f.ltt) {
				t.Errorf("Pod %s was Ready since %s before a kill, now Ready is %+v", names[uid], f.ltt.UTC().Format(time.RFC3339), cond)
			}
		}
	}
	if readyAtKills == 0 || survivors == 0 {
		t.Fatalf("the Ready check tested nothing: %d Pods Ready summed over the kills, %d Pods Ready before the last kill still exist", readyAtKills, survivors)
	}
	p.Stop(t)
	checkTheChecker(t, env.Super.Client, tenants[0])
	t.Logf("%d kills (seed %d, checkpointing %t): converged; %d Pods were Ready before the last kill and kept their Ready condition; %d Ready Pods summed over the kill moments; total %s",
		kills, seed, checkpoints, survivors, readyAtKills, time.Since(begin).Round(time.Second))
}

// wait calls cond every second until it returns true or timeout passes (then an error).
func wait(ctx context.Context, timeout time.Duration, cond func(context.Context) bool) error {
	deadline := time.Now().Add(timeout)
	for {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		ok := cond(cctx)
		cancel()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// checkTheChecker shows that checkTenant can fail, with the syncer stopped (it would repair
// both at once): a super ConfigMap stamped as the copy of a tenant object that does not exist,
// and a real super copy with changed data, must both be reported.
func checkTheChecker(t *testing.T, super kubernetes.Interface, tn tenantRef) {
	t.Helper()
	ctx := t.Context()
	sns := conversion.SuperNamespace(tn.name, tn.uid, stableNamespaces[0])
	ghost := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ghost", Namespace: sns, Labels: map[string]string{labelTest: valueTest}}}
	conversion.Stamp(&ghost.ObjectMeta, conversion.Owner{Tenant: tn.name, TenantUID: tn.uid, Namespace: stableNamespaces[0], Name: "ghost", UID: "00000000-0000-0000-0000-000000000000"})
	if _, err := super.CoreV1().ConfigMaps(sns).Create(ctx, ghost, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms, err := super.CoreV1().ConfigMaps(sns).List(ctx, metav1.ListOptions{LabelSelector: labelTest + "=" + valueTest})
	if err != nil {
		t.Fatal(err)
	}
	var changed string
	for _, cm := range cms.Items {
		if cm.Name != "ghost" {
			cm.Data = map[string]string{"gen": "changed behind the syncer's back"}
			if _, err := super.CoreV1().ConfigMaps(sns).Update(ctx, &cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			changed = cm.Name
			break
		}
	}
	problems := checkTenant(ctx, super, tn)
	found := func(words ...string) bool {
		return slices.ContainsFunc(problems, func(p string) bool {
			for _, w := range words {
				if !strings.Contains(p, w) {
					return false
				}
			}
			return true
		})
	}
	if !found("/ghost", "left for deleted") {
		t.Errorf("the convergence check missed a leftover super ConfigMap: %v", problems)
	}
	if changed != "" && !found("/"+changed+" content", "behind the syncer") {
		t.Errorf("the convergence check missed the changed data of super ConfigMap %s: %v", changed, problems)
	}
	if changed == "" {
		t.Errorf("no super ConfigMap in %s to change", sns)
	}
}
