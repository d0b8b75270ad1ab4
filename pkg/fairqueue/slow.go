package fairqueue

import "time"

// tenantState is what the queue remembers of a tenant for the slow-tenant cap
// (Options.SlowAfter).
type tenantState struct {
	// hold is the moving average of the tenant's items' times from Pop to Done (0 until the
	// first Done).
	hold time.Duration
	// last is the tenant's last Push of a new sub-queue, reclaim of its sub-queue, or Done.
	last time.Time
	// idle: the tenant has no sub-queue and counts as active (items in flight, or last less
	// than ActiveFor ago); its weight is counted in Queue.idleWeight.
	idle   bool
	weight int
}

// stateLocked returns tenant's state, creating it.
func (q *Queue[T]) stateLocked(tenant string) *tenantState {
	st, ok := q.known[tenant]
	if !ok {
		st = &tenantState{}
		q.known[tenant] = st
	}
	return st
}

// activeLocked records that tenant has a sub-queue again (it is counted in the ring's weight
// sum, no longer as idle).
func (q *Queue[T]) activeLocked(tenant string) {
	if q.opts.SlowAfter <= 0 {
		return
	}
	st := q.stateLocked(tenant)
	if st.idle {
		st.idle = false
		q.idleWeight -= st.weight
	}
	st.last = q.opts.Now()
}

// idleLocked records that s's sub-queue was reclaimed: its tenant still counts as active while
// it has items in flight and for ActiveFor after its last Done.
func (q *Queue[T]) idleLocked(s *subqueue[T]) {
	if q.opts.SlowAfter <= 0 {
		return
	}
	st := q.stateLocked(s.tenant)
	if !st.idle {
		st.idle, st.weight = true, s.weight
		q.idleWeight += st.weight
	}
	st.last = q.opts.Now()
}

// heldLocked records the Done of tenant's item: its time held goes into the tenant's moving
// average.
func (q *Queue[T]) heldLocked(tenant string, item T) {
	if q.opts.SlowAfter <= 0 {
		return
	}
	at, ok := q.poppedAt[item]
	if !ok {
		return
	}
	delete(q.poppedAt, item)
	now := q.opts.Now()
	st := q.stateLocked(tenant)
	held := now.Sub(at)
	if st.hold == 0 {
		st.hold = held
	} else {
		st.hold += time.Duration(float64(held-st.hold) * holdAverageWeight)
	}
	st.last = now
}

// slowLocked reports whether tenant's items hold a worker for SlowAfter or longer on average.
func (q *Queue[T]) slowLocked(tenant string) bool {
	if q.opts.SlowAfter <= 0 {
		return false
	}
	st, ok := q.known[tenant]
	return ok && st.hold >= q.opts.SlowAfter
}

// idleWeightLocked returns Σ weights of the active tenants without a sub-queue, after dropping
// those no longer active (at most every ActiveFor/10).
func (q *Queue[T]) idleWeightLocked() int {
	if q.idleWeight > 0 {
		q.sweepLocked(false)
	}
	return q.idleWeight
}

// sweepLocked ends the activity of the idle tenants with nothing in flight and no Done for
// ActiveFor, and forgets the tenants with nothing queued or in flight for forgetAfter. Unless
// force, it runs at most every ActiveFor/10.
func (q *Queue[T]) sweepLocked(force bool) {
	now := q.opts.Now()
	if !force && now.Sub(q.swept) < q.opts.ActiveFor/10 {
		return
	}
	q.swept = now
	for t, st := range q.known {
		if q.inFlight[t] > 0 {
			continue
		}
		idleFor := now.Sub(st.last)
		if st.idle && idleFor >= q.opts.ActiveFor {
			st.idle = false
			q.idleWeight -= st.weight
		}
		if _, queued := q.tenants[t]; !queued && !st.idle && idleFor >= max(forgetAfter, q.opts.ActiveFor) {
			delete(q.known, t)
		}
	}
}

// armExpiryLocked arranges, for a caller about to wait in Wait, that the waiters are woken when
// the next idle tenant stops counting as active (which raises the slow tenants' caps).
func (q *Queue[T]) armExpiryLocked() {
	if q.idleWeight == 0 {
		return
	}
	var at time.Time
	for t, st := range q.known {
		if st.idle && q.inFlight[t] == 0 {
			if end := st.last.Add(q.opts.ActiveFor); at.IsZero() || end.Before(at) {
				at = end
			}
		}
	}
	if at.IsZero() || (!q.wakeAt.IsZero() && !q.wakeAt.After(at)) {
		return // none without items in flight (a Done wakes the waiters), or a wake-up is due before
	}
	q.wakeAt = at
	q.opts.AfterFunc(max(at.Sub(q.opts.Now()), 0), func() {
		q.mu.Lock()
		if q.wakeAt.Equal(at) {
			q.wakeAt = time.Time{}
		}
		q.sweepLocked(true)
		q.mu.Unlock()
		q.ready.Broadcast()
	})
}
