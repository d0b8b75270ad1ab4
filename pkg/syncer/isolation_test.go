package syncer

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vcsyncer/syncer/pkg/resources"
)

// fastCompletions runs the real downward pipeline queue with workers worker goroutines (each
// Get, "reconcile", Done, as (*Syncer).work does) and returns how many requests of tenant
// "fast" (1 ms each) completed during interval, with or without tenant "slow" (1 s each)
// keeping the queue full beside it. Both tenants keep queued items all along: every completed
// request is replaced by a new one.
func fastCompletions(t *testing.T, workers int, slow bool, interval time.Duration) int64 {
	t.Helper()
	q := newTestPipelineQueue(workers)
	var seq atomic.Int64
	add := func(tenant string) {
		q.addHigh(resources.Request{Tenant: tenant, Kind: resources.KindPod, Namespace: "ns", Name: fmt.Sprint(seq.Add(1))})
	}
	if slow {
		for range 200 {
			add("slow")
		}
	}
	for range 50 {
		add("fast")
	}
	var fast atomic.Int64
	var counting atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				req, shutdown := q.Get()
				if shutdown {
					return
				}
				if req.Tenant == "slow" {
					time.Sleep(time.Second)
				} else {
					time.Sleep(time.Millisecond)
					if counting.Load() {
						fast.Add(1)
					}
				}
				add(req.Tenant)
				q.Forget(req)
				q.Done(req)
			}
		})
	}
	counting.Store(true)
	time.Sleep(interval)
	counting.Store(false)
	q.ShutDown()
	wg.Wait()
	return fast.Load()
}

// TestSlowTenantDoesNotTakeEveryWorker: beside a tenant whose requests take 1 s, a tenant whose
// requests take 1 ms keeps at least 0.15 of the completions it has alone (it holds its weighted
// share, half of the 20 workers, and completes about half as many on a quiet machine; without
// the in-flight cap the slow tenant holds them all and the fast tenant completes about 1/600 of
// its alone count). The margin is wide because the two windows are measured one after the
// other and a loaded machine gives them different CPU.
func TestSlowTenantDoesNotTakeEveryWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("takes about 7 s")
	}
	const workers, interval = 20, 2 * time.Second
	alone := fastCompletions(t, workers, false, interval)
	beside := fastCompletions(t, workers, true, interval)
	t.Logf("fast tenant completions in %v: alone %d, beside a slow tenant %d (ratio %.1f)", interval, alone, beside, float64(alone)/float64(max(beside, 1)))
	if float64(beside) < 0.15*float64(alone) {
		t.Fatalf("beside a slow tenant the fast tenant completed %d requests, alone %d: want at least 0.15×", beside, alone)
	}
}

// newTestPipelineQueue is the downward pipeline queue of a syncer with the given workers.
func newTestPipelineQueue(workers int) *pipelineQueue {
	return newPipelineQueue("test-isolation", true, queueShare{workers: workers}, func(string) int { return 1 }, nil)
}
