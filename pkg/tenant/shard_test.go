package tenant

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// fakeRing is a Sharding with a fixed owner and a fixed set of live shards.
type fakeRing struct {
	me, owner string
	known     bool
	live      map[string]bool
}

func (f fakeRing) ID() string                                     { return f.me }
func (f fakeRing) Owner(string) (string, bool)                    { return f.owner, f.known }
func (f fakeRing) Live(shard string) bool                         { return f.live[shard] }
func (f *fakeHandover) Drain(context.Context, string, bool) error { f.drained++; return nil }
func (f *fakeHandover) SetClaimed(tenant string, claimed bool) {
	if f.claimed == nil {
		f.claimed = map[string]bool{}
	}
	f.claimed[tenant] = claimed
}
func (f *fakeHandover) Adopt(_ context.Context, _, _, from string, expired bool) {
	if expired {
		from += " (expired)"
	}
	f.adoptedFrom = append(f.adoptedFrom, from)
}

type fakeHandover struct {
	drained     int
	adoptedFrom []string
	claimed     map[string]bool
}

// TestShardClaims walks the claim rule: who may take a Tenant, from whose checkpoint, and who
// must wait.
func TestShardClaims(t *testing.T) {
	cases := []struct {
		name             string
		ring             fakeRing
		shard, lastShard string
		wantProceed      bool
		wantShard        string
		wantLastShard    string
		wantAdoptFrom    []string
		wantRequeue      bool
		wantClaimed      bool // what the fence was told last
	}{
		{name: "free, handed over by b", ring: fakeRing{me: "a", owner: "a", known: true}, lastShard: "b",
			wantProceed: true, wantShard: "a", wantLastShard: "b", wantAdoptFrom: []string{"b"}, wantClaimed: true},
		{name: "already mine", ring: fakeRing{me: "a", owner: "a", known: true}, shard: "a",
			wantProceed: true, wantShard: "a", wantClaimed: true},
		{name: "held by a live shard being drained", ring: fakeRing{me: "a", owner: "a", known: true, live: map[string]bool{"b": true}}, shard: "b",
			wantShard: "b", wantRequeue: true},
		{name: "held by a dead shard", ring: fakeRing{me: "a", owner: "a", known: true}, shard: "b", lastShard: "c",
			wantProceed: true, wantShard: "a", wantLastShard: "c", wantAdoptFrom: []string{"b (expired)"}, wantClaimed: true},
		{name: "mine, ring gives it to b: released", ring: fakeRing{me: "a", owner: "b", known: true, live: map[string]bool{"b": true}}, shard: "a",
			wantShard: "", wantLastShard: "a"},
		{name: "another shard's", ring: fakeRing{me: "a", owner: "b", known: true}, shard: "b",
			wantShard: "b"},
		{name: "ring unknown: nothing written", ring: fakeRing{me: "a"}, shard: "b",
			wantShard: "b", wantRequeue: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := tenancyv1alpha1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			tn := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "t1", UID: "uid-1"},
				Status: tenancyv1alpha1.TenantStatus{Shard: tc.shard, LastShard: tc.lastShard}}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tn).WithStatusSubresource(tn).Build()
			h := &fakeHandover{}
			r := &Reconciler{Client: c, Registry: NewRegistry(context.Background(), nopHooks{}), Recorder: record.NewFakeRecorder(10),
				Sharding: tc.ring, Handover: h}
			cur := &tenancyv1alpha1.Tenant{}
			if err := c.Get(t.Context(), client.ObjectKey{Name: "t1"}, cur); err != nil {
				t.Fatal(err)
			}
			proceed, res, err := r.shard(t.Context(), cur)
			if err != nil {
				t.Fatal(err)
			}
			if proceed != tc.wantProceed || (res.RequeueAfter > 0) != tc.wantRequeue {
				t.Errorf("proceed %v requeue %s, want %v requeue %v", proceed, res.RequeueAfter, tc.wantProceed, tc.wantRequeue)
			}
			got := &tenancyv1alpha1.Tenant{}
			if err := c.Get(t.Context(), client.ObjectKey{Name: "t1"}, got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Shard != tc.wantShard || got.Status.LastShard != tc.wantLastShard {
				t.Errorf("status shard %q lastShard %q, want %q %q", got.Status.Shard, got.Status.LastShard, tc.wantShard, tc.wantLastShard)
			}
			if len(h.adoptedFrom) != len(tc.wantAdoptFrom) || (len(h.adoptedFrom) > 0 && h.adoptedFrom[0] != tc.wantAdoptFrom[0]) {
				t.Errorf("adopted from %v, want %v", h.adoptedFrom, tc.wantAdoptFrom)
			}
			if h.claimed["t1"] != tc.wantClaimed {
				t.Errorf("fence told claimed=%v, want %v", h.claimed["t1"], tc.wantClaimed)
			}
		})
	}
}

// A claim written on a stale copy of the Tenant (another shard claimed it meanwhile) conflicts
// and is retried: the other shard's claim stands.
func TestShardClaimConflict(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := tenancyv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	tn := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "t1", UID: "uid-1"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tn).WithStatusSubresource(tn).Build()
	stale := &tenancyv1alpha1.Tenant{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: "t1"}, stale); err != nil {
		t.Fatal(err)
	}
	other := stale.DeepCopy()
	other.Status.Shard = "b"
	if err := c.Status().Update(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	h := &fakeHandover{}
	r := &Reconciler{Client: c, Registry: NewRegistry(context.Background(), nopHooks{}), Recorder: record.NewFakeRecorder(10),
		Sharding: fakeRing{me: "a", owner: "a", known: true}, Handover: h}
	proceed, res, err := r.shard(t.Context(), stale)
	if err != nil || proceed || res.RequeueAfter == 0 {
		t.Fatalf("claim on a stale copy: proceed %v requeue %s err %v, want a retry", proceed, res.RequeueAfter, err)
	}
	got := &tenancyv1alpha1.Tenant{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: "t1"}, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Shard != "b" || len(h.adoptedFrom) != 0 {
		t.Errorf("status.shard %q, adopted %v; want b's claim to stand and nothing adopted", got.Status.Shard, h.adoptedFrom)
	}
}
