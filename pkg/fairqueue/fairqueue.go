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

func (l *lane[T]) empty() bool { return l.head == len(l.items) }

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
	return &Queue[T]{opts: o, tenants: map[string]*subqueue[T]{}, queued: map[T]where{}, wantLow: map[T]bool{}}
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
		s = &subqueue[T]{tenant: tenant, credit: q.weight(tenant)}
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
func (q *Queue[T]) Pop() T {
	q.mu.Lock()
	defer q.mu.Unlock()
	var zero T
	s := q.cursor
	if s == nil {
		return zero
	}
	item, w := q.popFromLocked(s)
	s.live--
	q.n--
	delete(q.queued, item)
	if q.opts.Observe != nil {
		q.opts.Observe(s.tenant, q.opts.Now().Sub(w.added))
	}
	s.credit--
	switch {
	case s.live == 0:
		q.leaveLocked(s) // reclaimed: processing state lives in client-go's sets
		delete(q.tenants, s.tenant)
	case s.credit <= 0:
		s.credit = q.weight(s.tenant)
		q.cursor = s.next
	}
	return item
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
}

// Stats returns the queue state of every tenant with queued items. It costs O(tenants +
// stale entries at the lane fronts) and is meant for metrics scrapes.
func (q *Queue[T]) Stats() map[string]TenantStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Now()
	out := make(map[string]TenantStats, len(q.tenants))
	for name, s := range q.tenants {
		st := TenantStats{Depth: s.live}
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
	return out
}
