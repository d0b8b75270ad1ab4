package sharding_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/sharding"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

const (
	tenantCount = 6
	configMaps  = 20
	pods        = 2
	// leaseDuration is --shard-lease-duration: a killed shard's tenants move after it.
	leaseDuration = 6 * time.Second
	userAgent     = "vc-syncer/shard="
)

// shards are the replicas' ids; with them and tenant-1..tenant-6 the ring of the first two
// gives shard-0 four tenants and shard-1 two, and adding shard-2 moves three of shard-0's to it.
var shards = []string{"shard-0", "shard-1", "shard-2"}

type replica struct {
	id   string
	port int
	p    *itest.SyncerProc
}

// registered returns the tenants registered in the replica: those with queue figures
// (vcsyncer_queue_depth has a series for each registered tenant, and none for others).
func (r *replica) registered(t *testing.T) []string {
	seen := map[string]bool{}
	for labels := range itest.ScrapeSeries(t, r.port, "vcsyncer_queue_depth", nil) {
		if m := tenantLabel.FindStringSubmatch(labels); m != nil {
			seen[m[1]] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

var tenantLabel = regexp.MustCompile(`tenant="([^"]*)"`)

// auditedSuper writes, in dir, the audit policy the overlap check reads (the replicas' claims
// with their bodies, every write's metadata) and returns the super apiserver's audit flags
// and the audit log's path.
func auditedSuper(t *testing.T, dir string) (args []string, auditLog string) {
	t.Helper()
	auditLog = filepath.Join(dir, "audit.log")
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Request
  verbs: ["patch", "update"]
  resources: [{group: tenancy.vcsyncer.io, resources: ["tenants/status"]}]
- level: Metadata
  verbs: ["create", "update", "patch", "delete"]
- level: None
`), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + auditLog, "--audit-log-maxsize=0"}, auditLog
}

// newReplica returns (not started) the replica id of binary bin, checkpointing to a file in
// dir that every replica shares.
func newReplica(t *testing.T, env *localcluster.Environment, bin, id, dir string) *replica {
	r := &replica{id: id, port: itest.FreePort(t)}
	r.p = itest.NewSyncerProc(t, bin, []string{"run", "--super-kubeconfig", env.Super.KubeconfigPath,
		"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(r.port), "--metrics-secure=false", "--health-probe-bind-address", "0",
		"--sharding", "--shard-id", id, "--shard-lease-duration", leaseDuration.String(), "--shard-lease-renew-interval", "2s",
		"--checkpoint-store", "file:" + filepath.Join(dir, "ckpt"), "--checkpoint-interval", "2s",
		"--remediation-interval", "0"})
	return r
}

// waitOnRing waits until every tenant is Running on the replica of live that the ring of
// live's ids gives it, and registered there only; it fails the test when a replica exited.
func waitOnRing(t *testing.T, c client.Client, env *localcluster.Environment, live []*replica) {
	t.Helper()
	ids := make([]string, len(live))
	for i, r := range live {
		ids[i] = r.id
	}
	ring := sharding.NewRing(ids, 0)
	itest.Eventually(t, 3*time.Minute, fmt.Sprintf("every tenant Running on the shard the ring %v gives it, and registered there only", ids), func(ctx context.Context) error {
		for _, r := range live {
			if err := r.p.Exited(); err != nil {
				t.Fatal(err)
			}
		}
		want := map[string][]string{}
		for _, tc := range env.Tenants {
			tn := &tenancyv1alpha1.Tenant{}
			if err := c.Get(ctx, client.ObjectKey{Name: tc.Name}, tn); err != nil {
				return err
			}
			owner := ring.Owner(tc.Name)
			if tn.Status.Shard != owner || tn.Status.Phase != tenancyv1alpha1.TenantRunning {
				return fmt.Errorf("tenant %s: shard %q phase %q, want %s Running", tc.Name, tn.Status.Shard, tn.Status.Phase, owner)
			}
			want[owner] = append(want[owner], tc.Name)
		}
		for _, r := range live {
			got := r.registered(t)
			sort.Strings(want[r.id])
			if !slices.Equal(got, want[r.id]) {
				return fmt.Errorf("shard %s syncs %v, want %v", r.id, got, want[r.id])
			}
		}
		return nil
	})
}

func TestSharding(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real control planes")
	}
	dir := t.TempDir()
	auditArgs, auditLog := auditedSuper(t, dir)
	logs := make([]string, len(shards))
	for i := range shards {
		itest.KeepLogAs(t, &logs[i], "vc-syncer-"+shards[i]+".log")
	}
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 2, SuperAPIServerArgs: auditArgs}, tenantCount)
	bin := itest.BuildSyncer(t)
	ctx := t.Context()
	replicas := make([]*replica, len(shards))
	for i, id := range shards {
		replicas[i] = newReplica(t, env, bin, id, dir)
		logs[i] = replicas[i].p.LogPath
	}
	replicas[0].p.Start(t)
	replicas[1].p.Start(t)
	c := itest.RegisterTenants(t, env)
	running := func(live []*replica) {
		t.Helper()
		waitOnRing(t, c, env, live)
	}
	// scoped checks that each live replica's super caches hold the super objects of the tenants
	// it syncs, and no other tenant's: per kind, its vcsyncer_super_cache_objects equals the
	// count of those tenants' super objects on the apiserver.
	scoped := func(live []*replica) {
		t.Helper()
		itest.Eventually(t, time.Minute, "each replica's super caches hold its own tenants' objects only", func(ctx context.Context) error {
			for _, r := range live {
				var uids []string
				for _, name := range r.registered(t) {
					uids = append(uids, itest.TenantUID(t, c, name))
				}
				sel := conversion.LabelManagedBy + "=" + conversion.ManagedByValue
				if len(uids) > 0 {
					sel += "," + conversion.LabelTenantUID + " in (" + strings.Join(uids, ",") + ")"
				} else {
					sel += "," + conversion.LabelTenantUID + " in (none)"
				}
				cms, err := env.Super.Client.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: sel})
				if err != nil {
					return err
				}
				nss, err := env.Super.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: sel})
				if err != nil {
					return err
				}
				pods, err := env.Super.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: sel})
				if err != nil {
					return err
				}
				for kind, want := range map[string]int{"ConfigMap": len(cms.Items), "Namespace": len(nss.Items), "Pod": len(pods.Items)} {
					got := itest.ScrapeSum(t, r.port, "vcsyncer_super_cache_objects", map[string]string{"kind": kind})
					if int(got) != want {
						return fmt.Errorf("shard %s caches %.0f super %ss, want %d (those of its tenants %v)", r.id, got, kind, want, r.registered(t))
					}
				}
				if got := itest.ScrapeSum(t, r.port, "vcsyncer_super_cache_scope_tenants", nil); int(got) != len(uids) {
					return fmt.Errorf("shard %s: scope of %.0f tenants, want %d", r.id, got, len(uids))
				}
			}
			return nil
		})
	}
	running(replicas[:2])

	// Every tenant's objects, synced by its shard.
	populate(t, env)
	converged := func(what string) {
		t.Helper()
		waitConverged(t, c, env, what)
	}
	converged("every tenant's ConfigMaps and Running Pods in the super cluster, exactly")
	// A periodic checkpoint on each replica, taken after the convergence, with everything acked.
	checkpointed := func(live []*replica) {
		t.Helper()
		since := time.Now()
		for _, r := range live {
			itest.WaitCheckpoint(t, r.port, since, time.Minute)
		}
	}
	scoped(replicas[:2])
	checkpointed(replicas[:2])

	holders := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, tc := range env.Tenants {
			tn := &tenancyv1alpha1.Tenant{}
			if err := c.Get(ctx, client.ObjectKey{Name: tc.Name}, tn); err != nil {
				t.Fatal(err)
			}
			out[tc.Name] = tn.Status.Shard
		}
		return out
	}
	// checkResumed checks that the moved tenants were adopted from checkpoints on their new
	// shards (not started cold) and that the reconciles there since, over all moved tenants
	// and not counting kind skip (changes made while no shard held them), are at most 5% of
	// their objects.
	checkResumed := func(moved map[string]string, live []*replica, skip string) {
		t.Helper()
		checkpointed(live) // stragglers in the queues show in the counters: every queue found empty
		byID := map[string]*replica{}
		for _, r := range live {
			byID[r.id] = r
		}
		total, objects := 0.0, 0
		for name, to := range moved {
			series := itest.ScrapeSeries(t, byID[to].port, "vcsyncer_sync_duration_seconds", map[string]string{"tenant": name})
			n := 0.0
			for labels, v := range series {
				if !strings.Contains(labels, `kind="`+skip+`"`) {
					n += v
				}
			}
			o := tenantObjects(t, env, name)
			total, objects = total+n, objects+o
			t.Logf("tenant %s on %s after the move: %.0f reconciles for its %d objects (not counting %s); by kind %v", name, to, n, o, skip, series)
		}
		if total > 0.05*float64(objects) {
			t.Errorf("%.0f reconciles after the move of %d tenants, want at most 5%% of their %d objects", total, len(moved), objects)
		}
		for _, r := range live {
			want := 0
			for _, to := range moved {
				if to == r.id {
					want++
				}
			}
			if got := itest.ScrapeSum(t, r.port, "vcsyncer_shard_handovers_total", map[string]string{"result": "adopted"}); int(got) < want {
				t.Errorf("shard %s adopted %.0f tenants from checkpoints, want at least %d", r.id, got, want)
			}
		}
	}
	before := holders()
	// The counter the checks read covers a cold sync: at least one reconcile per object.
	cold := 0.0
	for _, r := range replicas[:2] {
		cold += itest.ScrapeSum(t, r.port, "vcsyncer_sync_duration_seconds", map[string]string{"tenant": "tenant-1"})
	}
	if objects := tenantObjects(t, env, "tenant-1"); cold < float64(objects) {
		t.Fatalf("tenant-1's cold sync ran %.0f reconciles, fewer than its %d objects: the counter is not what this test reads", cold, objects)
	}

	// Scale 2 → 3.
	replicas[2].p.Start(t)
	running(replicas)
	after := holders()
	moved := map[string]string{}
	for name, h := range after {
		if h != before[name] {
			moved[name] = h
		}
	}
	t.Logf("scale 2 → 3: %d of %d tenants moved: %v", len(moved), tenantCount, moved)
	if len(moved) == 0 || len(moved) == tenantCount {
		t.Fatalf("scale 2 → 3 moved %d of %d tenants; want some, not all", len(moved), tenantCount)
	}
	checkResumed(moved, replicas, "")
	converged("objects still exact after the scale-up")
	scoped(replicas) // the moved tenants' objects left their old shards' caches

	// SIGKILL the replica with the most tenants.
	counts := map[string]int{}
	for _, h := range after {
		counts[h]++
	}
	victim := replicas[0]
	for _, r := range replicas {
		if counts[r.id] > counts[victim.id] {
			victim = r
		}
	}
	var survivors []*replica
	for _, r := range replicas {
		if r != victim {
			survivors = append(survivors, r)
		}
	}
	// A change the victim syncs and checkpoints before it dies: nothing to redo after the move.
	for _, tc := range env.Tenants {
		if after[tc.Name] == victim.id {
			itest.Created(t)(tc.Client.CoreV1().ConfigMaps("app").Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "before-kill", Labels: map[string]string{"sharding-test": "1"}}}, metav1.CreateOptions{}))
		}
	}
	converged("the ConfigMaps created before the kill synced")
	checkpointed([]*replica{victim}) // a periodic checkpoint with them, acked
	killed := time.Now()
	victim.p.Kill(t)
	// Changes while no shard holds the victim's tenants: the survivor that takes each must
	// sync them (Secrets, so that the reconciles they cost are told apart below).
	var orphaned []*localcluster.ControlPlane
	for _, tc := range env.Tenants {
		if after[tc.Name] == victim.id {
			orphaned = append(orphaned, tc)
			itest.Created(t)(tc.Client.CoreV1().Secrets("app").Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: "during-gap"}, StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{}))
		}
	}
	ids := []string{survivors[0].id, survivors[1].id}
	ring := sharding.NewRing(ids, 0)
	deadline := killed.Add(leaseDuration + 2*time.Second)
	var synced time.Time
	for synced.IsZero() && time.Now().Before(killed.Add(2*time.Minute)) {
		all := true
		for _, tc := range env.Tenants {
			tn := &tenancyv1alpha1.Tenant{}
			if err := c.Get(ctx, client.ObjectKey{Name: tc.Name}, tn); err != nil || tn.Status.Shard != ring.Owner(tc.Name) || tn.Status.Phase != tenancyv1alpha1.TenantRunning {
				all = false
				break
			}
		}
		if all {
			synced = time.Now()
		} else {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if synced.IsZero() {
		t.Fatalf("the killed shard %s's tenants not Running on the survivors within 2 minutes", victim.id)
	}
	t.Logf("SIGKILL of %s (%d tenants): synced again by the survivors after %s (Lease duration %s)", victim.id, counts[victim.id],
		synced.Sub(killed).Round(10*time.Millisecond), leaseDuration)
	if synced.After(deadline) {
		t.Errorf("the killed shard's tenants were synced again %s after the kill, want within the Lease duration plus 2 s (%s)",
			synced.Sub(killed).Round(10*time.Millisecond), leaseDuration+2*time.Second)
	}
	running(survivors)
	final := holders()
	movedAgain := map[string]string{}
	for name, h := range final {
		if h != after[name] {
			movedAgain[name] = h
		}
	}
	checkResumed(movedAgain, survivors, "Secret")
	converged("objects exact after the kill")
	scoped(survivors)
	itest.Eventually(t, time.Minute, "the Secrets created while no shard held their tenants synced", func(ctx context.Context) error {
		for _, tc := range orphaned {
			ns := conversion.SuperNamespace(tc.Name, itest.TenantUID(t, c, tc.Name), "app")
			if _, err := env.Super.Client.CoreV1().Secrets(ns).Get(ctx, "during-gap", metav1.GetOptions{}); err != nil {
				return fmt.Errorf("tenant %s: %w", tc.Name, err)
			}
		}
		return nil
	})

	// A replica frozen longer than its Lease (SIGSTOP: a stalled node, a long GC pause) loses
	// its tenants to the other; when it runs again it must not write for them (the fence) and
	// takes them back only through the hand-over. The audit-log check below sees any overlap.
	frozen, other := survivors[0], survivors[1]
	if counts := holders(); countOf(counts, frozen.id) == 0 {
		frozen, other = other, frozen
	}
	frozenTenants := holders()
	frozen.p.Signal(t, syscall.SIGSTOP)
	// Changes the frozen replica's informers deliver when it runs again: writes it must not make.
	for _, tc := range env.Tenants {
		if frozenTenants[tc.Name] == frozen.id {
			if err := tc.Client.CoreV1().ConfigMaps("app").Delete(ctx, "cm-0", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			itest.Created(t)(tc.Client.CoreV1().ConfigMaps("app").Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "while-frozen", Labels: map[string]string{"sharding-test": "1"}}}, metav1.CreateOptions{}))
		}
	}
	itest.Eventually(t, time.Minute, "the frozen replica's tenants Running on the other", func(ctx context.Context) error {
		for _, tc := range env.Tenants {
			tn := &tenancyv1alpha1.Tenant{}
			if err := c.Get(ctx, client.ObjectKey{Name: tc.Name}, tn); err != nil {
				return err
			}
			if tn.Status.Shard != other.id || tn.Status.Phase != tenancyv1alpha1.TenantRunning {
				return fmt.Errorf("tenant %s: shard %q phase %q", tc.Name, tn.Status.Shard, tn.Status.Phase)
			}
		}
		return nil
	})
	frozen.p.Signal(t, syscall.SIGCONT)
	running(survivors)
	converged("objects exact after the frozen replica came back")

	// No tenant's super objects were written by a replica that did not hold it: in the super
	// apiserver's audit log, every write (or attempt) of a replica to a tenant's super
	// namespaces completed while that replica's claim of the tenant (its status.shard patch)
	// stood, between the claim and the next release or claim.
	writes, violations := auditOverlaps(t, auditLog, c, env)
	for _, v := range violations {
		t.Error(v)
	}
	t.Logf("audit log: %d writes of the replicas to tenants' super namespaces, %d outside their writer's claim", writes, len(violations))
	evs, err := env.Super.Client.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "reason=ShardAssigned"})
	if err != nil {
		t.Fatal(err)
	}
	claimed := map[string]bool{}
	for _, ev := range evs.Items {
		claimed[ev.InvolvedObject.Name] = true
	}
	if len(claimed) != tenantCount {
		t.Errorf("ShardAssigned Events for %d tenants, want %d: %v", len(claimed), tenantCount, claimed)
	}
}

// populate creates, in every tenant of env, namespace app with configMaps ConfigMaps
// (labelled sharding-test) and pods Pods.
func populate(t *testing.T, env *localcluster.Environment) {
	t.Helper()
	ctx := t.Context()
	for _, tc := range env.Tenants {
		itest.MustCreateNS(t, tc.Client, "app")
		for i := range configMaps {
			itest.Created(t)(tc.Client.CoreV1().ConfigMaps("app").Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"sharding-test": "1"}},
				Data:       map[string]string{"v": "1"}}, metav1.CreateOptions{}))
		}
		for i := range pods {
			itest.Created(t)(tc.Client.CoreV1().Pods("app").Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i)},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}}}, metav1.CreateOptions{}))
		}
	}
}

// waitConverged waits (3 minutes at most) until every tenant's objects have exactly their
// super copies (sameObjects); what names the moment in the failure.
func waitConverged(t *testing.T, c client.Client, env *localcluster.Environment, what string) {
	t.Helper()
	itest.Eventually(t, 3*time.Minute, what, func(ctx context.Context) error {
		for _, tc := range env.Tenants {
			if err := sameObjects(ctx, c, env, tc); err != nil {
				return err
			}
		}
		return nil
	})
}

// countOf returns how many tenants holders gives shard.
func countOf(holders map[string]string, shard string) int {
	n := 0
	for _, h := range holders {
		if h == shard {
			n++
		}
	}
	return n
}

// tenantObjects counts the objects of tenant name of the kinds the syncer syncs.
func tenantObjects(t *testing.T, env *localcluster.Environment, name string) int {
	t.Helper()
	var cs kubernetes.Interface
	for _, tc := range env.Tenants {
		if tc.Name == name {
			cs = tc.Client
		}
	}
	ctx := t.Context()
	n := 0
	add := func(l int, err error) {
		if err != nil {
			t.Fatal(err)
		}
		n += l
	}
	l1, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	add(len(l1.Items), err)
	l2, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	add(len(l2.Items), err)
	l3, err := cs.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
	add(len(l3.Items), err)
	l4, err := cs.CoreV1().ServiceAccounts("").List(ctx, metav1.ListOptions{})
	add(len(l4.Items), err)
	l5, err := cs.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	add(len(l5.Items), err)
	l6, err := cs.CoreV1().Endpoints("").List(ctx, metav1.ListOptions{})
	add(len(l6.Items), err)
	l7, err := cs.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
	add(len(l7.Items), err)
	l8, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	add(len(l8.Items), err)
	l9, err := cs.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{})
	add(len(l9.Items), err)
	return n
}

// sameObjects checks that tenant tc's labelled ConfigMaps in "app" are exactly those of its
// super namespace, and that its Pods are Running in the tenant with one super Pod each.
func sameObjects(ctx context.Context, c client.Client, env *localcluster.Environment, tc *localcluster.ControlPlane) error {
	tn := &tenancyv1alpha1.Tenant{}
	if err := c.Get(ctx, client.ObjectKey{Name: tc.Name}, tn); err != nil {
		return err
	}
	superNS := conversion.SuperNamespace(tc.Name, string(tn.UID), "app")
	names := func(l *corev1.ConfigMapList) []string {
		var out []string
		for _, cm := range l.Items {
			out = append(out, cm.Name)
		}
		sort.Strings(out)
		return out
	}
	tl, err := tc.Client.CoreV1().ConfigMaps("app").List(ctx, metav1.ListOptions{LabelSelector: "sharding-test"})
	if err != nil {
		return err
	}
	sl, err := env.Super.Client.CoreV1().ConfigMaps(superNS).List(ctx, metav1.ListOptions{LabelSelector: "sharding-test"})
	if err != nil {
		return err
	}
	if a, b := names(tl), names(sl); !slices.Equal(a, b) {
		return fmt.Errorf("tenant %s: ConfigMaps %v in the tenant, %v in the super cluster", tc.Name, a, b)
	}
	tp, err := tc.Client.CoreV1().Pods("app").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	sp, err := env.Super.Client.CoreV1().Pods(superNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	if len(tp.Items) != pods || len(sp.Items) != pods {
		return fmt.Errorf("tenant %s: %d Pods in the tenant, %d in the super cluster, want %d", tc.Name, len(tp.Items), len(sp.Items), pods)
	}
	for _, p := range tp.Items {
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("tenant %s: Pod %s is %q", tc.Name, p.Name, p.Status.Phase)
		}
	}
	return nil
}

// auditOverlaps reads the super apiserver's audit log and returns how many writes the syncer
// replicas (told apart by the shard in their user agent) made to tenants' super namespaces and
// the objects in them, and one message for each such write that completed while its replica
// did not hold the tenant. Holding is read from the same log: a replica's patch of the
// Tenant's status that sets status.shard to itself claims it; one that empties status.shard,
// or another replica's claim, ends the claim.
func auditOverlaps(t *testing.T, path string, c client.Client, env *localcluster.Environment) (int, []string) {
	t.Helper()
	prefixes := map[string]string{}
	for _, tc := range env.Tenants {
		tn := &tenancyv1alpha1.Tenant{}
		if err := c.Get(t.Context(), client.ObjectKey{Name: tc.Name}, tn); err != nil {
			t.Fatal(err)
		}
		prefixes[tc.Name] = tn.Status.SuperNamespacePrefix
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer f.Close()
	type event struct {
		at     time.Time
		shard  string
		holder *string // a claim (the shard) or release ("") of the tenant; nil for a write
		what   string
	}
	byTenant := map[string][]event{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	writes := 0
	for sc.Scan() {
		var ev struct {
			UserAgent string `json:"userAgent"`
			Verb      string `json:"verb"`
			ObjectRef *struct {
				Resource, Namespace, Name, Subresource string
			} `json:"objectRef"`
			ResponseStatus *struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
			RequestObject  json.RawMessage  `json:"requestObject"`
			StageTimestamp metav1.MicroTime `json:"stageTimestamp"`
			Stage          string           `json:"stage"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.ObjectRef == nil || ev.Stage != "ResponseComplete" {
			continue
		}
		shard, ok := strings.CutPrefix(ev.UserAgent, userAgent)
		if !ok {
			continue
		}
		if i := strings.IndexAny(shard, " /"); i >= 0 {
			shard = shard[:i]
		}
		ref := ev.ObjectRef
		if ref.Resource == "tenants" && ref.Subresource == "status" {
			var patch struct {
				Status map[string]json.RawMessage `json:"status"`
			}
			raw := map[string]json.RawMessage{}
			if json.Unmarshal(ev.RequestObject, &patch) == nil && patch.Status != nil {
				raw = patch.Status
			}
			v, found := raw["shard"]
			if !found || ev.ResponseStatus == nil || ev.ResponseStatus.Code/100 != 2 {
				continue
			}
			var h string
			_ = json.Unmarshal(v, &h) // null: released
			byTenant[ref.Name] = append(byTenant[ref.Name], event{at: ev.StageTimestamp.Time, shard: shard, holder: &h})
			continue
		}
		ns := ref.Namespace
		if ref.Resource == "namespaces" {
			ns = ref.Name
		}
		for name, prefix := range prefixes {
			if prefix != "" && strings.HasPrefix(ns, prefix) {
				byTenant[name] = append(byTenant[name], event{at: ev.StageTimestamp.Time, shard: shard,
					what: fmt.Sprintf("%s %s %s/%s", ev.Verb, ref.Resource, ns, ref.Name)})
				writes++
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if writes == 0 {
		t.Fatal("no write of a syncer replica to a tenant's super namespaces in the audit log: the check would pass vacuously")
	}
	var out []string
	for name, evs := range byTenant {
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].at.Before(evs[j].at) })
		holder := ""
		claims := 0
		for _, e := range evs {
			switch {
			case e.holder != nil:
				holder = *e.holder
				if holder != "" {
					claims++
				}
			case e.shard != holder:
				out = append(out, fmt.Sprintf("tenant %s: %s by %s at %s while %q held it", name, e.what, e.shard,
					e.at.Format("15:04:05.000000"), holder))
			}
		}
		if claims == 0 {
			t.Errorf("tenant %s: no claim in the audit log (is the Tenant status audited at level Request?)", name)
		}
	}
	return writes, out
}
