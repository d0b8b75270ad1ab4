package tenant

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
)

// countingClient is a fake tenant clientset whose ConfigMap lists return one item and
// *remaining more (as an apiserver answers ?limit=1), whose Pod lists are forbidden, and which
// counts the lists it answers.
func countingClient(remaining *atomic.Int64, lists *atomic.Int64) *fake.Clientset {
	cs := fake.NewClientset()
	cs.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		lists.Add(1)
		if l, ok := a.(k8stesting.ListActionImpl); !ok || l.ListOptions.Limit != 1 {
			return true, nil, apierrors.NewBadRequest("the count must ask for one item")
		}
		switch a.GetResource().Resource {
		case "configmaps":
			n := remaining.Load()
			return true, &corev1.ConfigMapList{ListMeta: metav1.ListMeta{RemainingItemCount: &n, Continue: "more"},
				Items: []corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Name: "one"}}}}, nil
		case "pods":
			return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "", nil)
		}
		return false, nil, nil
	})
	return cs
}

// TestCountObjects: one LIST ?limit=1 per kind, the items plus remainingItemCount; a kind the
// syncer may not list is skipped; the count stops at the first kind that takes it over the
// limit.
func TestCountObjects(t *testing.T) {
	var remaining, lists atomic.Int64
	remaining.Store(999)
	cs := countingClient(&remaining, &lists)
	n, err := CountObjects(context.Background(), cs, -1, nil)
	if err != nil || n != 1000 {
		t.Fatalf("CountObjects = %d, %v; want 1000", n, err)
	}
	if got := lists.Load(); got != int64(len(HeldKinds)) {
		t.Errorf("%d lists for %d kinds", got, len(HeldKinds))
	}
	lists.Store(0)
	if n, err := CountObjects(context.Background(), cs, 10, nil); err != nil || n <= 10 || lists.Load() != 1 {
		t.Errorf("CountObjects(limit 10) = %d, %v after %d lists; want over 10 after the first kind (ConfigMaps)", n, err, lists.Load())
	}
}

// A kind whose informer will be answered from a checkpoint is counted from it, without a
// LIST: a resume within the watch window lists nothing.
func TestCountObjectsFromCheckpoint(t *testing.T) {
	var remaining, lists atomic.Int64
	remaining.Store(999)
	cs := countingClient(&remaining, &lists)
	restored := func(kind string) (int64, bool) {
		if kind == "ConfigMap" || kind == "Secret" {
			return 7, true
		}
		return 0, false
	}
	n, err := CountObjects(context.Background(), cs, -1, restored)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lists.Load(), int64(len(HeldKinds)-2); got != want {
		t.Errorf("%d lists, want %d (none for the two restored kinds)", got, want)
	}
	if n < 14 {
		t.Errorf("count %d, want the 14 restored objects counted", n)
	}
	lists.Store(0)
	if n, _ := CountObjects(context.Background(), cs, 10, restored); n <= 10 || lists.Load() != 0 {
		t.Errorf("CountObjects(limit 10) = %d after %d lists; want over 10 from the checkpoint alone", n, lists.Load())
	}
}

func limitsPolicy(maxObjects int32) *policy.Effective {
	return policy.Resolve(&tenancyv1alpha1.TenantPolicySpec{}, &tenancyv1alpha1.TenantPolicySpec{
		Limits: &tenancyv1alpha1.LimitsPolicy{MaxCachedObjects: &maxObjects}})
}

// TestSuspendedUntilWithinObjectBound: a Cluster whose tenant has more objects than
// limits.maxCachedObjects does not start its informers: it is Suspended (with the count and
// the cap), counts again only after its backoff or a policy change (never in a loop), and
// resumes once the tenant has few enough.
func TestSuspendedUntilWithinObjectBound(t *testing.T) {
	saved := suspendBackoff
	suspendBackoff.Duration, suspendBackoff.Cap = time.Hour, time.Hour // only a policy change recounts
	t.Cleanup(func() { suspendBackoff = saved })

	var remaining, lists atomic.Int64
	remaining.Store(999)
	c := &Cluster{Name: "t", Client: countingClient(&remaining, &lists), recount: make(chan struct{}, 1)}
	c.SetPolicy(limitsPolicy(500))
	done := make(chan bool, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { done <- c.waitWithinObjectBound(ctx) }()
	waitFor(t, "the Cluster suspended", func() bool { return c.State().Suspended })
	if s := c.State(); s.Objects <= 500 || s.ObjectLimit != 500 {
		t.Fatalf("suspended state %+v, want objects over 500 and the cap 500", s)
	}
	before := lists.Load()
	// The tenant deletes objects: nothing is counted until the backoff ends (an hour)...
	remaining.Store(99)
	select {
	case <-done:
		t.Fatal("resumed without a count")
	case <-time.After(200 * time.Millisecond):
	}
	if lists.Load() != before {
		t.Fatalf("%d lists while waiting for the backoff", lists.Load()-before)
	}
	// ...or the policy changes.
	c.SetPolicy(limitsPolicy(400))
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("waitWithinObjectBound returned false")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not resumed after a policy change with 100 objects under a cap of 400")
	}
	if s := c.State(); s.Suspended {
		t.Errorf("state %+v after resuming", s)
	}
}

// TestOverflowedClusterStartsSuspended: a Cluster replacing one whose caches overflowed waits
// its delay (Suspended, with the overflowed count) before counting; the delays per tenant
// double up to the cap and start over when the tenant is removed.
func TestOverflowedClusterStartsSuspended(t *testing.T) {
	var remaining, lists atomic.Int64
	c := &Cluster{Name: "t", Client: countingClient(&remaining, &lists), recount: make(chan struct{}, 1),
		suspend: suspension{delay: time.Hour, objects: 1234}}
	c.SetPolicy(limitsPolicy(1000))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool, 1)
	go func() { done <- c.waitWithinObjectBound(ctx) }()
	waitFor(t, "the Cluster suspended", func() bool { return c.State().Suspended })
	if s := c.State(); s.Objects != 1234 || lists.Load() != 0 {
		t.Errorf("state %+v after %d lists; want the overflowed count 1234 and no list yet", s, lists.Load())
	}
	cancel()
	if ok := <-done; ok {
		t.Error("waitWithinObjectBound returned true after its context ended")
	}

	r := &Registry{}
	var got []time.Duration
	for range 7 {
		got = append(got, r.nextSuspendDelay("a"))
	}
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 10 * time.Minute, 10 * time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delays %v, want %v", got, want)
		}
	}
	r.clusters = map[string]*Cluster{}
	r.remove("a")
	if d := r.nextSuspendDelay("a"); d != 30*time.Second {
		t.Errorf("delay after the tenant was removed = %s, want 30s", d)
	}
}

// waitFor polls cond every 10 ms for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
