package fairqueue

import (
	"slices"
	"sort"
	"testing"
	"time"
)

// simTenant is one tenant of a simulation: items arriving from start, one every every (all at
// once when every is 0), each holding a worker for hold(i).
type simTenant struct {
	name  string
	start time.Duration
	every time.Duration
	n     int
	hold  func(i int) time.Duration
}

// simulate runs workers that Wait, Pop, hold each item for its tenant's hold time and call
// Done, against q on clock c, from c's time until every item of tenants is Done (q's Observe
// records the times in queue). Events at one instant: Done first, then arrivals, then idle
// workers take items.
func simulate(t *testing.T, q *Queue[item], c *fakeClock, workers int, tenants []simTenant) {
	t.Helper()
	type busy struct {
		it    item
		until time.Time
	}
	t0 := c.Now()
	var running []busy
	next := make([]int, len(tenants)) // next item to arrive, per tenant
	holdOf := map[string]func(int) time.Duration{}
	total := 0
	for _, st := range tenants {
		holdOf[st.name] = st.hold
		total += st.n
	}
	for done := 0; done < total; {
		now := c.Now()
		// Done of the items whose hold is over.
		kept := running[:0]
		for _, b := range running {
			if !b.until.After(now) {
				q.Done(b.it)
				done++
				continue
			}
			kept = append(kept, b)
		}
		running = kept
		// Arrivals.
		for k, st := range tenants {
			for next[k] < st.n && !t0.Add(st.start+time.Duration(next[k])*st.every).After(now) {
				q.Push(item{st.name, next[k]})
				next[k]++
			}
		}
		// Idle workers take what they may.
		for len(running) < workers && q.waitNow() {
			it := q.Pop()
			running = append(running, busy{it, now.Add(holdOf[it.Tenant](it.N))})
		}
		// Advance to the next event: a Done or an arrival (timers fire on the way).
		var at time.Time
		for _, b := range running {
			if at.IsZero() || b.until.Before(at) {
				at = b.until
			}
		}
		for k, st := range tenants {
			if next[k] < st.n {
				if a := t0.Add(st.start + time.Duration(next[k])*st.every); at.IsZero() || a.Before(at) {
					at = a
				}
			}
		}
		if at.IsZero() {
			if done < total {
				t.Fatalf("simulation stalled at %v: %d of %d items done, none running, Len %d", now.Sub(t0), done, total, q.Len())
			}
			break
		}
		c.Advance(at.Sub(now))
	}
}

// TestSlowNeighbourHoldsNoWorkerANeighbourNeeds: 10 workers with the default reserve of 10% (1
// worker); tenant "slow" has 300 items queued, each holding a worker for 15–25 s (a webhook or
// an apiserver answering at the edge of --tenant-request-timeout); tenant "regular" arrives
// 30 s later with an item every 100 ms, each holding a worker for 150 ms, so it needs 1.5
// workers on average. Once the slow items that were in flight when the regular tenant came have
// finished (one slow hold, 25 s: nothing can take back a worker an item already holds), each
// regular item must wait for a worker at most about one regular hold, not for one of the slow
// tenant's items to finish. With a cap that counts only the tenants with items queued, the
// slow tenant takes back every worker the regular one frees whenever its queue is empty for a
// moment, and the regular tenant is left with the one reserved worker between slow items.
func TestSlowNeighbourHoldsNoWorkerANeighbourNeeds(t *testing.T) {
	c := newFakeClock()
	const workers = 10
	q, waits := neighbourQueue(c, workers)
	regularHold := 150 * time.Millisecond
	regularStart, slowHoldMax := 30*time.Second, 25*time.Second
	tenants := []simTenant{
		{name: "slow", n: 300, hold: func(i int) time.Duration { return 15*time.Second + time.Duration(i*7919%1000)*10*time.Millisecond }},
		{name: "regular", start: regularStart, every: 100 * time.Millisecond, n: 600, hold: func(int) time.Duration { return regularHold }},
	}
	simulate(t, q, c, workers, tenants)

	// Regular items arriving after the transient (one slow hold after the regular tenant came).
	skip := int(slowHoldMax / (100 * time.Millisecond))
	steady := waits["regular"][skip:]
	mean, p99, worst := waitStats(steady)
	t.Logf("regular items after the transient: %d, wait mean %v, p99 %v, max %v (regular hold %v)", len(steady), mean, p99, worst, regularHold)
	if worst > regularHold {
		t.Errorf("a regular item waited %v for a worker beside the slow tenant (mean %v, p99 %v), want at most one regular hold (%v)",
			worst, mean, p99, regularHold)
	}
	if q.OverCap() != 0 {
		t.Errorf("OverCap = %d, want 0", q.OverCap())
	}
}

// neighbourQueue returns a queue on clock c with workers workers, a reserve of 1 and the
// slow-tenant cap at 500 ms, and the waits for a worker it observes, per tenant.
func neighbourQueue(c *fakeClock, workers int) (*Queue[item], map[string][]time.Duration) {
	waits := map[string][]time.Duration{}
	q := New(Options[item]{TenantOf: tenantOf, Workers: workers, Reserve: 1, SlowAfter: 500 * time.Millisecond, Now: c.Now, AfterFunc: c.AfterFunc,
		Observe: func(tenant string, d time.Duration) { waits[tenant] = append(waits[tenant], d) }})
	return q, waits
}

// waitStats returns the mean, the 99th percentile and the largest of waits (not empty).
func waitStats(waits []time.Duration) (mean, p99, worst time.Duration) {
	s := append([]time.Duration(nil), waits...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return sum / time.Duration(len(s)), s[len(s)*99/100], s[len(s)-1]
}

// slowQueue returns a queue with 10 workers, a reserve of 1 and the slow-tenant cap at 500 ms,
// on clock c, with tenant "slow" made slow: one of its items held 2 s.
func slowQueue(t *testing.T, c *fakeClock) *Queue[item] {
	t.Helper()
	q := New(Options[item]{TenantOf: tenantOf, Workers: 10, Reserve: 1, SlowAfter: 500 * time.Millisecond,
		Now: c.Now, AfterFunc: c.AfterFunc})
	q.Push(item{"slow", -1})
	q.waitNow()
	it := q.Pop()
	c.Advance(2 * time.Second)
	q.Done(it)
	return q
}

// takeAll pops from q while a worker may (up to n pops) and returns what it popped.
func takeAll(q *Queue[item], n int) []item {
	var out []item
	for len(out) < n && q.waitNow() {
		out = append(out, q.Pop())
	}
	return out
}

// TestSlowTenantAloneUsesEveryWorker: the slow-tenant cap keeps the queue work-conserving when
// no other tenant is active: a slow tenant alone holds every worker but the reserve; the same
// tenant beside a neighbour active less than ActiveFor ago, that had one item in flight at
// most, leaves it 2 workers (its demand plus one) and holds 8, and a worker waiting in Wait is
// woken when the neighbour stops counting as active.
func TestSlowTenantAloneUsesEveryWorker(t *testing.T) {
	c := newFakeClock()
	q := slowQueue(t, c)
	for i := range 50 {
		q.Push(item{"slow", i})
	}
	held := takeAll(q, 20)
	if len(held) != 9 {
		t.Fatalf("slow tenant alone took %d workers, want 9 (10 - reserve 1)", len(held))
	}

	// A neighbour's item comes and goes; slow finishes its items meanwhile.
	q.Push(item{"regular", 0})
	if got := takeAll(q, 1); len(got) != 1 || got[0].Tenant != "regular" {
		t.Fatalf("pop = %v, want regular's item from the reserve", got)
	}
	c.Advance(10 * time.Millisecond)
	q.Done(item{"regular", 0})
	for _, it := range held {
		q.Done(it)
	}
	// slow's average: 2 s, then 9 items of 10 ms (weight 1/8 each): 2 s × (7/8)^9 + ... ≈ 0.61 s.
	if st := q.Stats(); !st["slow"].Slow || st["slow"].Hold < 500*time.Millisecond || st["regular"].Slow || st["regular"].Hold != 10*time.Millisecond {
		t.Fatalf("Stats slow %+v, regular %+v; want slow Slow with Hold at least 500ms, regular quick with Hold 10ms", st["slow"], st["regular"])
	}
	held = takeAll(q, 20)
	if len(held) != 8 {
		t.Fatalf("slow tenant beside a neighbour active %v ago (at most 1 item in flight) took %d workers, want 8 of 10", 10*time.Millisecond, len(held))
	}

	got := make(chan bool)
	go func() { got <- q.Wait() }()
	assertBlocked(t, got)
	c.Advance(DefaultActiveFor)
	if !<-got {
		t.Fatal("Wait returned false when the neighbour stopped counting as active")
	}
	if it := q.Pop(); it.Tenant != "slow" {
		t.Fatalf("pop = %v, want slow", it)
	}
	if more := takeAll(q, 20); len(more) != 0 {
		t.Fatalf("slow tenant took %d more workers once alone again, want 0 (9 in flight: all but the reserve)", len(more))
	}
	if q.OverCap() != 0 {
		t.Fatalf("OverCap = %d, want 0", q.OverCap())
	}
}

// TestSlowTenantLeavesNeighboursTheirDemand: beside neighbours that are active but use few
// workers, a slow tenant is held to what they leave, not to its weighted share. With 20
// workers and active tenants of weights 1 (slow), 3 (big) and 1 (small), whose shares are 4, 12
// and 4: big, which had 1 item in flight until a moment ago, keeps its demand plus one, 2;
// small, which had 8, keeps its share, 4; the slow tenant holds 20-2-4 = 14.
func TestSlowTenantLeavesNeighboursTheirDemand(t *testing.T) {
	c := newFakeClock()
	weights := map[string]int{"big": 3}
	q := New(Options[item]{TenantOf: tenantOf, Workers: 20, SlowAfter: 500 * time.Millisecond,
		Weight: func(s string) int { return max(weights[s], 1) }, Now: c.Now, AfterFunc: c.AfterFunc})
	q.Push(item{"slow", -1})
	q.Push(item{"big", 0})
	for i := range 8 {
		q.Push(item{"small", i})
	}
	first := takeAll(q, 20) // slow 1, big 1, small 8 in flight
	if len(first) != 10 {
		t.Fatalf("took %d items, want 10", len(first))
	}
	c.Advance(2 * time.Second)
	for _, it := range first {
		q.Done(it)
	}
	for i := range 50 {
		q.Push(item{"slow", i})
	}
	if held := takeAll(q, 30); len(held) != 14 {
		t.Fatalf("slow tenant took %d workers beside neighbours that held 1 (weight 3) and 8 (weight 1), want 20-2-4 = 14", len(held))
	}
	if q.OverCap() != 0 {
		t.Fatalf("OverCap = %d, want 0", q.OverCap())
	}
}

// TestFastTenantKeepsWorkConservingCap: a tenant whose items are quick (below SlowAfter) takes
// every worker but the reserve whenever its neighbours have nothing queued, active or not: its
// workers come back within one of its own short items.
func TestFastTenantKeepsWorkConservingCap(t *testing.T) {
	c := newFakeClock()
	q := New(Options[item]{TenantOf: tenantOf, Workers: 10, Reserve: 1, SlowAfter: 500 * time.Millisecond,
		Now: c.Now, AfterFunc: c.AfterFunc})
	q.Push(item{"regular", 0})
	q.Push(item{"greedy", -1})
	first := takeAll(q, 2)
	c.Advance(10 * time.Millisecond)
	for _, it := range first {
		q.Done(it)
	}
	for i := range 50 {
		q.Push(item{"greedy", i})
	}
	if held := takeAll(q, 20); len(held) != 9 {
		t.Fatalf("quick greedy tenant beside an idle active neighbour took %d workers, want 9", len(held))
	}
}

// TestSlowCapWhenEveryTenantIsSlow: on a starved syncer every tenant's items can hold a worker
// past SlowAfter. As in the fairness bench's case (d) on a loaded machine: 20 workers, a
// reserve of 2, a slow tenant (15 items/s of 3–3.6 s), two regular tenants (5 items/s each of
// 0.5–1.5 s: above SlowAfter too) and an idle tenant of weight 3 with a quick item every 0.7 s
// (active, but using one worker at most). The regular items wait at most half a regular hold,
// and the slow tenant's items are all done within 5% of the time they take with the slow-tenant
// cap off (it keeps using the workers its neighbours leave).
func TestSlowCapWhenEveryTenantIsSlow(t *testing.T) {
	run := func(slowAfter time.Duration) (regular []time.Duration, took time.Duration) {
		c := newFakeClock()
		waits := map[string][]time.Duration{}
		q := New(Options[item]{TenantOf: tenantOf, Workers: 20, Reserve: 2, SlowAfter: slowAfter, Now: c.Now, AfterFunc: c.AfterFunc,
			Weight:  func(s string) int { return map[string]int{"idle": 3}[s] },
			Observe: func(tenant string, d time.Duration) { waits[tenant] = append(waits[tenant], d) }})
		regularHold := func(i int) time.Duration { return time.Second * time.Duration(1+i%3) / 2 }
		t0 := c.Now()
		simulate(t, q, c, 20, []simTenant{
			{name: "slow", every: time.Second / 15, n: 600, hold: func(i int) time.Duration { return 3*time.Second + time.Duration(i%7)*100*time.Millisecond }},
			{name: "r1", start: 3 * time.Second, every: 200 * time.Millisecond, n: 100, hold: regularHold},
			{name: "r2", start: 3*time.Second + 77*time.Millisecond, every: 200 * time.Millisecond, n: 100, hold: regularHold},
			{name: "idle", every: 700 * time.Millisecond, n: 60, hold: func(int) time.Duration { return 5 * time.Millisecond }},
		})
		return append(waits["r1"], waits["r2"]...), c.Now().Sub(t0)
	}
	waits, took := run(500 * time.Millisecond)
	_, tookOff := run(0)
	worst := slices.Max(waits)
	t.Logf("regular worst wait %v; all done after %v (%v with the slow-tenant cap off)", worst, took, tookOff)
	if worst > 500*time.Millisecond {
		t.Errorf("a regular item waited %v, want at most half a regular hold (500ms)", worst)
	}
	if took > tookOff*105/100 {
		t.Errorf("all items done after %v, more than 5%% over %v with the slow-tenant cap off", took, tookOff)
	}
}
