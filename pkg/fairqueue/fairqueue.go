package fairqueue

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// Priority is an item's lane inside its tenant's sub-queue.
type Priority int

// Priorities.
const (
	// High is for live events. It is the default.
	High Priority = iota
	// Low is for bulk work: initial lists, resyncs, remediation.
	Low
)

// DefaultLowEvery is the default of Options.LowEvery.
const DefaultLowEvery = 4

// Options configures a Queue.
type Options[T comparable] struct {
	// TenantOf returns the tenant an item belongs to. Required.
	TenantOf func(T) string
	// Weight returns a tenant's weight (items served per round; values below 1 count as 1).
	// Read when the tenant's quantum is refilled. Defaults to 1 for every tenant.
	Weight func(tenant string) int
	// LowEvery: while a tenant's low lane is not empty, at least one of every LowEvery items
	// served from that tenant comes from it. Defaults to DefaultLowEvery (4).
	LowEvery int
	// Now returns the current time; for tests. Defaults to time.Now.
	Now func() time.Time
	// Observe, if set, is called on every Pop with the item's tenant and its time in queue.
	Observe func(tenant string, waited time.Duration)
	// Workers is the number of workers draining the queue (goroutines calling Get, each
	// calling Done before its next Get). When it is above 0, Pop caps each tenant's items in
	// flight (popped, Done not called yet) at its weighted share of the workers while other
	// tenants have items queued: ceil(Workers × weight ÷ Σ weights of the tenants with queued
	// items). A tenant alone uses every worker but Reserve. 0 means no cap.
	Workers int
	// Reserve is the number of workers no tenant may take beyond its weighted share: a tenant
	// holds at most Workers-Reserve items in flight even when it is alone, so the first items
	// of the other tenants find a free worker at once instead of waiting for one of its
	// (possibly slow) items to finish. Used only with Workers > 1; values at or above Workers
	// count as Workers-1. 0 (the default) is the work-conserving cap. With a Reserve or a
	// Limiter, callers of Pop wait in Wait first (see Wait).
	Reserve int
	// Limiter, if set, delays a tenant's items while Limiter.ReadyAt(tenant) is in the future:
	// the tenant leaves the round-robin ring (its items stay queued, holding no worker) and
	// comes back at that time. A Budget is one. Nil means no delay.
	Limiter Limiter
	// AfterFunc runs f after d (in its own goroutine) and returns a function that cancels it;
	// for tests. Defaults to time.AfterFunc.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// Delayed, if set, is called when a tenant delayed by the Limiter comes back to the ring,
	// with the time its items waited for the Limiter.
	Delayed func(tenant string, d time.Duration)
	// SlowAfter turns on the slow-tenant cap (used only with Workers > 1): a tenant whose items
	// hold a worker for SlowAfter or longer on average (a moving average of its items' times from
	// Pop to Done) leaves each other active tenant (items queued, items in flight, or an item
	// Done less than ActiveFor ago) the most items it had in flight at once lately plus one, at
	// most that tenant's weighted share among the active tenants, even while the others have
	// nothing queued; it is never held below its own share among them. A tenant whose calls are
	// slow (a webhook, an apiserver answering slowly) then leaves the workers a neighbour with
	// sparse work needs free for it, instead of taking back each one it frees. A slow tenant
	// alone (no other tenant active) still uses every worker but Reserve. 0 (the default) turns
	// the slow-tenant cap off. With it, callers of Pop wait in Wait first.
	SlowAfter time.Duration
	// ActiveFor is how long a tenant with nothing queued or in flight still counts as active
	// after its last item was Done, for the slow-tenant cap. Defaults to DefaultActiveFor.
	ActiveFor time.Duration
}

// DefaultActiveFor is the default of Options.ActiveFor.
const DefaultActiveFor = time.Second

// holdAverageWeight is the weight of the newest item in a tenant's moving average of hold
// times (Options.SlowAfter): about the last 8 items count.
const holdAverageWeight = 0.125

// forgetAfter is how long the queue remembers the hold time of a tenant with nothing queued
// or in flight (a slow tenant pausing for less keeps its slow-tenant cap when it comes back).
const forgetAfter = time.Minute

// Limiter tells when a tenant may have its next item popped.
type Limiter interface {
	// ReadyAt returns the earliest time the tenant's next item may be popped (a zero or past
	// time: now).
	ReadyAt(tenant string) time.Time
}

type entry[T comparable] struct {
	item T
	seq  uint64
}

// lane is a FIFO with amortised O(1) push and pop.
type lane[T comparable] struct {
	items []entry[T]
	head  int
}

func (l *lane[T]) push(e entry[T]) { l.items = append(l.items, e) }

func (l *lane[T]) pop() entry[T] {
	e := l.items[l.head]
	var zero entry[T]
	l.items[l.head] = zero
	l.head++
	if l.head == len(l.items) {
		l.items, l.head = l.items[:0], 0
	} else if l.head > 64 && l.head*2 > len(l.items) {
		n := copy(l.items, l.items[l.head:])
		clear(l.items[n:])
		l.items, l.head = l.items[:n], 0
	}
	return e
}

// subqueue is one tenant's queue and its place in the round-robin ring.
type subqueue[T comparable] struct {
	tenant     string
	high, low  lane[T]
	live       int // items queued (stale entries excluded)
	liveLow    int
	credit     int // items left in this round
	weight     int // weight of the current round; counted in Queue.weightSum while in the ring
	highRun    int // high items served in a row while low was waiting
	prev, next *subqueue[T]
	// parked: out of the ring while the Limiter delays the tenant, since parkedAt.
	parked   bool
	parkedAt time.Time
}

// where records the live entry of a queued item.
type where struct {
	seq   uint64
	prio  Priority
	added time.Time
}

// Queue is a workqueue.Queue[T] with per-tenant weighted fairness. It is safe for
// concurrent use; client-go calls Push, Pop, Touch and Len under its own lock, and AddLow may
// be called from any goroutine.
type Queue[T comparable] struct {
	opts Options[T]

	mu      sync.Mutex
	tenants map[string]*subqueue[T]
	cursor  *subqueue[T] // next tenant to serve; nil when empty
	queued  map[T]where  // items in a lane
	wantLow map[T]bool   // items whose next Push goes to the low lane
	seq     uint64
	n       int

	weightSum int            // Σ subqueue.weight over the ring
	inFlight  map[string]int // per tenant, items popped and not Done (absent when 0)
	popped    map[T]struct{} // items popped and not Done (Workers > 0 only)
	overCap   uint64         // Pops that found every queued tenant at its cap
	ringLen   int            // tenants in the ring (queued and not parked)

	// The slow-tenant cap (Options.SlowAfter): what the queue remembers of each tenant between its
	// items, the weights of the active tenants without a sub-queue, the pop time of each item in
	// flight, and the pending wake-up of the waiters when an active tenant expires.
	known      map[string]*tenantState
	idle       map[string]*tenantState // the tenants of known with idle set
	idleWeight int
	poppedAt   map[T]time.Time
	swept      time.Time
	wakeAt     time.Time

	// The gate (Wait): waiters wait on ready for an item they may pop; passes counts the
	// callers of Wait that returned true and have not popped yet.
	ready  *sync.Cond
	passes int
	closed bool
}

var _ workqueue.Queue[string] = (*Queue[string])(nil)

// New returns an empty Queue. It panics if o.TenantOf is nil.
func New[T comparable](o Options[T]) *Queue[T] {
	if o.TenantOf == nil {
		panic("fairqueue: Options.TenantOf is required")
	}
	if o.Weight == nil {
		o.Weight = func(string) int { return 1 }
	}
	if o.LowEvery < 2 {
		o.LowEvery = DefaultLowEvery
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Workers < 0 {
		o.Workers = 0
	}
	if o.Workers < 2 || o.Reserve < 0 {
		o.Reserve = 0
	}
	if o.Reserve >= o.Workers && o.Workers > 0 {
		o.Reserve = o.Workers - 1
	}
	if o.Workers < 2 || o.SlowAfter < 0 {
		o.SlowAfter = 0
	}
	if o.ActiveFor <= 0 {
		o.ActiveFor = DefaultActiveFor
	}
	if o.AfterFunc == nil {
		o.AfterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	q := &Queue[T]{opts: o, tenants: map[string]*subqueue[T]{}, queued: map[T]where{}, wantLow: map[T]bool{},
		inFlight: map[string]int{}, popped: map[T]struct{}{}, known: map[string]*tenantState{}, idle: map[string]*tenantState{}, poppedAt: map[T]time.Time{}}
	q.ready = sync.NewCond(&q.mu)
	return q
}

// gated reports whether Pop may refuse every queued item (a Reserve, a Limiter or the
// slow-tenant cap), so that callers must wait in Wait.
func (q *Queue[T]) gated() bool {
	return q.opts.Reserve > 0 || q.opts.Limiter != nil || q.opts.SlowAfter > 0
}

// Wait blocks until an item can be popped within the rules (each tenant under its cap and
// not delayed by the Limiter) for this caller and every other caller that Wait let through and
// that has not popped yet, then returns true; it returns false once Close was called. Without a
// Reserve or a Limiter it returns at once. A worker calls it before each Get of its client-go
// queue, so a worker with nothing it may take waits here, not in the client-go queue (whose
// Get waits only while Len is 0). Each true return must be followed by one Pop.
//
// A condition that changes between Wait and Pop (a tenant charged into debt, a new tenant
// lowering the caps) can leave Pop with no eligible item; it then serves one over the rules and
// counts it in OverCap, so a caller never stalls.
func (q *Queue[T]) Wait() bool {
	if !q.gated() {
		return true
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.closed && !q.readyLocked(q.passes) {
		q.armExpiryLocked()
		q.ready.Wait()
	}
	if q.closed {
		return false
	}
	q.passes++
	return true
}

// Close makes every Wait, current and future, return false.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.ready.Broadcast()
}

// MarkLow makes the next Push of item (the next Add of an item that is not already queued,
// or its re-queue on Done) go to its tenant's low lane. A high-priority Add in between wins.
// Callers use it as MarkLow(item); queue.Add(item).
func (q *Queue[T]) MarkLow(item T) {
	q.mu.Lock()
	if _, ok := q.queued[item]; !ok {
		q.wantLow[item] = true
	}
	q.mu.Unlock()
}

// MarkHigh cancels a pending MarkLow and promotes the item if it waits in the low lane.
// Callers use it as MarkHigh(item); queue.Add(item).
func (q *Queue[T]) MarkHigh(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.wantLow, item)
	w, ok := q.queued[item]
	if !ok || w.prio == High {
		return
	}
	s := q.tenants[q.opts.TenantOf(item)]
	q.seq++
	w.seq, w.prio = q.seq, High
	q.queued[item] = w
	s.high.push(entry[T]{item: item, seq: w.seq})
	s.liveLow--
}

// Touch implements workqueue.Queue. Priority changes go through MarkHigh, so it does nothing.
func (q *Queue[T]) Touch(T) {}

// Push implements workqueue.Queue: it appends item to its tenant's sub-queue, in the low lane
// if MarkLow was called for it, creating the sub-queue and joining the ring when needed.
func (q *Queue[T]) Push(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.queued[item]; ok {
		return // client-go never pushes a queued item; stay correct if it ever does
	}
	prio := High
	if q.wantLow[item] {
		prio = Low
		delete(q.wantLow, item)
	}
	tenant := q.opts.TenantOf(item)
	s, ok := q.tenants[tenant]
	if !ok {
		w := q.weight(tenant)
		s = &subqueue[T]{tenant: tenant, credit: w, weight: w}
		q.tenants[tenant] = s
		q.joinLocked(s)
		q.activeLocked(tenant)
	}
	q.seq++
	q.queued[item] = where{seq: q.seq, prio: prio, added: q.opts.Now()}
	e := entry[T]{item: item, seq: q.seq}
	if prio == Low {
		s.low.push(e)
		s.liveLow++
	} else {
		s.high.push(e)
	}
	s.live++
	q.n++
	if q.gated() {
		q.ready.Signal()
	}
}

// Len implements workqueue.Queue: the number of queued items over all tenants.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// Pop implements workqueue.Queue: it returns the next item by weighted deficit round-robin
// over tenants, high lane first within a tenant. client-go calls it only when Len() > 0.
//
// With Options.Workers > 0, a tenant whose items in flight reached its cap (capLocked) is
// skipped and keeps its credit for its next turn; a tenant the Limiter delays leaves the ring
// until its time (parkLocked). Without a Reserve or a Limiter, some queued tenant is always
// under its cap when the caller is one of Workers workers: the others hold at most Workers-1
// items, and the caps of the queued tenants add up to at least Workers (each is rounded up from
// its exact share Workers × weight ÷ Σ weights). With them, callers wait in Wait for an
// eligible item. If no tenant is eligible anyway (more goroutines call Get than
// Options.Workers, Done is not called, or a condition changed after Wait), Pop serves the
// cursor's tenant (or a delayed one) and counts it in OverCap, so it never stalls.
func (q *Queue[T]) Pop() T {
	q.mu.Lock()
	defer q.mu.Unlock()
	var zero T
	if q.passes > 0 {
		q.passes--
	}
	var s *subqueue[T]
	if q.opts.Workers > 0 || q.opts.Limiter != nil {
		if s = q.nextEligibleLocked(); s == nil {
			q.overCap++
			if s = q.cursor; s == nil {
				s = q.anyParkedLocked()
			}
		}
		if s != nil && !s.parked {
			q.cursor = s
		}
	} else {
		s = q.cursor
	}
	if s == nil {
		return zero
	}
	item, w := q.popFromLocked(s)
	s.live--
	q.n--
	delete(q.queued, item)
	if q.opts.Workers > 0 {
		q.inFlight[s.tenant]++
		q.popped[item] = struct{}{}
		if q.opts.SlowAfter > 0 {
			q.poppedAt[item] = q.opts.Now()
			q.inFlightLocked(s.tenant, q.inFlight[s.tenant])
		}
	}
	if q.opts.Observe != nil {
		q.opts.Observe(s.tenant, q.opts.Now().Sub(w.added))
	}
	s.credit--
	switch {
	case s.live == 0:
		if s.parked {
			s.parked = false // its timer finds it gone
		} else {
			q.leaveLocked(s) // reclaimed: processing state lives in client-go's sets
			if q.gated() {
				q.ready.Broadcast() // a smaller weight sum raises the others' caps
			}
		}
		delete(q.tenants, s.tenant)
		q.idleLocked(s)
	case s.credit <= 0:
		nw := q.weight(s.tenant)
		if !s.parked {
			q.weightSum += nw - s.weight
			q.cursor = s.next
		}
		s.weight, s.credit = nw, nw
	}
	return item
}

// nextEligibleLocked walks the ring from the cursor, parking the tenants the Limiter delays,
// and returns the first tenant under its cap (nil if none). It visits at most the tenants at
// their cap (fewer than Workers) besides those it parks.
func (q *Queue[T]) nextEligibleLocked() *subqueue[T] {
	s := q.cursor
	for seen := 0; s != nil && seen < q.ringLen; {
		next := s.next
		if q.parkLocked(s) {
			s = next
			continue
		}
		if q.opts.Workers == 0 || q.inFlight[s.tenant] < q.capLocked(s) {
			return s
		}
		seen++
		s = next
	}
	return nil
}

// readyLocked reports whether more than need items can be popped now within the rules: the
// items of the tenants in the ring, each up to the room under its cap. Like
// nextEligibleLocked, it parks the tenants the Limiter delays.
func (q *Queue[T]) readyLocked(need int) bool {
	s, count := q.cursor, 0
	for seen := 0; s != nil && seen < q.ringLen; {
		next := s.next
		if q.parkLocked(s) {
			s = next
			continue
		}
		room := s.live
		if q.opts.Workers > 0 {
			room = min(room, q.capLocked(s)-q.inFlight[s.tenant])
		}
		if count += max(room, 0); count > need {
			return true
		}
		seen++
		s = next
	}
	return false
}

// parkLocked takes s out of the ring when the Limiter delays its tenant, and arranges its return
// at the Limiter's time; it reports whether it did. A parked tenant keeps its queued items and
// its credit.
func (q *Queue[T]) parkLocked(s *subqueue[T]) bool {
	if q.opts.Limiter == nil {
		return false
	}
	now := q.opts.Now()
	at := q.opts.Limiter.ReadyAt(s.tenant)
	if !at.After(now) {
		return false
	}
	q.leaveLocked(s)
	s.parked, s.parkedAt = true, now
	q.opts.AfterFunc(at.Sub(now), func() { q.unpark(s) })
	return true
}

// unpark brings s back into the ring once the Limiter lets its tenant go, or arranges a later
// return when the Limiter's time moved on; it does nothing if s was reclaimed meanwhile.
func (q *Queue[T]) unpark(s *subqueue[T]) {
	q.mu.Lock()
	if !s.parked || q.tenants[s.tenant] != s {
		q.mu.Unlock()
		return
	}
	now := q.opts.Now()
	if at := q.opts.Limiter.ReadyAt(s.tenant); at.After(now) {
		q.opts.AfterFunc(at.Sub(now), func() { q.unpark(s) })
		q.mu.Unlock()
		return
	}
	s.parked = false
	q.joinLocked(s)
	waited := now.Sub(s.parkedAt)
	q.mu.Unlock()
	q.ready.Broadcast()
	if q.opts.Delayed != nil {
		q.opts.Delayed(s.tenant, waited)
	}
}

// anyParkedLocked returns a parked tenant with queued items (nil if none); Pop's last resort.
func (q *Queue[T]) anyParkedLocked() *subqueue[T] {
	for _, s := range q.tenants {
		if s.parked && s.live > 0 {
			return s
		}
	}
	return nil
}

// capLocked returns the most items of s's tenant that may be in flight while s has items
// queued: ceil(Workers × weight ÷ Σ weights of the tenants in the ring), which is Workers when
// s is alone in the ring, and at most Workers-Reserve.
//
// With Options.SlowAfter, a slow tenant also leaves the other active tenants (in the ring or
// not) their recent demand, within their shares (slowCapLocked).
func (q *Queue[T]) capLocked(s *subqueue[T]) int {
	c := (q.opts.Workers*s.weight + q.weightSum - 1) / q.weightSum
	if q.opts.Reserve > 0 {
		c = min(c, q.opts.Workers-q.opts.Reserve)
	}
	if q.slowLocked(s.tenant) {
		c = min(c, q.slowCapLocked(s))
	}
	return c
}

// Done records that a worker finished an item returned by Pop; the pipeline calls it for every
// item it got from its client-go queue, before that queue's Done (so the worker's next Get
// sees the free slot). client-go hands an item to one worker at a time and pops it once per
// Get (an Add while it is processing only marks it dirty; it is pushed again by the client-go
// Done), so each Pop is matched by one Done. A Done of an item not popped (or already Done)
// does nothing. Without Options.Workers it does nothing.
func (q *Queue[T]) Done(item T) {
	if q.opts.Workers == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.popped[item]; !ok {
		return
	}
	delete(q.popped, item)
	t := q.opts.TenantOf(item)
	q.heldLocked(t, item)
	q.inFlightLocked(t, q.inFlight[t])
	if q.inFlight[t] <= 1 {
		delete(q.inFlight, t)
	} else {
		q.inFlight[t]--
	}
	if q.gated() {
		q.ready.Signal()
	}
}

// InFlight returns the number of tenant's items popped and not Done (0 without
// Options.Workers).
func (q *Queue[T]) InFlight(tenant string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.inFlight[tenant]
}

// OverCap returns how many Pops found every queued tenant at its cap and served one over it
// (0 when the pipeline calls Done for every item and runs Options.Workers workers).
func (q *Queue[T]) OverCap() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.overCap
}

// popFromLocked takes the next live entry of s, choosing the lane.
func (q *Queue[T]) popFromLocked(s *subqueue[T]) (T, where) {
	for {
		useLow := s.liveLow > 0 && (s.live == s.liveLow || s.highRun >= q.opts.LowEvery-1)
		var e entry[T]
		if useLow {
			e = s.low.pop()
		} else {
			e = s.high.pop()
		}
		w, ok := q.queued[e.item]
		if !ok || w.seq != e.seq {
			continue // stale entry of a promoted item
		}
		if useLow {
			s.liveLow--
			s.highRun = 0
		} else if s.liveLow > 0 {
			s.highRun++
		} else {
			s.highRun = 0
		}
		return e.item, w
	}
}

func (q *Queue[T]) weight(tenant string) int {
	if w := q.opts.Weight(tenant); w > 1 {
		return w
	}
	return 1
}

// joinLocked inserts s into the ring just before the cursor (it is served last in this round).
func (q *Queue[T]) joinLocked(s *subqueue[T]) {
	q.weightSum += s.weight
	q.ringLen++
	if q.cursor == nil {
		s.prev, s.next = s, s
		q.cursor = s
		return
	}
	c := q.cursor
	s.prev, s.next = c.prev, c
	c.prev.next = s
	c.prev = s
}

// leaveLocked removes s from the ring, moving the cursor on if it pointed at s.
func (q *Queue[T]) leaveLocked(s *subqueue[T]) {
	q.weightSum -= s.weight
	q.ringLen--
	if s.next == s {
		q.cursor = nil
	} else {
		s.prev.next = s.next
		s.next.prev = s.prev
		if q.cursor == s {
			q.cursor = s.next
		}
	}
	s.prev, s.next = nil, nil
}

// TenantStats is one tenant's queue state.
type TenantStats struct {
	// Depth is the number of queued items.
	Depth int
	// Oldest is the time since the oldest queued item was pushed (0 when empty).
	Oldest time.Duration
	// InFlight is the number of items popped and not Done (always 0 without Options.Workers).
	InFlight int
	// Delayed: the Limiter holds the tenant's queued items back now.
	Delayed bool
	// Hold is the moving average of the time the tenant's items held a worker (Pop to Done);
	// tracked only with Options.SlowAfter, 0 before its first Done.
	Hold time.Duration
	// Slow: Hold is at or above Options.SlowAfter, so the tenant is held to its share among the
	// active tenants.
	Slow bool
}

// Stats returns the queue state of every tenant with queued items or items in flight, and, with
// Options.SlowAfter, of every tenant whose hold time the queue remembers. It costs O(tenants +
// stale entries at the lane fronts) and is meant for metrics scrapes.
func (q *Queue[T]) Stats() map[string]TenantStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Now()
	out := make(map[string]TenantStats, len(q.tenants))
	for name, s := range q.tenants {
		st := TenantStats{Depth: s.live, InFlight: q.inFlight[name], Delayed: s.parked}
		for _, l := range []*lane[T]{&s.high, &s.low} {
			for i := l.head; i < len(l.items); i++ {
				e := l.items[i]
				if w, ok := q.queued[e.item]; ok && w.seq == e.seq {
					if age := now.Sub(w.added); age > st.Oldest {
						st.Oldest = age
					}
					break
				}
			}
		}
		out[name] = st
	}
	for name, n := range q.inFlight {
		if _, ok := out[name]; !ok {
			out[name] = TenantStats{InFlight: n}
		}
	}
	for name, k := range q.known {
		if k.hold > 0 {
			st := out[name]
			st.Hold, st.Slow = k.hold, q.slowLocked(name)
			out[name] = st
		}
	}
	return out
}
