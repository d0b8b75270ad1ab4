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
	// items). A tenant alone uses every worker. 0 means no cap.
	Workers int
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
	return &Queue[T]{opts: o, tenants: map[string]*subqueue[T]{}, queued: map[T]where{}, wantLow: map[T]bool{},
		inFlight: map[string]int{}, popped: map[T]struct{}{}}
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
// With Options.Workers > 0, a tenant whose items in flight reached its share (capLocked) is
// skipped and keeps its credit for its next turn. Some queued tenant is always under its cap
// when the caller is one of Workers workers: the others hold at most Workers-1 items, and the
// caps of the queued tenants add up to at least Workers (each is rounded up from its exact
// share Workers × weight ÷ Σ weights). If that does not hold (more goroutines call Get than
// Options.Workers, or Done is not called), Pop serves the cursor's tenant anyway and counts it
// in OverCap, so it never stalls.
func (q *Queue[T]) Pop() T {
	q.mu.Lock()
	defer q.mu.Unlock()
	var zero T
	s := q.cursor
	if s == nil {
		return zero
	}
	if q.opts.Workers > 0 {
		// At most Workers-1 tenants are at their cap (each holds ≥ 1 item in flight), so the
		// walk is bounded by the number of workers, not of tenants.
		for s = q.cursor; q.inFlight[s.tenant] >= q.capLocked(s); {
			s = s.next
			if s == q.cursor {
				q.overCap++
				break
			}
		}
		q.cursor = s
	}
	item, w := q.popFromLocked(s)
	s.live--
	q.n--
	delete(q.queued, item)
	if q.opts.Workers > 0 {
		q.inFlight[s.tenant]++
		q.popped[item] = struct{}{}
	}
	if q.opts.Observe != nil {
		q.opts.Observe(s.tenant, q.opts.Now().Sub(w.added))
	}
	s.credit--
	switch {
	case s.live == 0:
		q.leaveLocked(s) // reclaimed: processing state lives in client-go's sets
		delete(q.tenants, s.tenant)
	case s.credit <= 0:
		nw := q.weight(s.tenant)
		q.weightSum += nw - s.weight
		s.weight, s.credit = nw, nw
		q.cursor = s.next
	}
	return item
}

// capLocked returns the most items of s's tenant that may be in flight while s has items
// queued: ceil(Workers × weight ÷ Σ weights of the queued tenants), which is Workers when s is
// alone in the ring.
func (q *Queue[T]) capLocked(s *subqueue[T]) int {
	return (q.opts.Workers*s.weight + q.weightSum - 1) / q.weightSum
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
	if q.inFlight[t] <= 1 {
		delete(q.inFlight, t)
	} else {
		q.inFlight[t]--
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
}

// Stats returns the queue state of every tenant with queued items or items in flight. It costs O(tenants +
// stale entries at the lane fronts) and is meant for metrics scrapes.
func (q *Queue[T]) Stats() map[string]TenantStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Now()
	out := make(map[string]TenantStats, len(q.tenants))
	for name, s := range q.tenants {
		st := TenantStats{Depth: s.live, InFlight: q.inFlight[name]}
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
	return out
}
