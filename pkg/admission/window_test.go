package admission

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// harness drives a Window the way the syncer does: a woken item is run again at once (its
// Acquire takes the granted slot) and each admitted Pod is recorded.
type harness struct {
	t       *testing.T
	clk     *clock
	w       *Window[string]
	weights map[string]int
	woken   []string
	created map[string]string // key → tenant
	next    int               // number of the next item interval runs
}

func newHarness(t *testing.T, min, max int, weights map[string]int) *harness {
	h := &harness{t: t, clk: &clock{t: time.Unix(1000, 0)}, weights: weights, created: map[string]string{}}
	h.w = New(Options[string]{
		MinWindow: min, MaxWindow: max, Now: h.clk.now,
		Weight: func(tn string) int { return h.weights[tn] },
		Wake:   func(item string) { h.woken = append(h.woken, item) },
	})
	return h
}

func tenantOf(item string) string {
	var tn string
	var i int
	if _, err := fmt.Sscanf(item, "%s %d", &tn, &i); err != nil {
		panic(fmt.Sprintf("item %q is not \"<tenant> <n>\": %v", item, err))
	}
	return tn
}

// run is one run of item: Acquire and, when admitted, the Pod's creation; then Settle.
func (h *harness) run(item string) bool {
	tn := tenantOf(item)
	ok, _ := h.w.Acquire(tn, item, item)
	if ok {
		h.created[item] = tn
		h.w.Created(item)
	}
	h.w.Settle(tn, item)
	return ok
}

// runWoken runs every woken item until none is left.
func (h *harness) runWoken() {
	for len(h.woken) > 0 {
		item := h.woken[0]
		h.woken = h.woken[1:]
		if !h.run(item) {
			h.t.Fatalf("woken item %q was not admitted", item)
		}
	}
}

// bind makes the scheduler bind created Pod key after the clock moved on.
func (h *harness) bind(key string) {
	tn, ok := h.created[key]
	if !ok {
		h.t.Fatalf("bind of %q, which was not created", key)
	}
	delete(h.created, key)
	h.w.Observe(tn, key, h.clk.now(), false, true)
}

// interval is one adjustment interval under load: pods more runs of tenant a's items, the clock
// moves on by d, every bindEvery-th created Pod is bound (1: all of them), the woken items run,
// then Adjust.
func (h *harness) interval(pods int, d time.Duration, bindEvery int) {
	for range pods {
		h.run(fmt.Sprintf("a %d", h.next))
		h.next++
	}
	h.clk.add(d)
	n := 0
	for k := range h.created {
		if n%bindEvery == 0 {
			h.bind(k)
		}
		n++
	}
	h.runWoken()
	h.w.Adjust()
}

func TestAloneUsesWholeWindow(t *testing.T) {
	h := newHarness(t, 10, 10, nil)
	admitted := 0
	for i := range 15 {
		if h.run(fmt.Sprintf("a %d", i)) {
			admitted++
		}
	}
	if admitted != 10 {
		t.Fatalf("a tenant alone: %d of 15 admitted at once, want the whole window (10)", admitted)
	}
	st := h.w.Stats()
	if st.Waiting["a"] != 5 || st.Held != 10 {
		t.Fatalf("stats %+v, want 5 waiting and 10 held", st)
	}
	// Each bind admits the next waiting Pod, in arrival order.
	h.bind("a 0")
	if len(h.woken) != 1 || h.woken[0] != "a 10" {
		t.Fatalf("woken after a bind: %v, want [a 10]", h.woken)
	}
	h.runWoken()
}

func TestLowLoadNothingWaits(t *testing.T) {
	h := newHarness(t, 4, 4, nil)
	for i := range 100 {
		item := fmt.Sprintf("a %d", i)
		if !h.run(item) {
			t.Fatalf("Pod %d waited although the previous ones were bound", i)
		}
		h.clk.add(10 * time.Millisecond)
		h.bind(item)
	}
}

// A greedy tenant that filled the window does not make a newcomer wait: the newcomer is under
// its share.
func TestNewcomerUnderShareIsAdmitted(t *testing.T) {
	h := newHarness(t, 20, 20, nil)
	for i := range 500 {
		h.run(fmt.Sprintf("greedy %d", i))
	}
	if h.w.Stats().Held != 20 {
		t.Fatalf("greedy holds %d, want 20", h.w.Stats().Held)
	}
	if !h.run("regular 0") {
		t.Fatal("a regular tenant's first Pod waited behind a greedy tenant's burst")
	}
	// A second greedy tenant: also admitted up to its share, then waits.
	n := 0
	for i := range 50 {
		if h.run(fmt.Sprintf("greedy2 %d", i)) {
			n++
		}
	}
	// share = ceil(20 × 1 / 3) = 7
	if n != 7 {
		t.Fatalf("second greedy tenant admitted %d at once, want its share 7", n)
	}
}

// Freed slots go to the waiting tenants in proportion to their weights.
func TestWeightedShares(t *testing.T) {
	h := newHarness(t, 10, 10, map[string]int{"a": 3, "b": 1, "c": 1})
	for i := range 3000 {
		for _, tn := range []string{"a", "b", "c"} {
			h.run(fmt.Sprintf("%s %d", tn, i))
		}
	}
	bound := map[string]int{}
	for range 2000 {
		// bind the oldest created Pod
		var oldest string
		for k := range h.created {
			if oldest == "" || h.w.pending[k].since.Before(h.w.pending[oldest].since) ||
				(h.w.pending[k].since.Equal(h.w.pending[oldest].since) && k < oldest) {
				oldest = k
			}
		}
		h.clk.add(time.Millisecond)
		bound[tenantOf(oldest)]++
		h.bind(oldest)
		h.runWoken()
	}
	for tn, want := range map[string]float64{"a": 0.6, "b": 0.2, "c": 0.2} {
		got := float64(bound[tn]) / 2000
		if got < want-0.05 || got > want+0.05 {
			t.Errorf("tenant %s: %.3f of bound Pods, want %.2f ± 0.05 (all: %v)", tn, got, want, bound)
		}
	}
}

func TestAbortAndSettleReturnSlots(t *testing.T) {
	h := newHarness(t, 2, 2, nil)
	h.run("a 0")
	h.run("a 1")
	if h.run("a 2") {
		t.Fatal("third Pod admitted into a window of 2")
	}
	// The creation of a 0 failed: its slot goes to a 2.
	h.w.Abort("a 0")
	delete(h.created, "a 0")
	if len(h.woken) != 1 || h.woken[0] != "a 2" {
		t.Fatalf("woken %v, want [a 2]", h.woken)
	}
	// a 2's Pod was deleted meanwhile: its run does not Acquire, and Settle returns the slot.
	h.woken = nil
	if h.run("a 3") {
		t.Fatal("a 3 admitted while a 2 holds the granted slot")
	}
	h.w.Settle("a", "a 2")
	if len(h.woken) != 1 || h.woken[0] != "a 3" {
		t.Fatalf("after a 2 settled without asking: woken %v, want [a 3]", h.woken)
	}
	h.runWoken()
	if st := h.w.Stats(); st.Held != 2 || len(st.Waiting) != 0 {
		t.Fatalf("stats %+v, want 2 held, none waiting", st)
	}
}

// Pods that never bind stop counting after PendingExpiry, so they cannot block a tenant forever.
func TestPendingExpiry(t *testing.T) {
	h := newHarness(t, 3, 3, nil)
	for i := range 4 {
		h.run(fmt.Sprintf("a %d", i))
	}
	h.clk.add(DefaultPendingExpiry + time.Second)
	h.w.Adjust()
	h.runWoken()
	if _, ok := h.created["a 3"]; !ok {
		t.Fatal("a 3 still waits after the unbound Pods expired")
	}
	// An old Pod seen by the informer (e.g. after a restart) is not counted.
	h.w.Observe("b", "b/old", h.clk.now().Add(-time.Hour), true, false)
	if h.w.Stats().HeldBy["b"] != 0 {
		t.Fatal("a Pod older than PendingExpiry was counted")
	}
	h.w.Observe("b", "b/new", h.clk.now(), true, false)
	if h.w.Stats().HeldBy["b"] != 1 {
		t.Fatal("a new unbound Pod seen by the informer was not counted")
	}
}

// The window grows while it is the limit and binds stay fast, and shrinks when Pods pile up
// unbound in the scheduler with bind latency above Tolerance × its baseline; slots held by the
// syncer's own work before a create do not shrink it.
func TestAdjust(t *testing.T) {
	h := newHarness(t, 4, 100, nil)
	for range 10 { // fast binds, Pods waiting
		h.interval(200, 10*time.Millisecond, 1)
	}
	grown := h.w.Stats().Window
	if grown <= 20 {
		t.Fatalf("window %d after 10 saturated intervals with fast binds, want it grown well above 4", grown)
	}
	for range 3 { // slow binds, and half of the created Pods still unbound at each Adjust
		h.interval(200, 100*time.Millisecond, 2)
	}
	shrunk := h.w.Stats().Window
	if shrunk >= grown {
		t.Fatalf("window %d after slow binds with a full scheduler, want below %d", shrunk, grown)
	}

	// Slots held before the create (Acquire, no Created yet) while binds are slow: the
	// scheduler is not where the slots are, so the window grows.
	h2 := newHarness(t, 8, 100, nil)
	for i := range 8 {
		h2.w.Acquire("a", fmt.Sprint("pre ", i), fmt.Sprint("pre ", i)) // slow syncer work
	}
	h2.w.Acquire("a", "wait 0", "wait 0") // waits
	h2.w.Acquire("b", "wait 1", "wait 1")
	for range 3 {
		h2.w.Adjust()
	}
	if got := h2.w.Stats().Window; got <= 8 {
		t.Fatalf("window %d with every slot in the syncer's own work and Pods waiting, want grown above 8", got)
	}
}

// A burst doubles the window every saturated interval until the scheduler first slows down
// (slow start); after that the window grows by √window; once idle it starts slow again.
func TestAdjustSlowStart(t *testing.T) {
	h := newHarness(t, 4, 1000, nil)
	fast := func() { h.interval(2000, 10*time.Millisecond, 1) }
	for range 3 {
		fast()
	}
	if got := h.w.Stats().Window; got != 32 {
		t.Fatalf("window %d after 3 saturated intervals from 4, want 32 (doubling)", got)
	}
	for range 3 { // slow binds with a full scheduler: shrink
		h.interval(2000, 200*time.Millisecond, 2)
	}
	before := h.w.Stats().Window
	for k := range h.created {
		h.bind(k)
	}
	for range 3 {
		fast()
	}
	if got := h.w.Stats().Window; got >= 2*before || got <= before {
		t.Fatalf("window %d → %d after a shrink and three fast intervals, want additive growth (√window a step), not doubling", before, got)
	}
}

func TestForgetDropsTenant(t *testing.T) {
	h := newHarness(t, 1, 1, nil)
	h.run("a 0")
	h.run("b 0")
	h.run("a 1")
	h.w.Forget("b")
	if st := h.w.Stats(); st.Waiting["b"] != 0 {
		t.Fatalf("removed tenant still waits: %+v", st)
	}
	if items := h.w.Items(); len(items) != 1 || items[0] != "a 1" {
		t.Fatalf("Items %v, want [a 1]", items)
	}
}

func TestConcurrentUse(t *testing.T) {
	w := New(Options[string]{MinWindow: 5, MaxWindow: 50})
	w.o.Wake = func(item string) {}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			tn := fmt.Sprint("t", g%3)
			for i := range 500 {
				key := fmt.Sprintf("%s/%d/%d", tn, g, i)
				if ok, _ := w.Acquire(tn, key, key); ok {
					w.Observe(tn, key, time.Now(), false, true)
				}
				w.Settle(tn, key)
				if i%50 == 0 {
					w.Adjust()
				}
			}
		})
	}
	wg.Wait()
	st := w.Stats()
	if st.Held < 0 || st.Held > 50 {
		t.Fatalf("held %d out of range", st.Held)
	}
}

// A granted item whose Pod is already counted (seen by the informer meanwhile) gives the
// granted slot back instead of holding two.
func TestGrantOfCountedPodIsReturned(t *testing.T) {
	h := newHarness(t, 1, 1, nil)
	h.run("a 0")
	if h.run("a 1") {
		t.Fatal("second Pod admitted into a window of 1")
	}
	h.bind("a 0") // grants a 1 its slot
	if len(h.woken) != 1 {
		t.Fatalf("woken %v, want [a 1]", h.woken)
	}
	h.w.Observe("a", "a 1", h.clk.now(), true, false) // its Pod appears (created elsewhere)
	if !h.run("a 1") {
		t.Fatal("a 1 not admitted")
	}
	if st := h.w.Stats(); st.Held != 1 {
		t.Fatalf("held %d, want 1 (the observed Pod; the grant returned)", st.Held)
	}
}

// A second Acquire for a Pod that is counted already takes no slot, so its caller gives none
// back: an Abort of that run would drop the live Pod's slot.
func TestAcquireOfCountedPodTakesNoSlot(t *testing.T) {
	h := newHarness(t, 4, 4, nil)
	if ok, took := h.w.Acquire("a", "a 0", "a 0"); !ok || !took {
		t.Fatalf("first Acquire = %v, %v; want true, true", ok, took)
	}
	h.w.Created("a 0")
	h.w.Settle("a", "a 0")
	if ok, took := h.w.Acquire("a", "a 0", "a 0"); !ok || took {
		t.Fatalf("Acquire of a counted Pod = %v, %v; want true, false", ok, took)
	}
	h.w.Settle("a", "a 0")
	if st := h.w.Stats(); st.Held != 1 {
		t.Fatalf("held %d, want 1", st.Held)
	}
}

// A tenant that keeps adding and dropping waiting Pods does not grow its line.
func TestLineStaysBounded(t *testing.T) {
	h := newHarness(t, 1, 1, nil)
	h.run("a 0") // holds the only slot
	for i := range 10000 {
		item := fmt.Sprint("a w", i)
		if ok, _ := h.w.Acquire("a", item, item); ok {
			t.Fatal("admitted into a full window")
		}
		h.w.Settle("a", item) // waiting: kept
		h.w.Settle("a", item) // its next run did not ask: dropped
	}
	h.w.mu.Lock()
	n := len(h.w.tenants["a"].line)
	h.w.mu.Unlock()
	if n > 16 {
		t.Fatalf("line holds %d entries after 10000 add-and-drop cycles, want a handful", n)
	}
}

// A slot held by the syncer's own work before the create does not expire mid-flight (else the
// tenant would be admitted again while its earlier runs are still going).
func TestPreCreateSlotDoesNotExpire(t *testing.T) {
	h := newHarness(t, 1, 1, nil)
	if ok, _ := h.w.Acquire("a", "a 0", "a 0"); !ok {
		t.Fatal("not admitted")
	}
	h.clk.add(2 * DefaultPendingExpiry)
	h.w.Adjust()
	if ok, _ := h.w.Acquire("a", "a 1", "a 1"); ok {
		t.Fatal("a second Pod was admitted while the first one's slot is still in use before its create")
	}
	h.w.Created("a 0")
	h.clk.add(DefaultPendingExpiry + time.Second)
	h.w.Adjust()
	if len(h.woken) != 1 || h.woken[0] != "a 1" {
		t.Fatalf("after the created Pod expired: woken %v, want [a 1]", h.woken)
	}
}
