package trackingqueue

import (
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// DelayWindow is the span of readyAt times requested for one item by AddAfter or
// AddRateLimited calls that have not been discharged yet (design 4.2, R6).
//
// client-go's delaying queue coalesces delays per item to the earliest readyAt, but a call that
// races with the firing of an older heap entry becomes a fresh entry at its own readyAt. The
// queue cannot see which happened, so it keeps both ends: Earliest is the smallest readyAt
// seen, Latest the largest. The window is cleared only when an Add of the item is observed at a
// time at or after Latest, or when Get hands the item out at or after Latest.
type DelayWindow struct{ Earliest, Latest time.Time }

// Snapshot lists every item with an outstanding reconcile obligation at one instant
// (invariant I1 of design 4.2). An item may appear in more than one list, for example queued
// and delayed.
type Snapshot[T comparable] struct {
	// Queued items are dirty and not processing: in the storage (fair or FIFO), in push order.
	Queued []T
	// Processing items were returned by Get and their Done has not returned yet (their
	// reconcile is unfinished).
	Processing []T
	// Delayed items have an AddAfter or AddRateLimited whose readyAt has not been reached by an
	// Add or a Get of the item at or after it (see DelayWindow).
	Delayed map[T]DelayWindow
	// Orphans are adds client-go dropped because the queue was shutting down: Add, AddAfter
	// with a delay of 0 or less, and items that Get took off the storage after ShutDown began
	// (Get then reports shutdown and keeps the item here instead of handing it out).
	Orphans []T
}

// Len returns the number of distinct items in s. It is O(items) and allocates a set.
func (s Snapshot[T]) Len() int { return len(s.items()) }

// items returns the distinct items of s.
func (s Snapshot[T]) items() map[T]struct{} {
	out := make(map[T]struct{}, len(s.Queued)+len(s.Processing)+len(s.Delayed)+len(s.Orphans))
	for _, l := range [][]T{s.Queued, s.Processing, s.Orphans} {
		for _, x := range l {
			out[x] = struct{}{}
		}
	}
	for x := range s.Delayed {
		out[x] = struct{}{}
	}
	return out
}

// Config configures a Queue.
type Config[T comparable] struct {
	// Name is passed to every client-go layer as the queue name; client-go registers workqueue
	// metrics under it when a metrics provider is set. Empty means no metrics.
	Name string
	// Clock drives delays, windows and Seed's late fires. Defaults to the real clock; tests
	// pass k8s.io/utils/clock/testing.FakeClock.
	Clock clock.WithTicker
	// RateLimiter computes AddRateLimited delays. Required: New panics when it is nil.
	RateLimiter workqueue.TypedRateLimiter[T]
	// Storage orders the queued items (client-go's workqueue.Queue[T] hook, called under the
	// Typed queue's lock). Defaults to workqueue.DefaultQueue (FIFO); the per-tenant fair queue
	// (pkg/fairqueue) goes here. It must not be shared with another queue.
	Storage workqueue.Queue[T]
}

// Queue is client-go's rate-limiting workqueue (v0.37.2) with tracking of every unfinished
// item, so that a checkpoint can list them (Snapshot) and a restarted process can re-create
// them (Seed). It implements workqueue.TypedRateLimitingInterface[T] and is safe for
// concurrent use.
//
// Two behaviours differ from the plain client-go queue, both as in controller-runtime's
// priority queue: after ShutDown, Get reports shutdown at once instead of draining the queue
// (R5), and ShutDownWithDrain waits only for items already handed out.
type Queue[T comparable] struct {
	workqueue.TypedRateLimitingInterface[T]

	tr    *tracker[T]
	core  *core[T]
	dq    workqueue.TypedDelayingInterface[T] // client-go's delaying layer, below the observer
	clock clock.WithTicker

	stopOnce sync.Once
	stopCh   chan struct{} // closed by ShutDown; stops Seed's late fires
}

var _ workqueue.TypedRateLimitingInterface[string] = (*Queue[string])(nil)

// New builds the queue stack of design section 1.3 from client-go's three hooks:
//
//	rate limiting (client-go) → AddAfter observer (hook 3: TypedRateLimitingQueueConfig.DelayingQueue)
//	  → delaying (client-go) → tracking core (hook 2: TypedDelayingQueueConfig.Queue, embeds *Typed)
//	  → *workqueue.Typed → storage spy (hook 1: TypedQueueConfig.Queue) → c.Storage
//
// It panics if c.RateLimiter is nil.
func New[T comparable](c Config[T]) *Queue[T] { return newQueue(c, nil) }

// newQueue is New with test-only knobs (nil in production).
func newQueue[T comparable](c Config[T], k *knobs) *Queue[T] {
	if c.RateLimiter == nil {
		panic("trackingqueue: Config.RateLimiter is required")
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Storage == nil {
		c.Storage = workqueue.DefaultQueue[T]()
	}
	tr := newTracker[T](c.Clock, k)
	typed := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[T]{
		Name:  c.Name,
		Clock: c.Clock,
		Queue: &storage[T]{inner: c.Storage, tr: tr},
	})
	co := &core[T]{Typed: typed, tr: tr, clock: c.Clock, k: k}
	dq := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[T]{
		Name:  c.Name,
		Clock: c.Clock,
		Queue: co,
	})
	rl := workqueue.NewTypedRateLimitingQueueWithConfig(c.RateLimiter, workqueue.TypedRateLimitingQueueConfig[T]{
		Name:          c.Name,
		Clock:         c.Clock,
		DelayingQueue: &delaying[T]{TypedDelayingInterface: dq, tr: tr, core: co, clock: c.Clock, k: k},
	})
	return &Queue[T]{
		TypedRateLimitingInterface: rl,
		tr:                         tr,
		core:                       co,
		dq:                         dq,
		clock:                      c.Clock,
		stopCh:                     make(chan struct{}),
	}
}

// Snapshot returns every item with an outstanding reconcile obligation (invariant I1), read
// under one lock, so it is the state of one instant: an item moving between lists at that
// time is in one of them, never in none. It keeps working after ShutDown (orphans and delay windows survive it), which
// is what the final checkpoint of a graceful shutdown needs. Cost: O(tracked items).
func (q *Queue[T]) Snapshot() Snapshot[T] { return q.tr.snapshot() }

// Size returns an upper bound of the number of unfinished items (an item in two lists counts
// twice) in O(1), for the checkpoint size budget (--checkpoint-max-items).
func (q *Queue[T]) Size() int { return q.tr.size() }

// Seed re-creates the obligations of s, taken from another queue (normally the one of the
// previous process, restored from a checkpoint). It is safe to call at any time and more than
// once (adds are idempotent and windows merge); calling it before workers start resumes the
// saved work before new work.
//
// Queued, Processing and Orphans items are added at once. A Delayed item is scheduled through
// client-go's delaying queue to fire at its window's Earliest, and, when Latest is later, added
// again at Latest by a timer of this queue (one goroutine per Seed call, ended by its last fire
// or by ShutDown), so it costs at most one extra reconcile; its window is tracked until then.
// Times already past fire at once. Seed after ShutDown records every item as an orphan or a
// window, so nothing is lost.
func (q *Queue[T]) Seed(s Snapshot[T]) {
	for _, l := range [][]T{s.Queued, s.Processing, s.Orphans} {
		for _, x := range l {
			q.Add(x)
		}
	}
	now := q.clock.Now()
	var late []lateFire[T]
	for x, w := range s.Delayed {
		if w.Latest.Before(w.Earliest) {
			w.Latest = w.Earliest
		}
		if w.Latest.After(now) {
			q.tr.delay(x, w)
			if w.Latest.After(w.Earliest) {
				late = append(late, lateFire[T]{item: x, at: w.Latest})
			}
		}
		if w.Earliest.After(now) {
			q.dq.AddAfter(x, w.Earliest.Sub(now))
		} else {
			q.Add(x) // through the core: an orphan after ShutDown; clears a window past Latest
		}
	}
	if len(late) > 0 {
		slices.SortFunc(late, func(a, b lateFire[T]) int { return a.at.Compare(b.at) })
		go q.fireLate(late)
	}
}

// lateFire is one Seed add due at a window's Latest.
type lateFire[T comparable] struct {
	item T
	at   time.Time
}

// fireLate adds each item of late (sorted by time) when its time comes, until ShutDown. Items
// not yet fired at ShutDown stay in the snapshot as delay windows.
func (q *Queue[T]) fireLate(late []lateFire[T]) {
	for _, f := range late {
		if d := f.at.Sub(q.clock.Now()); d > 0 {
			t := q.clock.NewTimer(d)
			select {
			case <-t.C():
			case <-q.stopCh:
				t.Stop()
				return
			}
		}
		q.Add(f.item)
	}
}

// ShutDown stops the queue (client-go semantics, plus: Get reports shutdown at once, later
// adds are kept as orphans, delay windows survive) and stops Seed's pending late fires.
func (q *Queue[T]) ShutDown() {
	q.stop()
	q.TypedRateLimitingInterface.ShutDown()
}

// ShutDownWithDrain is ShutDown that also waits until every item handed out by Get is Done.
// Queued items are not handed out any more, so this does not wait for them.
func (q *Queue[T]) ShutDownWithDrain() {
	q.stop()
	q.TypedRateLimitingInterface.ShutDownWithDrain()
}

func (q *Queue[T]) stop() { q.stopOnce.Do(func() { close(q.stopCh) }) }
