package tenant

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// A count that fails keeps the tenant suspended (and says why) until a count succeeds: a
// tenant can make the syncer's count LIST fail on purpose (its own FlowSchema rejecting the
// syncer's list of the first kind counted) while it keeps a million objects of a later kind,
// which the informers would then list whole into the syncer's memory.
func TestObjectCountFailureKeepsTenantSuspended(t *testing.T) {
	saved, savedErr := suspendBackoff, countRetryBackoff
	suspendBackoff.Duration, suspendBackoff.Cap = time.Hour, time.Hour // only a policy change recounts
	countRetryBackoff.Duration, countRetryBackoff.Cap = time.Hour, time.Hour
	t.Cleanup(func() { suspendBackoff, countRetryBackoff = saved, savedErr })
	var reject atomic.Bool
	reject.Store(true)
	cs := fake.NewClientset()
	cs.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		switch a.GetResource().Resource {
		case "configmaps": // the first kind counted
			if reject.Load() {
				return true, nil, apierrors.NewTooManyRequests("rejected by the tenant's own flow schema", 0)
			}
		case "secrets":
			n := int64(1_000_000)
			if !reject.Load() {
				n = 0
			}
			return true, &corev1.SecretList{ListMeta: metav1.ListMeta{RemainingItemCount: &n}, Items: []corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Name: "s0"}}}}, nil
		}
		return false, nil, nil
	})
	c := &Cluster{Name: "t", Client: cs, recount: make(chan struct{}, 1)}
	c.SetPolicy(limitsPolicy(40000))
	done := make(chan bool, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { done <- c.waitWithinObjectBound(ctx) }()
	// Either the wait returns (the informers would start) or the Cluster reports the failed
	// count: no sleep decides which.
	waitFor(t, "the wait to return or the Cluster to report the failed count", func() bool {
		select {
		case ok := <-done:
			t.Fatalf("the tenant's informers may start after a failed count (%v, state %+v): a million Secrets would be listed whole", ok, c.State())
		default:
		}
		return c.State().CountError != ""
	})
	s := c.State()
	if !s.Suspended || !strings.Contains(s.CountError, "flow schema") {
		t.Fatalf("state %+v, want Suspended with the count's error", s)
	}
	if msg := suspendedMessage(s); !strings.Contains(msg, "count its objects (rejected by the tenant's own flow schema)") {
		t.Fatalf("suspended message %q does not say the count failed", msg)
	}
	// The count succeeds after a policy change: the tenant is watched.
	reject.Store(false)
	c.SetPolicy(limitsPolicy(40001))
	select {
	case ok := <-done:
		if !ok || c.State().Suspended || c.State().CountError != "" {
			t.Fatalf("after a successful count: %v, state %+v", ok, c.State())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not resumed after a successful count")
	}
}
