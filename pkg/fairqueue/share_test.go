package fairqueue

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// fakeClock is a manual clock with AfterFunc timers fired by Advance, in time order.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []fakeTimer
}

type fakeTimer struct {
	at time.Time
	f  func()
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timers = append(c.timers, fakeTimer{at: c.now.Add(d), f: f})
	return func() bool { return false }
}

// Advance moves the clock by d, firing the timers due on the way (outside the lock).
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
		if len(c.timers) == 0 || c.timers[0].at.After(end) {
			c.now = end
			c.mu.Unlock()
			return
		}
		t := c.timers[0]
		c.timers = c.timers[1:]
		if t.at.After(c.now) {
			c.now = t.at
		}
		c.mu.Unlock()
		t.f()
	}
}

// TestReserveKeepsWorkersFree: with 10 workers and a reserve of 2, a tenant alone holds at most
// 8 (Wait refuses a 9th caller), and another tenant's first items are served at once from the
// reserve; once the other tenant has items queued, the first is held to its share.
func TestReserveKeepsWorkersFree(t *testing.T) {
	q := New(Options[item]{TenantOf: tenantOf, Workers: 10, Reserve: 2})
	for i := range 50 {
		q.Push(item{"slow", i})
	}
	var slow []item
	for range 8 {
		if !q.waitNow() {
			t.Fatalf("Wait refused with %d of slow's items in flight, want 8 allowed", len(slow))
		}
		slow = append(slow, q.Pop())
	}
	if q.waitNow() {
		t.Fatal("Wait let a 9th worker take slow's item: the reserve of 2 is not kept")
	}
	q.Push(item{"b", 0})
	q.Push(item{"b", 1})
	for i := range 2 {
		if !q.waitNow() {
			t.Fatalf("Wait refused b's item %d with 2 reserved workers free", i)
		}
		if got := q.Pop(); got.Tenant != "b" {
			t.Fatalf("pop = %v, want b's item (slow holds 8 of 10)", got)
		}
	}
	// slow's share with b queued is 5: two of its Done free nothing for it.
	q.Push(item{"b", 2})
	q.Done(slow[0])
	if !q.waitNow() {
		t.Fatal("Wait refused b's item after a Done")
	}
	if got := q.Pop(); got.Tenant != "b" {
		t.Fatalf("pop = %v, want b (slow over its share of 5)", got)
	}
	if q.OverCap() != 0 {
		t.Fatalf("OverCap = %d, want 0", q.OverCap())
	}
}

// waitNow is Wait without blocking: it reports whether a Wait would return at once (and then
// counts the pass, as Wait does).
func (q *Queue[T]) waitNow() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || !q.readyLocked(q.passes) {
		return false
	}
	q.passes++
	return true
}

// TestReserveWaitBlocksAndWakes: a worker blocked in Wait (nothing it may take) wakes on a Done
// of the capped tenant and on a Push of another tenant, and Close releases it.
func TestReserveWaitBlocksAndWakes(t *testing.T) {
	q := New(Options[item]{TenantOf: tenantOf, Workers: 3, Reserve: 1})
	for i := range 5 {
		q.Push(item{"a", i})
	}
	var held []item
	for range 2 {
		q.Wait()
		held = append(held, q.Pop())
	}
	got := make(chan bool)
	go func() { got <- q.Wait() }()
	assertBlocked(t, got)
	q.Push(item{"b", 0})
	if !<-got {
		t.Fatal("Wait returned false after a Push of b")
	}
	if it := q.Pop(); it.Tenant != "b" {
		t.Fatalf("pop = %v, want b", it)
	}
	go func() { got <- q.Wait() }()
	assertBlocked(t, got)
	q.Done(held[0])
	if !<-got {
		t.Fatal("Wait returned false after a Done of a's item")
	}
	if it := q.Pop(); it.Tenant != "a" {
		t.Fatalf("pop = %v, want a", it)
	}
	go func() { got <- q.Wait() }()
	assertBlocked(t, got)
	q.Close()
	if <-got {
		t.Fatal("Wait returned true after Close")
	}
}

// assertBlocked fails if ch delivers before a barrier: a goroutine blocked in Wait has not
// returned after the runtime ran every other goroutine many times (Wait holds no timer).
func assertBlocked(t *testing.T, ch chan bool) {
	t.Helper()
	for range 100 {
		select {
		case v := <-ch:
			t.Fatalf("Wait returned %v, want it blocked", v)
		default:
			time.Sleep(100 * time.Microsecond)
		}
	}
}

// TestLimiterParksTenant: a tenant in debt with the Budget leaves the ring with its items (no
// worker taken), the others are served, and it comes back when its bucket is back at zero;
// Delayed reports the wait.
func TestLimiterParksTenant(t *testing.T) {
	clk := newFakeClock()
	b := NewBudget(BudgetOptions{Rate: 10, Burst: 5, Now: clk.Now})
	var delayed []string
	q := New(Options[item]{TenantOf: tenantOf, Workers: 4, Limiter: b, Now: clk.Now, AfterFunc: clk.AfterFunc,
		Delayed: func(tenant string, d time.Duration) { delayed = append(delayed, fmt.Sprintf("%s %s", tenant, d)) }})
	for i := range 4 {
		q.Push(item{"noisy", i})
	}
	q.Push(item{"quiet", 0})
	b.Charge("noisy", 10) // 5 tokens - 10 = -5; alone it refills at 10/s: ready in 0.5 s
	if !q.waitNow() {
		t.Fatal("Wait refused quiet's item")
	}
	if got := q.Pop(); got.Tenant != "quiet" {
		t.Fatalf("pop = %v, want quiet (noisy in debt)", got)
	}
	if q.waitNow() {
		t.Fatal("Wait let a worker take an item of the tenant in debt")
	}
	if st := q.Stats()["noisy"]; !st.Delayed || st.Depth != 4 {
		t.Fatalf("noisy stats %+v, want Delayed with 4 queued", st)
	}
	clk.Advance(499 * time.Millisecond)
	if q.waitNow() {
		t.Fatal("noisy served before its bucket is back at zero")
	}
	clk.Advance(time.Millisecond)
	if !q.waitNow() {
		t.Fatal("noisy not back after 0.5 s")
	}
	if got := q.Pop(); got.Tenant != "noisy" {
		t.Fatalf("pop = %v, want noisy", got)
	}
	if len(delayed) != 1 || delayed[0] != "noisy 500ms" {
		t.Fatalf("Delayed calls %v, want [noisy 500ms]", delayed)
	}
	if q.OverCap() != 0 {
		t.Fatalf("OverCap = %d, want 0", q.OverCap())
	}
}

// TestBudgetShares: alone a tenant refills at the whole rate; a newcomer starts with a full
// bucket and halves the first one's rate at its first Charge (weights 1:1), or to a third with
// weights 1:2; idle tenants leave the share.
func TestBudgetShares(t *testing.T) {
	clk := newFakeClock()
	w := map[string]int{"a": 1, "b": 1, "c": 2}
	b := NewBudget(BudgetOptions{Rate: 100, Burst: 10, Weight: func(t string) int { return w[t] }, Now: clk.Now})
	b.Charge("a", 110) // -100 at 100/s: 1 s
	if got, want := b.ReadyAt("a").Sub(clk.Now()), time.Second; got != want {
		t.Fatalf("a alone ready in %s, want %s", got, want)
	}
	if !b.ReadyAt("b").IsZero() {
		t.Fatal("b, never charged, is delayed")
	}
	b.Charge("b", 1) // newcomer: full bucket, 9 left
	if !b.ReadyAt("b").IsZero() {
		t.Fatal("b delayed after its first charge")
	}
	if got, want := b.ReadyAt("a").Sub(clk.Now()), 2*time.Second; got != want {
		t.Fatalf("a beside b ready in %s, want %s (50/s)", got, want)
	}
	b.Charge("c", 1)
	if got, want := b.Rate("a"), 25.0; got != want {
		t.Fatalf("a's rate beside b and c (weight 2) = %v, want %v", got, want)
	}
	// b and c idle (owing nothing) for more than a second: a gets the whole rate again.
	clk.Advance(1100 * time.Millisecond)
	b.ReadyAt("a")
	if got, want := b.Rate("a"), 100.0; got != want {
		t.Fatalf("a's rate after the others went idle = %v, want %v", got, want)
	}
}

// TestProperty_ReserveAndLimiter drives a queue with a Reserve and a Budget through random
// pushes, gated pops, Dones, charges and clock moves, and checks: every pop follows a Wait
// that let it through and is within the rules (no OverCap), no tenant ever holds more than
// Workers-Reserve, no item of a tenant in debt is popped, and every item is served in the end.
//
// With SlowAfter drawn too, the tenants whose items were held across "advance" steps become
// slow and are held to their share among the active tenants; Wait and Pop still agree (OverCap
// stays 0) and every item is served.
func TestProperty_ReserveAndLimiter(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		clk := newFakeClock()
		workers := rapid.IntRange(2, 6).Draw(rt, "workers")
		reserve := rapid.IntRange(1, workers-1).Draw(rt, "reserve")
		b := NewBudget(BudgetOptions{Rate: 20, Burst: 3, Now: clk.Now})
		slowAfter := time.Duration(rapid.SampledFrom([]int{0, 100, 400}).Draw(rt, "slowAfterMs")) * time.Millisecond
		q := New(Options[item]{TenantOf: tenantOf, Workers: workers, Reserve: reserve, Limiter: b, SlowAfter: slowAfter,
			Now: clk.Now, AfterFunc: clk.AfterFunc})
		tenants := []string{"a", "b", "c"}
		queued := map[item]bool{}
		var inFlight []item
		next := 0
		pop := func(t *rapid.T) {
			if len(inFlight) == workers || !q.waitNow() { // only a free worker waits
				return
			}
			it := q.Pop()
			if !queued[it] {
				t.Fatalf("popped %v, not queued", it)
			}
			delete(queued, it)
			if at := b.ReadyAt(it.Tenant); at.After(clk.Now()) {
				t.Fatalf("popped %v while its tenant is in debt until %s", it, at.Sub(clk.Now()))
			}
			inFlight = append(inFlight, it)
			n := 0
			for _, x := range inFlight {
				if x.Tenant == it.Tenant {
					n++
				}
			}
			if n > workers-reserve {
				t.Fatalf("%s holds %d workers, more than %d-%d", it.Tenant, n, workers, reserve)
			}
		}
		rt.Repeat(map[string]func(*rapid.T){
			"push": func(t *rapid.T) {
				it := item{rapid.SampledFrom(tenants).Draw(t, "tenant"), next}
				next++
				q.Push(it)
				queued[it] = true
			},
			"pop": pop,
			"done": func(t *rapid.T) {
				if len(inFlight) == 0 {
					t.Skip()
				}
				i := rapid.IntRange(0, len(inFlight)-1).Draw(t, "i")
				it := inFlight[i]
				inFlight = append(inFlight[:i], inFlight[i+1:]...)
				q.Done(it)
				b.Charge(it.Tenant, float64(rapid.IntRange(0, 4).Draw(t, "writes")))
			},
			"advance": func(t *rapid.T) {
				clk.Advance(time.Duration(rapid.IntRange(1, 300).Draw(t, "ms")) * time.Millisecond)
			},
			"": func(t *rapid.T) {
				if q.OverCap() != 0 {
					t.Fatalf("OverCap = %d", q.OverCap())
				}
			},
		})
		// Drain: finish everything in flight, let time pass, pop the rest.
		for range 10000 {
			if len(queued) == 0 {
				break
			}
			for _, it := range inFlight {
				q.Done(it)
			}
			inFlight = nil
			clk.Advance(time.Second)
			pop(rt)
		}
		if len(queued) != 0 {
			rt.Fatalf("items never served: %v", queued)
		}
	})
}

// TestConcurrentWorkersWithGate runs producers and workers (each Wait, then the client-go Get,
// then Done on both) under -race with a Reserve and a Budget on the real clock, and checks that
// every added item is processed, no tenant ever holds more than Workers-Reserve workers, and
// Close releases the waiting workers.
func TestConcurrentWorkersWithGate(t *testing.T) {
	const workers, reserve = 8, 2
	b := NewBudget(BudgetOptions{Rate: 20000, Burst: 50})
	q := New(Options[item]{TenantOf: tenantOf, Workers: workers, Reserve: reserve, Limiter: b})
	wq := newWorkqueue(q)
	var mu sync.Mutex
	held := map[string]int{}
	seen := map[item]bool{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for q.Wait() {
				it, shutdown := wq.Get()
				if shutdown {
					return
				}
				mu.Lock()
				held[it.Tenant]++
				if held[it.Tenant] > workers-reserve {
					t.Errorf("%s holds %d workers", it.Tenant, held[it.Tenant])
				}
				seen[it] = true
				mu.Unlock()
				time.Sleep(20 * time.Microsecond)
				b.Charge(it.Tenant, 3)
				mu.Lock()
				held[it.Tenant]--
				mu.Unlock()
				q.Done(it)
				wq.Done(it)
			}
		})
	}
	var producers sync.WaitGroup
	for p := range 4 {
		producers.Go(func() {
			for i := range 1000 {
				wq.Add(item{fmt.Sprintf("t%d", (p+i)%3), i})
			}
		})
	}
	producers.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == 3*1000 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	q.Close()
	wq.ShutDown()
	wg.Wait()
	if len(seen) != 3*1000 {
		t.Fatalf("%d distinct items processed, want %d", len(seen), 3*1000)
	}
}
