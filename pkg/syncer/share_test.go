package syncer

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/fairqueue"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// shareSyncer returns a Syncer for workWith tests with share options o.
func shareSyncer(t *testing.T, workers int, o ShareOptions) *Syncer {
	t.Helper()
	s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: workers, UpwardWorkers: 1, Share: o})
	if err != nil {
		t.Fatal(err)
	}
	s.SetRegistry(tenant.NewRegistry(t.Context(), s))
	return s
}

// TestSlowTenantLeavesReserve: with 10 downward workers and a 20% reserve, a tenant whose
// reconciles block (its webhooks answer in 25 s) holds at most 8 workers, and another
// tenant's request is reconciled while all of them still block; with the work-conserving cap
// (reserve 0) the slow tenant takes all 10 and the request waits.
func TestSlowTenantLeavesReserve(t *testing.T) {
	const workers = 10
	s := shareSyncer(t, workers, ShareOptions{WorkerReservePercent: 20})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	release := make(chan struct{})
	var slowIn atomic.Int32
	fastDone := make(chan struct{}, 1)
	process := func(ctx context.Context, req resources.Request, _ bool) error {
		if req.Tenant == "slow" {
			slowIn.Add(1)
			<-release
			return ctx.Err()
		}
		fastDone <- struct{}{}
		return ctx.Err()
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { s.workWith(ctx, s.down, true, process) })
	}
	defer func() { close(release); s.down.ShutDown(); wg.Wait() }()
	for i := range 40 {
		s.down.addHigh(resources.Request{Tenant: "slow", Kind: resources.KindPod, Namespace: "ns", Name: fmt.Sprint(i)})
	}
	deadline := time.Now().Add(5 * time.Second)
	for slowIn.Load() < workers-2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := slowIn.Load(); n != workers-2 {
		t.Fatalf("slow tenant holds %d workers, want %d", n, workers-2)
	}
	s.down.addHigh(resources.Request{Tenant: "fast", Kind: resources.KindPod, Namespace: "ns", Name: "p"})
	select {
	case <-fastDone:
	case <-time.After(5 * time.Second):
		t.Fatalf("the fast tenant's request was not reconciled within 5 s while the slow tenant holds %d workers", slowIn.Load())
	}
	if n := slowIn.Load(); n != workers-2 {
		t.Fatalf("after the fast request the slow tenant holds %d workers, want %d", n, workers-2)
	}
}

// TestSlowTenantHeldToShareAmongActive: with 4 downward workers, no reserve and
// --slow-tenant-threshold 20ms, a tenant whose last reconcile held a worker 50 ms is slow: while
// another tenant has one request in flight (and nothing queued), the slow tenant's 40 blocking
// requests take 2 workers (the other keeps its 1 in flight plus one; 2 is also the slow
// tenant's share), not the 3 that are idle, and the other tenant's next request is reconciled
// at once. With the threshold off the slow tenant takes
// every idle worker and that request waits.
func TestSlowTenantHeldToShareAmongActive(t *testing.T) {
	const workers = 4
	s := shareSyncer(t, workers, ShareOptions{SlowTenantThreshold: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	release := make(chan struct{})
	var slowIn, otherIn atomic.Int32
	warmDone, otherDone := make(chan struct{}, 1), make(chan struct{}, 1)
	process := func(ctx context.Context, req resources.Request, _ bool) error {
		switch {
		case req.Name == "warm":
			time.Sleep(50 * time.Millisecond) // the slow tenant's first request: a slow call
			warmDone <- struct{}{}
		case req.Tenant == "slow":
			slowIn.Add(1)
			<-release
		case req.Name == "held":
			otherIn.Add(1)
			<-release
		default:
			otherDone <- struct{}{}
		}
		return ctx.Err()
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { s.workWith(ctx, s.down, true, process) })
	}
	defer func() { close(release); s.down.ShutDown(); wg.Wait() }()
	req := func(tenant, name string) resources.Request {
		return resources.Request{Tenant: tenant, Kind: resources.KindPod, Namespace: "ns", Name: name}
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s (slow tenant holds %d workers)", what, slowIn.Load())
			}
		}
	}
	s.down.addHigh(req("slow", "warm"))
	<-warmDone
	s.down.addHigh(req("other", "held"))
	waitFor("the other tenant's first request in flight", func() bool { return otherIn.Load() == 1 })
	for i := range 40 {
		s.down.addHigh(req("slow", fmt.Sprint(i)))
	}
	waitFor("the slow tenant at its share", func() bool { return slowIn.Load() >= 2 })
	s.down.addHigh(req("other", "next"))
	select {
	case <-otherDone:
	case <-time.After(5 * time.Second):
		t.Fatalf("the other tenant's request was not reconciled within 5 s while the slow tenant holds %d of %d workers", slowIn.Load(), workers)
	}
	if n := slowIn.Load(); n != 2 {
		t.Fatalf("slow tenant holds %d workers beside an active tenant, want its share 2 of %d", n, workers)
	}
}

// okTransport answers every request with 200.
type okTransport struct{}

func (okTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}

// superWrite makes one request through fairqueue.CountWrites with ctx, as the super client does.
func superWrite(t *testing.T, ctx context.Context, method string) {
	t.Helper()
	r, err := http.NewRequestWithContext(ctx, method, "https://super.invalid/api/v1/namespaces/ns/configmaps", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fairqueue.CountWrites(okTransport{}).RoundTrip(r); err != nil {
		t.Fatal(err)
	}
}

// TestWriteShareHoldsNoisyTenant: with a super write share of 100/s and a burst of 10, a tenant
// whose reconciles make 10 super writes each (its reads are free) spends its bucket and has its
// next requests held in the queue, while the other tenant's request is reconciled at once; the
// noisy tenant makes no more than its share over the test (plus one reconcile of debt).
func TestWriteShareHoldsNoisyTenant(t *testing.T) {
	s := shareSyncer(t, 4, ShareOptions{SuperWriteQPS: 100, SuperWriteBurst: 10})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var noisyWrites atomic.Int64
	quietDone := make(chan time.Time, 1)
	process := func(ctx context.Context, req resources.Request, _ bool) error {
		if req.Tenant == "quiet" {
			superWrite(t, ctx, http.MethodPost)
			quietDone <- time.Now()
			return ctx.Err()
		}
		superWrite(t, ctx, http.MethodGet) // a read: not charged
		for range 10 {
			superWrite(t, ctx, http.MethodPut)
		}
		noisyWrites.Add(10)
		return ctx.Err()
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { s.workWith(ctx, s.down, true, process) })
	}
	defer func() { s.down.ShutDown(); wg.Wait() }()
	start := time.Now()
	for i := range 200 {
		s.down.addHigh(resources.Request{Tenant: "noisy", Kind: resources.KindConfigMap, Namespace: "ns", Name: fmt.Sprint(i)})
	}
	// The noisy tenant spends its burst and goes into debt: its requests are held back.
	held := func() bool { return s.down.stats()["noisy"].Delayed }
	for deadline := time.Now().Add(5 * time.Second); !held(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("noisy tenant not held back after %d writes in 5 s: %+v", noisyWrites.Load(), s.down.stats()["noisy"])
		}
	}
	queued := time.Now()
	s.down.addHigh(resources.Request{Tenant: "quiet", Kind: resources.KindPod, Namespace: "ns", Name: "p"})
	select {
	case at := <-quietDone:
		if d := at.Sub(queued); d > time.Second {
			t.Fatalf("the quiet tenant's request waited %s", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the quiet tenant's request was not reconciled within 5 s")
	}
	time.Sleep(500 * time.Millisecond)
	elapsed := time.Since(start).Seconds()
	// Burst 10 + 100/s (less while quiet is active) + up to 4 reconciles in flight of 10 each.
	if got, most := float64(noisyWrites.Load()), 10+100*elapsed+40; got > most {
		t.Fatalf("noisy tenant made %.0f super writes in %.2fs, want at most %.0f (its share of 100/s)", got, elapsed, most)
	}
	t.Logf("noisy tenant: %d super writes in %.2fs", noisyWrites.Load(), elapsed)
}
