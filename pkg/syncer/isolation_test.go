package syncer

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vcsyncer/syncer/pkg/resources"
)

// TestSlowTenantDoesNotTakeEveryWorker: beside a tenant whose requests never finish (each
// holds its worker until the test ends), a tenant whose requests finish at once keeps being
// served: the slow tenant is held to its weighted share of the 20 workers (the in-flight cap),
// so the fast tenant completes its requests on the workers left. Without the cap every
// worker ends up holding a slow request and the fast tenant completes a few dozen, then none.
// The real downward pipeline queue is driven as (*Syncer).work does (Get, reconcile, Done);
// both tenants keep queued items all along: every completed request is replaced by a new one.
func TestSlowTenantDoesNotTakeEveryWorker(t *testing.T) {
	const workers, wantFast = 20, 2000
	q := newTestPipelineQueue(workers)
	var seq atomic.Int64
	add := func(tenant string) {
		q.addHigh(resources.Request{Tenant: tenant, Kind: resources.KindPod, Namespace: "ns", Name: fmt.Sprint(seq.Add(1))})
	}
	for range 200 {
		add("slow")
	}
	for range 50 {
		add("fast")
	}
	release := make(chan struct{})
	var fast, slowHeld atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				req, shutdown := q.Get()
				if shutdown {
					return
				}
				if req.Tenant == "slow" {
					slowHeld.Add(1)
					<-release
				} else {
					fast.Add(1)
				}
				add(req.Tenant)
				q.Forget(req)
				q.Done(req)
			}
		})
	}
	defer func() {
		close(release)
		q.ShutDown()
		wg.Wait()
	}()
	for deadline := time.Now().Add(30 * time.Second); fast.Load() < wantFast; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) || slowHeld.Load() >= workers {
			t.Fatalf("beside a slow tenant holding %d of the %d workers, the fast tenant completed %d requests (in 30s at most), want %d",
				slowHeld.Load(), workers, fast.Load(), wantFast)
		}
	}
}

// newTestPipelineQueue is the downward pipeline queue of a syncer with the given workers.
func newTestPipelineQueue(workers int) *pipelineQueue {
	return newPipelineQueue("test-isolation", true, queueShare{workers: workers}, func(string) int { return 1 }, nil)
}
