package remediation

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/configmap"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// scanStep mutates the caches, then the scanner scans once; want are the requests it must
// re-enqueue in that scan.
type scanStep struct {
	do   func(f *fixture, c *tenant.Cluster)
	want []recorded
}

func runSteps(t *testing.T, f *fixture, c *tenant.Cluster, steps []scanStep) []Result {
	t.Helper()
	var results []Result
	for i, st := range steps {
		if st.do != nil {
			st.do(f, c)
		}
		results = append(results, f.sc.Scan())
		got := f.q.take()
		if diff := cmp.Diff(st.want, got, cmp.AllowUnexported(recorded{})); diff != "" {
			t.Fatalf("scan %d: requeued (-want +got):\n%s", i+1, diff)
		}
	}
	return results
}

func TestScanConfirmsAndRequeues(t *testing.T) {
	p, cm := pod.Resource, configmap.Resource
	cases := map[string]struct {
		setup func(t *testing.T, f *fixture, c *tenant.Cluster)
		// change is applied before the second scan (nil: none).
		change      func(t *testing.T, f *fixture, c *tenant.Cluster)
		wantSecond  []recorded
		wantReasons map[resources.Mismatch]int // candidates of the first scan by reason
	}{
		"in sync: nothing": {
			setup: func(t *testing.T, f *fixture, c *tenant.Cluster) {
				tp, tc := tenantPod("web"), tenantConfigMap("cfg")
				mustAdd(t, f.tenantStore(c, p), tp)
				mustAdd(t, f.superStore(p), superPodOf(c, tp))
				mustAdd(t, f.tenantStore(c, cm), tc)
				mustAdd(t, f.superStore(cm), superConfigMapOf(c, tc))
			},
		},
		"missing in super: downward": {
			setup: func(t *testing.T, f *fixture, c *tenant.Cluster) {
				mustAdd(t, f.tenantStore(c, cm), tenantConfigMap("cfg"))
			},
			wantSecond:  []recorded{{req: resources.Request{Tenant: "t1", Kind: resources.KindConfigMap, Namespace: "app", Name: "cfg"}}},
			wantReasons: map[resources.Mismatch]int{resources.MismatchMissingInSuper: 1},
		},
		"orphan in super: downward": {
			setup: func(t *testing.T, f *fixture, c *tenant.Cluster) {
				mustAdd(t, f.superStore(p), superPodOf(c, tenantPod("gone")))
			},
			wantSecond:  []recorded{{req: resources.Request{Tenant: "t1", Kind: resources.KindPod, Namespace: "app", Name: "gone"}}},
			wantReasons: map[resources.Mismatch]int{resources.MismatchOrphanInSuper: 1},
		},
		"content differs: downward": {
			setup: func(t *testing.T, f *fixture, c *tenant.Cluster) {
				tc := tenantConfigMap("cfg")
				sc := superConfigMapOf(c, tc)
				sc.Data = map[string]string{"k": "edited in the super cluster"}
				mustAdd(t, f.tenantStore(c, cm), tc)
				mustAdd(t, f.superStore(cm), sc)
			},
			wantSecond:  []recorded{{req: resources.Request{Tenant: "t1", Kind: resources.KindConfigMap, Namespace: "app", Name: "cfg"}}},
			wantReasons: map[resources.Mismatch]int{resources.MismatchContentDiffers: 1},
		},
		"status differs: upward": {
			setup: func(t *testing.T, f *fixture, c *tenant.Cluster) {
				tp := tenantPod("web")
				sp := superPodOf(c, tp)
				sp.Status.Phase = corev1.PodSucceeded
				mustAdd(t, f.tenantStore(c, p), tp)
				mustAdd(t, f.superStore(p), sp)
			},
			wantSecond:  []recorded{{req: resources.Request{Tenant: "t1", Kind: resources.KindPod, Namespace: "app", Name: "web"}, upward: true}},
			wantReasons: map[resources.Mismatch]int{resources.MismatchStatusDiffers: 1},
		},
		"tenant object changed between scans: not confirmed": {
			setup: func(t *testing.T, f *fixture, c *tenant.Cluster) {
				mustAdd(t, f.tenantStore(c, cm), tenantConfigMap("cfg"))
			},
			change: func(t *testing.T, f *fixture, c *tenant.Cluster) {
				tc := tenantConfigMap("cfg")
				tc.ResourceVersion = "8" // the event path is at work
				mustAdd(t, f.tenantStore(c, cm), tc)
			},
			wantReasons: map[resources.Mismatch]int{resources.MismatchMissingInSuper: 1},
		},
		"super object at the mapped name not owned by the tenant: never reported": {
			setup: func(t *testing.T, f *fixture, c *tenant.Cluster) {
				tc := tenantConfigMap("cfg")
				sc := superConfigMapOf(c, tc)
				sc.Labels = nil // someone else's object
				sc.Data = nil
				mustAdd(t, f.tenantStore(c, cm), tc)
				mustAdd(t, f.superStore(cm), sc)
			},
		},
		"never-synced objects: not reported": {
			setup: func(t *testing.T, f *fixture, c *tenant.Cluster) {
				mustAdd(t, f.tenantStore(c, cm), tenantConfigMap(configmap.RootCAConfigMap))
				finished := tenantPod("done")
				finished.Status.Phase = corev1.PodSucceeded // ran, finished, super copy gone
				mustAdd(t, f.tenantStore(c, p), finished)
			},
		},
		"orphan already being deleted: not reported": {
			setup: func(t *testing.T, f *fixture, c *tenant.Cluster) {
				sp := superPodOf(c, tenantPod("gone"))
				now := metav1.Now()
				sp.DeletionTimestamp = &now
				mustAdd(t, f.superStore(p), sp)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			c := f.addTenant("t1", true, true)
			tc.setup(t, f, c)
			first := f.sc.Scan()
			if got := f.q.take(); len(got) != 0 {
				t.Fatalf("first scan requeued %v; a mismatch must be confirmed by a second scan", got)
			}
			gotReasons := map[resources.Mismatch]int{}
			for _, recs := range f.sc.states["t1"].records {
				for _, r := range recs {
					gotReasons[r.reason]++
				}
			}
			if len(tc.wantReasons) == 0 {
				tc.wantReasons = map[resources.Mismatch]int{}
			}
			if diff := cmp.Diff(tc.wantReasons, gotReasons); diff != "" {
				t.Errorf("first scan findings (-want +got):\n%s", diff)
			}
			wantCandidates := 0
			for _, n := range tc.wantReasons {
				wantCandidates += n
			}
			if first.Candidates != wantCandidates {
				t.Errorf("Candidates = %d, want %d", first.Candidates, wantCandidates)
			}
			if tc.change != nil {
				tc.change(t, f, c)
			}
			f.sc.Scan()
			if diff := cmp.Diff(tc.wantSecond, f.q.take(), cmp.AllowUnexported(recorded{})); diff != "" {
				t.Errorf("second scan requeued (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScanCountsOnceRequeuesWhileItLastsAndCountsTheFix(t *testing.T) {
	f := newFixture(t)
	c := f.addTenant("t1", true, true)
	cm := configmap.Resource
	tc := tenantConfigMap("cfg")
	want := []recorded{{req: req(c, resources.KindConfigMap, "cfg")}}
	res := runSteps(t, f, c, []scanStep{
		{do: func(f *fixture, c *tenant.Cluster) { mustAdd(t, f.tenantStore(c, cm), tc) }},
		{want: want},
		{want: want},
		{do: func(f *fixture, c *tenant.Cluster) { mustAdd(t, f.superStore(cm), superConfigMapOf(c, tc)) }},
		{},
	})
	if res[1].Mismatches != 1 || res[2].Mismatches != 0 || res[2].Requeued != 1 {
		t.Errorf("mismatches %d then %d (requeued %d); want 1 then 0 (requeued 1)", res[1].Mismatches, res[2].Mismatches, res[2].Requeued)
	}
	if res[3].Fixed != 1 || res[4].Fixed != 0 {
		t.Errorf("fixed %d then %d; want 1 then 0", res[3].Fixed, res[4].Fixed)
	}
	if len(f.sc.states["t1"].records) != 0 {
		t.Errorf("records left after the fix: %v", f.sc.states["t1"].records)
	}
}

// A super Pod created (and scheduled) for a tenant Pod that the scan's tenant view did not
// have yet must never be re-enqueued as an orphan: the next scan sees the tenant Pod.
func TestScanPodCreatedBetweenListsIsNotDeleted(t *testing.T) {
	f := newFixture(t)
	c := f.addTenant("t1", true, true)
	p := pod.Resource
	tp := tenantPod("new")
	runSteps(t, f, c, []scanStep{
		// The super Pod is in the super cache; the tenant cache has not caught up yet.
		{do: func(f *fixture, c *tenant.Cluster) { mustAdd(t, f.superStore(p), superPodOf(c, tp)) }},
		{do: func(f *fixture, c *tenant.Cluster) { mustAdd(t, f.tenantStore(c, p), tp) }},
		{},
	})
}

// A super object recreated between two scans (a new UID) is a new candidate.
func TestScanOrphanRecreatedIsNotConfirmed(t *testing.T) {
	f := newFixture(t)
	c := f.addTenant("t1", true, true)
	p := pod.Resource
	sp := superPodOf(c, tenantPod("gone"))
	runSteps(t, f, c, []scanStep{
		{do: func(f *fixture, c *tenant.Cluster) { mustAdd(t, f.superStore(p), sp) }},
		{do: func(f *fixture, c *tenant.Cluster) {
			mustAdd(t, f.superStore(p), sp) // same key
			sp2 := sp.DeepCopy()
			sp2.UID = types.UID("another")
			mustAdd(t, f.superStore(p), sp2)
		}},
		{want: []recorded{{req: req(c, resources.KindPod, "gone")}}},
	})
}

// A tenant that is not Synced (its list failed or has not finished) is skipped entirely: its
// super objects are never treated as orphans, however many scans run.
func TestScanSkipsTenantNotSynced(t *testing.T) {
	f := newFixture(t)
	f.sc.o.TenantReady = DefaultTenantReady // the real rule: the zero-state Cluster is not Synced
	c := f.addTenant("t1", true, false)
	mustAdd(t, f.superStore(pod.Resource), superPodOf(c, tenantPod("a")))
	mustAdd(t, f.superStore(configmap.Resource), superConfigMapOf(c, tenantConfigMap("b")))
	for i := range 3 {
		r := f.sc.Scan()
		if got := f.q.take(); len(got) != 0 {
			t.Fatalf("scan %d requeued %v for a tenant that is not synced", i+1, got)
		}
		if r.Skipped != 1 || r.Checked != 0 {
			t.Fatalf("scan %d: skipped %d checked %d; want 1, 0", i+1, r.Skipped, r.Checked)
		}
	}
}

// A tenant marked ready whose informers have not listed (e.g. a kind whose list fails) is
// skipped for those kinds: an empty, unsynced store is not an empty tenant.
func TestScanSkipsKindWhoseTenantCacheHasNotSynced(t *testing.T) {
	f := newFixture(t)
	c := f.addTenant("t1", true, false) // ready, but informers never started
	mustAdd(t, f.superStore(pod.Resource), superPodOf(c, tenantPod("a")))
	for i := range 3 {
		r := f.sc.Scan()
		if got := f.q.take(); len(got) != 0 {
			t.Fatalf("scan %d requeued %v from an unsynced cache", i+1, got)
		}
		if r.Skipped != len(kinds) {
			t.Fatalf("scan %d: skipped %d, want %d", i+1, r.Skipped, len(kinds))
		}
	}
}

// A scan in which the tenant could not be trusted breaks the confirmation chain.
func TestScanSkipBreaksConfirmation(t *testing.T) {
	f := newFixture(t)
	c := f.addTenant("t1", true, true)
	runSteps(t, f, c, []scanStep{
		{do: func(f *fixture, c *tenant.Cluster) {
			mustAdd(t, f.superStore(pod.Resource), superPodOf(c, tenantPod("gone")))
		}},
		{do: func(f *fixture, c *tenant.Cluster) { f.ready["t1"] = false }},
		{do: func(f *fixture, c *tenant.Cluster) { f.ready["t1"] = true }},
		{want: []recorded{{req: req(c, resources.KindPod, "gone")}}},
	})
}

// Tenants never see each other's objects: another tenant's super objects are not orphans of
// this one, and a tenant that is not ready keeps its objects even while others are scanned.
func TestScanIsolatesTenants(t *testing.T) {
	f := newFixture(t)
	a := f.addTenant("a", true, true)
	b := f.addTenant("b", false, true)
	p := pod.Resource
	tp := tenantPod("web")
	mustAdd(t, f.tenantStore(a, p), tp)
	mustAdd(t, f.superStore(p), superPodOf(a, tp))
	mustAdd(t, f.superStore(p), superPodOf(b, tenantPod("web"))) // b's own copy; b not ready
	for i := range 3 {
		f.sc.Scan()
		if got := f.q.take(); len(got) != 0 {
			t.Fatalf("scan %d requeued %v", i+1, got)
		}
	}
	f.ready["b"] = true
	f.sc.Scan()
	f.sc.Scan()
	got := f.q.take()
	want := []recorded{{req: req(b, resources.KindPod, "web")}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(recorded{})); diff != "" {
		t.Errorf("after b is ready (-want +got):\n%s", diff)
	}
}

// A removed tenant's state is dropped; a rotated Cluster (new caches) starts afresh.
func TestScanDropsStateOfRemovedAndRotatedTenants(t *testing.T) {
	f := newFixture(t)
	c := f.addTenant("t1", true, true)
	mustAdd(t, f.superStore(pod.Resource), superPodOf(c, tenantPod("gone")))
	f.sc.Scan()
	if f.sc.states["t1"] == nil {
		t.Fatal("no state after a scan with a candidate")
	}
	delete(f.tenants, "t1")
	f.sc.Scan()
	if _, ok := f.sc.states["t1"]; ok {
		t.Fatal("state of a removed tenant kept")
	}
	if f.sc.reported["t1"] {
		t.Fatal("a removed tenant is still listed as having metric series")
	}
	f.tenants["t1"] = c
	f.sc.Scan()
	rotated := &tenant.Cluster{Name: c.Name, UID: c.UID, Informers: c.Informers}
	f.tenants["t1"] = rotated
	f.sc.Scan()
	if got := f.q.take(); len(got) != 0 {
		t.Fatalf("requeued %v although the Cluster changed between the two scans", got)
	}
}

// A mismatch seen once before a restart is confirmed by the first scan after it (same objects,
// same resourceVersions), because the scanner's findings are checkpointed; without the
// checkpoint the new scanner would only see it for the first time.
func TestScanCheckpointCarriesFindingsAcrossRestart(t *testing.T) {
	f := newFixture(t)
	c := f.addTenant("t1", true, true)
	mustAdd(t, f.tenantStore(c, configmap.Resource), tenantConfigMap("cfg"))
	if res := f.sc.Scan(); res.Mismatches != 0 {
		t.Fatalf("first scan confirmed %d mismatches, want 0 (confirmation takes two scans)", res.Mismatches)
	}
	data, err := f.sc.Checkpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fresh := func() *Scanner {
		sc, err := New(f.sc.o)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	cold := fresh()
	if res := cold.Scan(); res.Mismatches != 0 {
		t.Fatalf("a scanner without the checkpoint confirmed %d mismatches on its first scan, want 0", res.Mismatches)
	}
	resumed := fresh()
	if err := resumed.Restore(context.Background(), data); err != nil {
		t.Fatal(err)
	}
	if res := resumed.Scan(); res.Mismatches != 1 {
		t.Errorf("first scan after a restore confirmed %d mismatches, want 1", res.Mismatches)
	}
}

// The scanner's checkpoint is the same bytes for the same findings (the checkpointer skips a
// checkpoint whose state it has written already, comparing bytes), whatever the order of the
// maps it is built from.
func TestScanCheckpointIsDeterministic(t *testing.T) {
	f := newFixture(t)
	c := f.addTenant("t1", true, true)
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		mustAdd(t, f.tenantStore(c, configmap.Resource), tenantConfigMap(n))
	}
	f.sc.Scan()
	first, err := f.sc.Checkpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(first), `"Name":"h"`) {
		t.Fatalf("checkpoint %s holds no findings; the test needs several", first)
	}
	for range 20 {
		again, err := f.sc.Checkpoint(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if string(again) != string(first) {
			t.Fatalf("the same findings gave two checkpoints:\n%s\n%s", first, again)
		}
	}
}
