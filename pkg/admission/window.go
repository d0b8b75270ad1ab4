package admission

import (
	"math"
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultMinWindow     = 32
	DefaultMaxWindow     = 200
	DefaultPendingExpiry = 30 * time.Second
	DefaultTolerance     = 3.0
	// DefaultAdjustInterval is how often the window size is adapted (Adjust).
	DefaultAdjustInterval = 500 * time.Millisecond
	// baselineHistory is how many adjust intervals the lowest bind latency is remembered.
	baselineHistory = 120
)

// Options configures a Window.
type Options[T comparable] struct {
	// MinWindow and MaxWindow bound the window, in Pods (defaults DefaultMinWindow and
	// DefaultMaxWindow). The window starts at MinWindow.
	MinWindow, MaxWindow int
	// Weight returns a tenant's weight (values below 1 count as 1). Defaults to 1.
	Weight func(tenant string) int
	// Wake is called, without the Window's lock, for a waiting item granted a slot. The caller
	// runs the item again; its next Acquire takes the slot (Settle returns a slot not taken).
	Wake func(item T)
	// PendingExpiry: a Pod created (Created) or observed unbound for this long stops counting
	// against the window (the scheduler has seen it and could not place it, or another
	// scheduler owns it). Defaults to DefaultPendingExpiry (30 s).
	PendingExpiry time.Duration
	// Tolerance: the window shrinks while the mean create-to-bind latency of an interval
	// exceeds Tolerance × the lowest interval mean of the last minute. Defaults to 3.
	Tolerance float64
	// OnAdmit, if set, is called (under the lock: keep it cheap) for every admitted item with
	// its tenant and how long it waited (0 for admission on first ask).
	OnAdmit func(tenant string, waited time.Duration)
	// Now returns the current time; for tests. Defaults to time.Now.
	Now func() time.Time
}

// pendingPod is one super Pod counted against the window.
type pendingPod struct {
	tenant string
	since  time.Time
	// created is when Created reported the Pod's creation (zero before, and for Pods found by
	// Observe): the start of its bind latency sample.
	created time.Time
	// inScheduler is true once the Pod exists in the super cluster (Created, or found by
	// Observe); before, its slot covers the syncer's own work for it.
	inScheduler bool
}

// tenantState is one tenant's share of the window.
type tenantState[T comparable] struct {
	held    int // pending Pods + granted slots
	line    []T // items waiting, in arrival order (entries not in waiting are stale)
	waiting map[T]time.Time
}

// expiry is a pending Pod's place in the expiry order.
type expiry struct {
	key   string
	since time.Time
}

// Window is a weighted, work-conserving admission window for super Pods: a bound on the Pods
// created in the super cluster and not yet bound to a node, shared among the tenants that have
// Pods waiting in proportion to their weights. Its size adapts to what the super scheduler
// absorbs (Adjust). It is safe for concurrent use.
//
// The rule, in the spirit of the apiserver's API Priority and Fairness (KEP-1040: seats of a
// priority level shared by fair queuing over flows): a tenant t with held_t slots may create a
// Pod at once if held_t < share_t = ceil(window × w_t ÷ Σ w of the tenants holding or waiting,
// t included), or if fewer than window slots are held and no other tenant waits. Otherwise the
// item waits in its tenant's line; each freed slot goes to the waiting tenant with the lowest
// (held_t + 1) ÷ w_t (Wake). A tenant alone may use the whole window; a tenant whose Pods never
// bind (unschedulable, gated) only fills its own share, and each of its Pods stops counting after
// PendingExpiry.
type Window[T comparable] struct {
	o Options[T]

	mu      sync.Mutex
	limit   float64
	held    int
	pending map[string]pendingPod
	order   []expiry // pending Pods by since (entries whose since differs are stale)
	tenants map[string]*tenantState[T]
	granted map[T]string   // item → tenant holding a slot for it
	asked   map[T]struct{} // items that called Acquire since their last Settle

	// latency estimation (Adjust)
	sum       time.Duration
	samples   int
	saturated bool // some item waited in this interval
	history   []time.Duration
	// congested is set by the first shrink (the window then grows by √window, not doubling)
	// and cleared when the window goes idle.
	congested bool
}

// New returns a Window.
func New[T comparable](o Options[T]) *Window[T] {
	if o.MinWindow < 1 {
		o.MinWindow = DefaultMinWindow
	}
	if o.MaxWindow < o.MinWindow {
		o.MaxWindow = max(DefaultMaxWindow, o.MinWindow)
	}
	if o.Weight == nil {
		o.Weight = func(string) int { return 1 }
	}
	if o.PendingExpiry <= 0 {
		o.PendingExpiry = DefaultPendingExpiry
	}
	if o.Tolerance <= 1 {
		o.Tolerance = DefaultTolerance
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Window[T]{
		o: o, limit: float64(o.MinWindow),
		pending: map[string]pendingPod{}, tenants: map[string]*tenantState[T]{},
		granted: map[T]string{}, asked: map[T]struct{}{},
	}
}

// Acquire asks for a slot for item of tenant, whose super Pod will be named key
// (namespace/name). ok is true when the caller may create the Pod now; took is true when this
// call took a slot for it (the caller then reports Created or Abort), false when the Pod was
// counted already (admitted before, or seen by Observe) and nothing is to be given back. With
// ok false the item waits: Wake runs it again once a slot is granted to it. An item already
// waiting keeps its place.
func (w *Window[T]) Acquire(tenant string, item T, key string) (ok, took bool) {
	w.mu.Lock()
	ok, took, wake := w.acquireLocked(tenant, item, key)
	w.mu.Unlock()
	w.wake(wake)
	return ok, took
}

func (w *Window[T]) acquireLocked(tenant string, item T, key string) (ok, took bool, wake []T) {
	now := w.o.Now()
	w.asked[item] = struct{}{}
	ts := w.tenantLocked(tenant)
	if _, counted := w.pending[key]; counted {
		// A slot granted meanwhile, or a place in line, is not needed.
		if owner, granted := w.granted[item]; granted {
			delete(w.granted, item)
			w.releaseLocked(owner)
		}
		w.leaveLineLocked(tenant, item)
		return true, false, w.grantLocked()
	}
	if owner, granted := w.granted[item]; granted && owner == tenant {
		delete(w.granted, item)
		w.addPendingLocked(key, tenant, now) // the granted slot becomes the Pod's
		return true, true, nil
	}
	if since, waiting := ts.waiting[item]; waiting {
		if head, _ := w.headLocked(ts); head == item && w.mayAdmitLocked(tenant, ts) {
			w.leaveLineLocked(tenant, item)
			ts = w.tenantLocked(tenant)
			ts.held++
			w.held++
			w.addPendingLocked(key, tenant, now)
			w.admittedLocked(tenant, now.Sub(since))
			return true, true, nil
		}
		w.saturated = true
		return false, false, nil
	}
	if len(ts.waiting) == 0 && w.mayAdmitLocked(tenant, ts) {
		ts.held++
		w.held++
		w.addPendingLocked(key, tenant, now)
		w.admittedLocked(tenant, 0)
		return true, true, nil
	}
	if len(ts.waiting) == 0 {
		ts.line = ts.line[:0] // only stale entries left
	}
	ts.waiting[item] = now
	ts.line = append(ts.line, item)
	w.saturated = true
	return false, false, nil
}

// leaveLineLocked takes item out of tenant's line, compacting the line when it is mostly stale
// entries (so a tenant that keeps adding and dropping waiting Pods cannot grow it).
func (w *Window[T]) leaveLineLocked(tenant string, item T) {
	ts := w.tenants[tenant]
	if ts == nil {
		return
	}
	if _, ok := ts.waiting[item]; !ok {
		return
	}
	delete(ts.waiting, item)
	switch {
	case len(ts.waiting) == 0:
		clear(ts.line)
		ts.line = ts.line[:0]
	case len(ts.line) > 2*len(ts.waiting)+16:
		live := make([]T, 0, len(ts.waiting))
		seen := make(map[T]struct{}, len(ts.waiting))
		for _, it := range ts.line {
			if _, ok := ts.waiting[it]; ok {
				if _, dup := seen[it]; !dup {
					seen[it] = struct{}{}
					live = append(live, it)
				}
			}
		}
		ts.line = live
	}
	w.dropIdleLocked(tenant, ts)
}

// headLocked returns ts's first live waiting item (false when none), dropping stale entries
// from the front of its line.
func (w *Window[T]) headLocked(ts *tenantState[T]) (T, bool) {
	var zero T
	for len(ts.line) > 0 {
		if _, ok := ts.waiting[ts.line[0]]; ok {
			return ts.line[0], true
		}
		ts.line[0] = zero
		ts.line = ts.line[1:]
	}
	return zero, false
}

// releaseLocked returns one slot held by tenant.
func (w *Window[T]) releaseLocked(tenant string) {
	w.held--
	if ts := w.tenants[tenant]; ts != nil {
		ts.held--
		w.dropIdleLocked(tenant, ts)
	}
}

// Created records that the Pod admitted for key was created: its time from here to Observe
// seeing it bound is a bind-latency sample (the time the super scheduler took, without the
// syncer's own work before the create).
func (w *Window[T]) Created(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p, ok := w.pending[key]; ok && p.created.IsZero() {
		now := w.o.Now()
		p.created, p.inScheduler, p.since = now, true, now
		w.pending[key] = p
		w.order = append(w.order, expiry{key: key, since: now}) // expiry counts from here
	}
}

// Abort returns the slot of a Pod whose creation failed (key as given to Acquire).
func (w *Window[T]) Abort(key string) {
	w.mu.Lock()
	p, ok := w.pending[key]
	if ok {
		w.removePendingLocked(key, p)
	}
	wake := w.grantLocked()
	w.mu.Unlock()
	w.wake(wake)
}

// Settle ends one run of item of tenant. If the run did not call Acquire, item's granted slot
// is returned and its place in line dropped (its Pod no longer needs creating: deleted, created
// meanwhile, refused). Callers call it after every run of an item that may call Acquire.
func (w *Window[T]) Settle(tenant string, item T) {
	w.mu.Lock()
	if _, ok := w.asked[item]; ok {
		delete(w.asked, item)
		w.mu.Unlock()
		return
	}
	if owner, ok := w.granted[item]; ok {
		delete(w.granted, item)
		w.releaseLocked(owner)
	}
	w.leaveLineLocked(tenant, item)
	wake := w.grantLocked()
	w.mu.Unlock()
	w.wake(wake)
}

// Observe records the state of super Pod key of tenant, created at created, as seen by a
// watch: pending (not bound, not terminating, not marked unschedulable) or not. A Pod older than
// PendingExpiry is never counted. A Pod seen bound gives a create-to-bind latency sample
// (Adjust) when Created was called for it.
func (w *Window[T]) Observe(tenant, key string, created time.Time, pending, bound bool) {
	w.mu.Lock()
	now := w.o.Now()
	p, ok := w.pending[key]
	switch {
	case pending && !ok && now.Sub(created) < w.o.PendingExpiry:
		w.tenantLocked(tenant).held++
		w.held++
		w.addPendingLocked(key, tenant, now)
		p := w.pending[key]
		p.inScheduler = true
		w.pending[key] = p
	case !pending && ok:
		if bound && !p.created.IsZero() {
			w.sum += now.Sub(p.created)
			w.samples++
		}
		w.removePendingLocked(key, p)
	}
	wake := w.grantLocked()
	w.mu.Unlock()
	w.wake(wake)
}

// Forget drops a removed tenant's waiting items and granted slots. Its pending Pods still count
// until Observe sees them go.
func (w *Window[T]) Forget(tenant string) {
	w.mu.Lock()
	ts := w.tenants[tenant]
	if ts != nil {
		for item, t := range w.granted {
			if t == tenant {
				delete(w.granted, item)
				ts.held--
				w.held--
			}
		}
		clear(ts.waiting)
		ts.line = nil
		w.dropIdleLocked(tenant, ts)
	}
	wake := w.grantLocked()
	w.mu.Unlock()
	w.wake(wake)
}

// Adjust adapts the window to the super scheduler and expires old pending Pods; call it every
// DefaultAdjustInterval. The scheduler is the limit when at least half of the window's slots
// are Pods created and not yet bound and their mean create-to-bind latency in the interval
// exceeds Tolerance × the lowest interval mean of the last baselineHistory intervals: then the
// window shrinks by a tenth. Otherwise, if some item waited in the interval, the window (not
// the scheduler) was the limit and it grows: doubling (TCP's slow start) until the first
// shrink, by √window after it; an idle window (nothing held or waiting) starts slow again. The
// syncer's own work before a create (reads, tokens, slower on a busy machine) holds slots too
// and does not shrink it. Between MinWindow and MaxWindow. This is delay-based congestion
// control in the manner of TCP Vegas; without the slow start a burst arriving faster than the
// window grows (√32 a step from 32, about 9 s to reach 200) waited in the syncer while the
// super scheduler idled.
func (w *Window[T]) Adjust() {
	w.mu.Lock()
	now := w.o.Now()
	w.expireLocked(now)
	inScheduler := 0
	for _, p := range w.pending {
		if p.inScheduler {
			inScheduler++
		}
	}
	schedulerFull := float64(2*inScheduler) >= w.limit
	slow := false
	if w.samples > 0 {
		mean := w.sum / time.Duration(w.samples)
		w.history = append(w.history, mean)
		if len(w.history) > baselineHistory {
			w.history = w.history[len(w.history)-baselineHistory:]
		}
		base := mean
		for _, h := range w.history {
			base = min(base, h)
		}
		slow = float64(mean) > w.o.Tolerance*float64(base)
	}
	switch {
	case slow && schedulerFull:
		w.limit = max(float64(w.o.MinWindow), w.limit*0.9)
		w.congested = true
	case w.saturated && (!schedulerFull || (w.samples > 0 && !slow)):
		if w.congested {
			w.limit = min(float64(w.o.MaxWindow), w.limit+math.Sqrt(w.limit))
		} else {
			w.limit = min(float64(w.o.MaxWindow), w.limit*2) // slow start
		}
	case w.held == 0 && !w.saturated:
		w.congested = false // idle: the next burst starts slow again
	}
	w.sum, w.samples, w.saturated = 0, 0, w.anyWaitingLocked()
	wake := w.grantLocked()
	w.mu.Unlock()
	w.wake(wake)
}

// Items returns the items waiting or holding a granted slot (for checkpoints: they are not in
// any queue meanwhile).
func (w *Window[T]) Items() []T {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []T
	for item := range w.granted {
		out = append(out, item)
	}
	for _, ts := range w.tenants {
		for item := range ts.waiting {
			out = append(out, item)
		}
	}
	return out
}

// Stats is a snapshot of the window for metrics.
type Stats struct {
	// Window is the current size in Pods; Held the slots in use (pending Pods and grants).
	Window, Held int
	// Waiting is the number of waiting items per tenant (tenants with none are left out).
	Waiting map[string]int
	// HeldBy is the number of slots held per tenant.
	HeldBy map[string]int
}

// Stats returns the window's current state.
func (w *Window[T]) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := Stats{Window: int(w.limit), Held: w.held, Waiting: map[string]int{}, HeldBy: map[string]int{}}
	for name, ts := range w.tenants {
		if n := len(ts.waiting); n > 0 {
			st.Waiting[name] = n
		}
		if ts.held > 0 {
			st.HeldBy[name] = ts.held
		}
	}
	return st
}

func (w *Window[T]) tenantLocked(tenant string) *tenantState[T] {
	ts := w.tenants[tenant]
	if ts == nil {
		ts = &tenantState[T]{waiting: map[T]time.Time{}}
		w.tenants[tenant] = ts
	}
	return ts
}

func (w *Window[T]) weight(tenant string) float64 {
	return float64(max(1, w.o.Weight(tenant)))
}

// mayAdmitLocked applies the admission rule (see Window) to a new Pod of tenant.
func (w *Window[T]) mayAdmitLocked(tenant string, ts *tenantState[T]) bool {
	othersWait := false
	sum := w.weight(tenant)
	for name, o := range w.tenants {
		if name == tenant {
			continue
		}
		if len(o.waiting) > 0 {
			othersWait = true
		}
		if len(o.waiting) > 0 || o.held > 0 {
			sum += w.weight(name)
		}
	}
	if !othersWait && float64(w.held) < w.limit {
		return true
	}
	share := math.Ceil(w.limit * w.weight(tenant) / sum)
	return float64(ts.held) < share
}

// grantLocked hands free slots to waiting tenants, lowest (held+1)/weight first, and returns
// the items to wake.
func (w *Window[T]) grantLocked() []T {
	var wake []T
	now := w.o.Now()
	for float64(w.held) < w.limit {
		var best string
		var bestTS *tenantState[T]
		bestScore := math.Inf(1)
		for name, ts := range w.tenants {
			if len(ts.waiting) == 0 {
				continue
			}
			score := float64(ts.held+1) / w.weight(name)
			if score < bestScore || (score == bestScore && name < best) {
				best, bestTS, bestScore = name, ts, score
			}
		}
		if bestTS == nil {
			break
		}
		item, _ := w.headLocked(bestTS)
		since := bestTS.waiting[item]
		bestTS.held++ // before leaving the line, so the tenant's state is kept
		w.leaveLineLocked(best, item)
		w.held++
		w.granted[item] = best
		w.admittedLocked(best, now.Sub(since))
		wake = append(wake, item)
	}
	return wake
}

func (w *Window[T]) wake(items []T) {
	if w.o.Wake == nil {
		return
	}
	for _, it := range items {
		w.o.Wake(it)
	}
}

func (w *Window[T]) admittedLocked(tenant string, waited time.Duration) {
	if w.o.OnAdmit != nil {
		w.o.OnAdmit(tenant, waited)
	}
}

func (w *Window[T]) anyWaitingLocked() bool {
	for _, ts := range w.tenants {
		if len(ts.waiting) > 0 {
			return true
		}
	}
	return false
}

// addPendingLocked records key as pending; the caller has counted its slot in held.
func (w *Window[T]) addPendingLocked(key, tenant string, now time.Time) {
	w.pending[key] = pendingPod{tenant: tenant, since: now}
	w.order = append(w.order, expiry{key: key, since: now})
}

func (w *Window[T]) removePendingLocked(key string, p pendingPod) {
	delete(w.pending, key)
	w.releaseLocked(p.tenant)
}

func (w *Window[T]) dropIdleLocked(tenant string, ts *tenantState[T]) {
	if ts.held <= 0 && len(ts.waiting) == 0 {
		delete(w.tenants, tenant)
	}
}

// expireLocked stops counting Pods pending for longer than PendingExpiry.
func (w *Window[T]) expireLocked(now time.Time) {
	cut := now.Add(-w.o.PendingExpiry)
	i := 0
	for ; i < len(w.order); i++ {
		e := w.order[i]
		if e.since.After(cut) {
			break
		}
		// Only Pods in the super cluster expire: a slot of the syncer's own work before the
		// create ends with Created or Abort.
		if p, ok := w.pending[e.key]; ok && p.since.Equal(e.since) && p.inScheduler {
			w.removePendingLocked(e.key, p)
		}
	}
	w.order = w.order[i:]
	if cap(w.order) > 64 && len(w.order) < cap(w.order)/4 {
		w.order = append([]expiry(nil), w.order...)
	}
}
