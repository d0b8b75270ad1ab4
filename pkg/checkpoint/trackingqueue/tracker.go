package trackingqueue

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// tracker is the mirror of the queue's unfinished items. Lock order (R3): client-go's Typed
// lock → tracker.mu. The storage spy is the only code that takes tracker.mu while holding the
// Typed lock; nothing calls into client-go while holding tracker.mu.
type tracker[T comparable] struct {
	k     *knobs
	clock clock.PassiveClock

	// ndelayed mirrors len(delayed) so that Add skips the lock and the clock read when no
	// window exists (the common case).
	ndelayed atomic.Int64

	mu         sync.Mutex
	seq        uint64            // orders queued and orphans for the snapshot
	queued     map[T]uint64      // item → push sequence: dirty and in the storage
	processing map[T]int         // item → handed-out count (see done)
	delayed    map[T]DelayWindow // readyAt windows of undischarged AddAfter calls
	orphans    map[T]uint64      // item → record sequence: adds dropped by client-go
}

func newTracker[T comparable](c clock.PassiveClock, k *knobs) *tracker[T] {
	return &tracker[T]{
		k:          k,
		clock:      c,
		queued:     map[T]uint64{},
		processing: map[T]int{},
		delayed:    map[T]DelayWindow{},
		orphans:    map[T]uint64{},
	}
}

// pushed records that item entered the storage (Typed.Add of a clean item, or Typed.Done of
// an item added while processing). Called under the Typed lock.
func (t *tracker[T]) pushed(item T) {
	t.mu.Lock()
	t.seq++
	t.queued[item] = t.seq
	t.mu.Unlock()
}

// popped records that Get took item from the storage: queued → processing in one critical
// section, so no snapshot sees it in neither (R1). With watch set, now (read before the pop)
// is the earliest the reconcile can start, and a window whose Latest is not after it is
// discharged: this clears windows that client-go coalesced into an earlier heap entry when
// the item waited in the storage past Latest. Called under the Typed lock.
func (t *tracker[T]) popped(item T, watch bool, now time.Time) {
	t.mu.Lock()
	delete(t.queued, item)
	t.processing[item]++
	if watch {
		t.dischargeLocked(item, now)
	}
	t.mu.Unlock()
}

// done records that a Done of item returned from Typed.Done. It is a count, not a set: after
// Typed.Done releases its lock, another worker may Get the re-pushed item before this runs,
// and that second hand-out must stay tracked.
func (t *tracker[T]) done(item T) {
	t.mu.Lock()
	if n := t.processing[item]; n > 1 {
		t.processing[item] = n - 1
	} else {
		delete(t.processing, item)
	}
	t.mu.Unlock()
}

// delay widens item's window to include w.
func (t *tracker[T]) delay(item T, w DelayWindow) {
	if t.k.has(bugUntrackedDelay) {
		return
	}
	t.mu.Lock()
	if old, ok := t.delayed[item]; ok {
		if old.Earliest.Before(w.Earliest) {
			w.Earliest = old.Earliest
		}
		if old.Latest.After(w.Latest) {
			w.Latest = old.Latest
		}
	}
	t.delayed[item] = w
	t.ndelayed.Store(int64(len(t.delayed)))
	t.mu.Unlock()
}

// hasDelayed reports whether any window may exist, without the lock.
func (t *tracker[T]) hasDelayed() bool { return t.ndelayed.Load() > 0 }

// added records that an Add of item, started at now, made it dirty: the reconcile that follows
// starts after now, so the window is discharged when now is at or after its Latest (R6).
// Earlier adds leave the window, since a later AddAfter may be waiting in client-go's heap as
// an entry of its own.
func (t *tracker[T]) added(item T, now time.Time) {
	t.mu.Lock()
	t.dischargeLocked(item, now)
	t.mu.Unlock()
}

// dischargeLocked drops item's window if its Latest is not after now.
func (t *tracker[T]) dischargeLocked(item T, now time.Time) {
	w, ok := t.delayed[item]
	if !ok {
		return
	}
	end := w.Latest
	if t.k.has(bugMinOnlyWindow) {
		end = w.Earliest
	}
	if !now.Before(end) {
		delete(t.delayed, item)
		t.ndelayed.Store(int64(len(t.delayed)))
	}
}

// orphan records an add that client-go dropped (or may have dropped) because the queue was
// shutting down (R4).
func (t *tracker[T]) orphan(item T) {
	if t.k.has(bugDropOrphans) {
		return
	}
	t.mu.Lock()
	if _, ok := t.orphans[item]; !ok {
		t.seq++
		t.orphans[item] = t.seq
	}
	t.mu.Unlock()
}

func (t *tracker[T]) snapshot() Snapshot[T] {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Snapshot[T]{
		Queued:     inOrder(t.queued),
		Processing: make([]T, 0, len(t.processing)),
		Delayed:    make(map[T]DelayWindow, len(t.delayed)),
		Orphans:    inOrder(t.orphans),
	}
	for x := range t.processing {
		s.Processing = append(s.Processing, x)
	}
	for x, w := range t.delayed {
		s.Delayed[x] = w
	}
	return s
}

func (t *tracker[T]) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.queued) + len(t.processing) + len(t.delayed) + len(t.orphans)
}

// inOrder returns the keys of m sorted by their sequence numbers.
func inOrder[T comparable](m map[T]uint64) []T {
	type kv struct {
		item T
		seq  uint64
	}
	all := make([]kv, 0, len(m))
	for x, s := range m {
		all = append(all, kv{x, s})
	}
	slices.SortFunc(all, func(a, b kv) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]T, len(all))
	for i, e := range all {
		out[i] = e.item
	}
	return out
}

// storage is the spy at hook 1 (workqueue.Queue[T]): client-go calls it only under the Typed
// lock, so the tracker sees pushes and pops in the same order as the queue (design 1.2).
type storage[T comparable] struct {
	inner workqueue.Queue[T]
	tr    *tracker[T]
}

var _ workqueue.Queue[string] = (*storage[string])(nil)

// Touch forwards a re-add of a queued item (a priority hint for the storage).
func (s *storage[T]) Touch(item T) { s.inner.Touch(item) }

// Push forwards and records item as queued.
func (s *storage[T]) Push(item T) {
	s.inner.Push(item)
	s.tr.pushed(item)
}

// Len forwards.
func (s *storage[T]) Len() int { return s.inner.Len() }

// Pop forwards and records the popped item as processing. The clock is read before the pop
// (and only while windows exist), so the time passed on is not after the pop.
func (s *storage[T]) Pop() T {
	var now time.Time
	watch := s.tr.hasDelayed()
	if watch {
		now = s.tr.clock.Now()
	}
	item := s.inner.Pop()
	s.tr.popped(item, watch, now)
	return item
}

// core is the tracking core at hook 2 (workqueue.TypedInterface[T]): it embeds client-go's
// Typed queue and overrides Add, Get, Done and the shutdowns.
type core[T comparable] struct {
	*workqueue.Typed[T]
	tr    *tracker[T]
	clock clock.PassiveClock
	k     *knobs

	// shut is set before Typed's own flag, so a false reading means Typed was not shutting
	// down either; reading it takes no lock, which keeps R3 trivially (no Typed lock is taken
	// while tracker.mu is held, and none is needed to decide about orphans).
	shut atomic.Bool
}

var _ workqueue.TypedInterface[string] = (*core[string])(nil)

// Add marks item dirty through Typed.Add. If the queue is shutting down, client-go may have
// dropped it, so it is kept as an orphan (R4); otherwise a delay window of item whose Latest is
// not after the time Add started is discharged.
func (c *core[T]) Add(item T) {
	var now time.Time
	watch := c.tr.hasDelayed()
	if watch {
		now = c.clock.Now() // before Typed.Add: a Get that follows starts no earlier than now
	}
	c.Typed.Add(item)
	c.k.at(pointAdd)
	if c.shut.Load() {
		c.tr.orphan(item)
		return
	}
	if watch {
		c.tr.added(item, now)
	}
}

// Get returns the next item, or shutdown=true at once when the queue is shutting down, even if
// items are queued (R5; client-go's Typed.Get would hand them out until the storage is empty,
// and a controller would reconcile them with a cancelled context). An item taken off the
// storage while ShutDown ran is kept as an orphan and released.
func (c *core[T]) Get() (item T, shutdown bool) {
	var zero T
	if c.shut.Load() {
		return zero, true
	}
	item, shutdown = c.Typed.Get()
	if shutdown {
		return zero, true
	}
	if c.shut.Load() {
		c.tr.orphan(item)
		c.Typed.Done(item)
		c.tr.done(item)
		return zero, true
	}
	return item, false
}

// Done calls Typed.Done first (it re-pushes an item added while processing, which the spy
// records as queued) and only then drops the processing count, so the item is never in
// neither (R2).
func (c *core[T]) Done(item T) {
	if c.k.has(bugEarlyDecrement) {
		c.tr.done(item)
		c.k.at(pointDone)
		c.Typed.Done(item)
		return
	}
	c.Typed.Done(item)
	c.k.at(pointDone)
	c.tr.done(item)
}

// ShutDown sets the orphan flag, then shuts the Typed queue down.
func (c *core[T]) ShutDown() {
	c.shut.Store(true)
	c.Typed.ShutDown()
}

// ShutDownWithDrain sets the orphan flag, then shuts the Typed queue down and waits for items
// handed out to be Done.
func (c *core[T]) ShutDownWithDrain() {
	c.shut.Store(true)
	c.Typed.ShutDownWithDrain()
}

// delaying is the AddAfter observer at hook 3 (workqueue.TypedDelayingInterface[T]): client-go
// keeps delayed items in a heap local to its waiting goroutine, so their windows are recorded
// here, before the call reaches that heap. AddRateLimited arrives here as AddAfter.
type delaying[T comparable] struct {
	workqueue.TypedDelayingInterface[T]
	tr    *tracker[T]
	core  *core[T]
	clock clock.PassiveClock
	k     *knobs
}

var _ workqueue.TypedDelayingInterface[string] = (*delaying[string])(nil)

// AddAfter records item's readyAt (now + d, with now read when the call starts) in its window,
// then forwards. A delay of 0 or less is an Add; if client-go dropped it because the queue is
// shutting down, it is kept as an orphan. Windows are kept after ShutDown (R4).
func (d *delaying[T]) AddAfter(item T, delay time.Duration) {
	if delay > 0 {
		at := d.clock.Now().Add(delay)
		d.tr.delay(item, DelayWindow{Earliest: at, Latest: at})
		d.k.at(pointAddAfter)
	}
	d.TypedDelayingInterface.AddAfter(item, delay)
	if delay <= 0 && d.core.shut.Load() {
		d.tr.orphan(item)
	}
}

// knobs are test-only: deliberately injected bugs, to prove the tests catch them, and a hook
// called at interleaving points. nil in production.
type knobs struct {
	bugs  bug
	yield func(point string)
}

// bug is a set of injected bugs.
type bug uint

const (
	// bugUntrackedDelay: AddAfter records no window.
	bugUntrackedDelay bug = 1 << iota
	// bugEarlyDecrement: Done drops the processing count before Typed.Done (R2).
	bugEarlyDecrement
	// bugMinOnlyWindow: an Add at or after a window's Earliest clears it (R6).
	bugMinOnlyWindow
	// bugDropOrphans: adds dropped at shutdown are not kept (R4).
	bugDropOrphans
)

// Interleaving points passed to knobs.yield.
const (
	pointAdd      = "add"      // core.Add: after Typed.Add, before the bookkeeping
	pointDone     = "done"     // core.Done: between Typed.Done and the decrement
	pointAddAfter = "addAfter" // delaying.AddAfter: after recording, before forwarding
)

func (k *knobs) has(b bug) bool { return k != nil && k.bugs&b != 0 }

func (k *knobs) at(point string) {
	if k != nil && k.yield != nil {
		k.yield(point)
	}
}
