package tenant

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// TestLagWriter: each tick writes a registered Tenant's lag only when it changed by a
// meaningful amount (at least 5 s and a quarter of the written value; below 5 s counts as 0),
// and clears it once for a Tenant the syncer does not run; one patch per Tenant per tick at
// most.
func TestLagWriter(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := tenancyv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	a := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	b := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "b"}}
	writes := map[string]int{}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(a, b).WithStatusSubresource(a, b).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			writes[obj.GetName()]++
			return cl.SubResource(sub).Patch(ctx, obj, p, opts...)
		}}).Build()
	lags := map[string]Lag{}
	w := &LagWriter{Client: c, Source: func() map[string]Lag { return lags }}
	get := func(name string) tenancyv1alpha1.TenantStatus {
		t.Helper()
		tn := &tenancyv1alpha1.Tenant{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: name}, tn); err != nil {
			t.Fatal(err)
		}
		return tn.Status
	}
	val := func(p *int64) int64 {
		if p == nil {
			return -1
		}
		return *p
	}
	steps := []struct {
		down, up    time.Duration
		want        int64 // status.lagSeconds after the tick (-1: absent)
		wantDown    int64
		wantWrites  int
		registeredA bool
	}{
		{down: 0, up: 0, want: 0, wantDown: 0, wantWrites: 1, registeredA: true},                                 // first value
		{down: 0, up: 0, want: 0, wantDown: 0, wantWrites: 1, registeredA: true},                                 // unchanged
		{down: 3 * time.Second, want: 0, wantDown: 0, wantWrites: 1, registeredA: true},                          // below 5 s
		{down: 12 * time.Second, want: 12, wantDown: 12, wantWrites: 2, registeredA: true},                       // meaningful
		{down: 14 * time.Second, want: 12, wantDown: 12, wantWrites: 2, registeredA: true},                       // +2 s: not
		{down: 14 * time.Second, up: 40 * time.Second, want: 40, wantDown: 14, wantWrites: 3, registeredA: true}, // upward grew: both current values written
		{down: 14 * time.Second, up: 48 * time.Second, want: 40, wantDown: 14, wantWrites: 3, registeredA: true}, // +8 s < 10 s (a quarter)
		{down: 2 * time.Second, up: 1 * time.Second, want: 0, wantDown: 0, wantWrites: 4, registeredA: true},     // caught up
		{want: -1, wantDown: -1, wantWrites: 5},                                                                  // not run: cleared
		{want: -1, wantDown: -1, wantWrites: 5},                                                                  // once
	}
	for i, st := range steps {
		delete(lags, "a")
		if st.registeredA {
			lags["a"] = Lag{Downward: st.down, Upward: st.up}
		}
		w.tick(context.Background())
		s := get("a")
		if val(s.LagSeconds) != st.want || val(s.DownwardLagSeconds) != st.wantDown || writes["a"] != st.wantWrites {
			t.Fatalf("step %d (down %v, up %v): lagSeconds %d, downward %d, %d writes; want %d, %d, %d writes",
				i, st.down, st.up, val(s.LagSeconds), val(s.DownwardLagSeconds), writes["a"], st.want, st.wantDown, st.wantWrites)
		}
	}
	if writes["b"] != 0 {
		t.Errorf("tenant b (never run, no lag written) was patched %d times", writes["b"])
	}
}

// TestLagWriterShard: with sharding, a replica writes the lag of the Tenants its shard holds
// only; the lag another shard wrote is neither cleared nor overwritten.
func TestLagWriterShard(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := tenancyv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	seven := int64(7)
	mine := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "mine"}, Status: tenancyv1alpha1.TenantStatus{Shard: "a"}}
	theirs := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "theirs"},
		Status: tenancyv1alpha1.TenantStatus{Shard: "b", LagSeconds: &seven, DownwardLagSeconds: &seven, UpwardLagSeconds: &seven}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(mine, theirs).WithStatusSubresource(mine, theirs).Build()
	w := &LagWriter{Client: c, Shard: "a", Source: func() map[string]Lag { return map[string]Lag{"mine": {Downward: 20 * time.Second}} }}
	w.tick(context.Background())
	got := func(name string) *int64 {
		tn := &tenancyv1alpha1.Tenant{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: name}, tn); err != nil {
			t.Fatal(err)
		}
		return tn.Status.LagSeconds
	}
	if l := got("mine"); l == nil || *l != 20 {
		t.Errorf("own tenant's lag %v, want 20", l)
	}
	if l := got("theirs"); l == nil || *l != 7 {
		t.Errorf("another shard's tenant's lag %v, want its 7 left alone", l)
	}
}
