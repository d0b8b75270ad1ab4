package firstlist

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// The tenant's ConfigMaps before the syncer watches it: fillCount of fillBytes each (under
// the object-size cap), about 100 MB.
const (
	fillCount = 250
	fillBytes = 400 * 1000
	// heapSlack is what the live heap may grow by beyond twice the tenant's
	// limits.maxCachedBytes (its cache and the super copies of what it holds).
	heapSlack = 24 << 20
)

// peakLiveHeap samples the live heap as of each garbage collection (runtime/metrics
// /gc/heap/live:bytes) every 10 ms until stop is closed, and returns the highest sample.
func peakLiveHeap(stop <-chan struct{}) func() uint64 {
	var mu sync.Mutex
	var peak uint64
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			metrics.Read(s)
			mu.Lock()
			peak = max(peak, s[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// TestFirstListIsStreamed: a tenant that holds 100 MB of ConfigMaps when the syncer first
// watches it is listed by a stream (client-go's watch-list: no LIST of ConfigMaps reaches the
// tenant apiserver but the object count's LIST ?limit=1), each object passing the informers' transform as it arrives, so the
// objects beyond limits.maxCachedBytes are stubs from the start and the syncer's live heap
// never holds the whole list: its peak growth stays within twice limits.maxCachedBytes plus
// heapSlack, as in the steady state.
func TestFirstListIsStreamed(t *testing.T) {
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 1}, 1)
	tc := env.Tenants[0]
	ctx := context.Background()
	itest.MustCreateNS(t, tc.Client, "fill")
	payload := strings.Repeat("y", fillBytes)
	for i := range fillCount {
		if _, err := tc.Client.CoreV1().ConfigMaps("fill").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fill-%03d", i)}, Data: map[string]string{"blob": payload},
		}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	lists0 := itest.APIServerRequests(t, tc.Client, "LIST")

	budget := policy.Builtin().Limits.MaxCachedBytes.Value()
	base := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	c := itest.StartSyncer(t, env.Super.RESTConfig, nil)
	runtime.GC()
	metrics.Read(base)
	h0 := base[0].Value.Uint64()
	stop := make(chan struct{})
	peak := peakLiveHeap(stop)
	if err := itest.AddTenant(ctx, c, itest.KubeconfigNS, tc, 1); err != nil {
		t.Fatal(err)
	}
	itest.WaitRunning(t, c, tc.Name)
	// The first list is through once the Tenant shows that objects are held out.
	itest.Eventually(t, 3*time.Minute, "the Tenant has WithinMemoryBound=False", func(ctx context.Context) error {
		var tn tenancyv1alpha1.Tenant
		if err := c.Get(ctx, client.ObjectKey{Name: tc.Name}, &tn); err != nil {
			return err
		}
		if cond := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionWithinMemoryBound); cond == nil || cond.Status != metav1.ConditionFalse {
			return itest.Errorf("condition %+v", cond)
		}
		return nil
	})
	close(stop)
	growth := int64(peak()) - int64(h0)
	lists := itest.APIServerRequests(t, tc.Client, "LIST")["configmaps"] - lists0["configmaps"]
	bound := 2*budget + heapSlack
	t.Logf("tenant ConfigMaps: %d MB; LIST configmaps on the tenant apiserver: %.0f; syncer peak live heap growth during the first list: %d MB (bound %d MB = 2 × limits.maxCachedBytes %d MB + %d MB)",
		(fillCount*fillBytes)>>20, lists, growth>>20, bound>>20, budget>>20, heapSlack>>20)
	// One LIST is the object count's (?limit=1, one item decoded).
	if lists > 1 {
		t.Errorf("the tenant's ConfigMaps were listed (%.0f LIST requests, one of them the object count's): the first list is held whole before the transform sees it", lists)
	}
	if growth > bound {
		t.Errorf("the syncer's live heap grew by %d MB at its peak while it listed %d MB of the tenant's ConfigMaps, more than %d MB",
			growth>>20, (fillCount*fillBytes)>>20, bound>>20)
	}
}
