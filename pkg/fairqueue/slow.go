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
	// peak and peakBefore are the most items of the tenant in flight at once since peakSince and
	// in the ActiveFor before it: its recent demand (demandLocked).
	peak, peakBefore int
	peakSince        time.Time
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
		delete(q.idle, tenant)
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
		q.idle[s.tenant] = st
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

// slowLocked reports whether tenant's items hold a worker for SlowAfter or longer on average,
// or one of its items in flight has held one that long already. The second test keeps a
// tenant from hiding slow items among many quick ones (no-op changes) that pull its average
// down, and counts a tenant as slow from its first slow item on, before that item is Done.
// It walks the items in flight (at most Workers).
func (q *Queue[T]) slowLocked(tenant string) bool {
	if q.opts.SlowAfter <= 0 {
		return false
	}
	if st, ok := q.known[tenant]; ok && st.hold >= q.opts.SlowAfter {
		return true
	}
	if q.inFlight[tenant] == 0 {
		return false
	}
	now := q.opts.Now()
	for item, at := range q.poppedAt {
		if now.Sub(at) >= q.opts.SlowAfter && q.opts.TenantOf(item) == tenant {
			return true
		}
	}
	return false
}

// inFlightLocked records that tenant has n items in flight (after a Pop, or before a Done), for
// its recent demand.
func (q *Queue[T]) inFlightLocked(tenant string, n int) {
	if q.opts.SlowAfter <= 0 {
		return
	}
	st := q.stateLocked(tenant)
	q.rotatePeakLocked(tenant, st)
	st.peak = max(st.peak, n)
}

// rotatePeakLocked starts a new period of st's peak every ActiveFor; a new period starts from
// the items in flight now.
func (q *Queue[T]) rotatePeakLocked(tenant string, st *tenantState) {
	now := q.opts.Now()
	switch since := now.Sub(st.peakSince); {
	case since >= 2*q.opts.ActiveFor:
		st.peak, st.peakBefore, st.peakSince = q.inFlight[tenant], 0, now
	case since >= q.opts.ActiveFor:
		st.peak, st.peakBefore, st.peakSince = q.inFlight[tenant], st.peak, now
	}
}

// demandLocked returns the most items of tenant in flight at once in the last ActiveFor to
// 2×ActiveFor (as seen at its Pops and Dones and at the start of each period).
func (q *Queue[T]) demandLocked(tenant string) int {
	st, ok := q.known[tenant]
	if !ok {
		return 0
	}
	q.rotatePeakLocked(tenant, st)
	return max(st.peak, st.peakBefore)
}

// slowCapLocked returns the most items a slow tenant s (in the ring) may have in flight: the
// workers the other active tenants do not keep, or its weighted share among the active tenants
// if that is more. Each other active tenant keeps its recent demand plus one (the next item it
// gets finds a free worker), at most its own weighted share among the active tenants. So a
// slow tenant leaves room for what its neighbours used in the last ActiveFor or so, and no more
// than their shares: a neighbour with a few quick items costs it a few workers, not a share.
func (q *Queue[T]) slowCapLocked(s *subqueue[T]) int {
	w := q.opts.Workers
	sum := q.weightSum + q.idleWeightLocked()
	share := func(weight int) int { return (w*weight + sum - 1) / sum }
	room := w
	keep := func(tenant string, weight int) { room -= min(share(weight), q.demandLocked(tenant)+1) }
	if s.next != nil {
		for t := s.next; t != s; t = t.next {
			keep(t.tenant, t.weight)
		}
	}
	for t, st := range q.idle {
		keep(t, st.weight)
	}
	return max(share(s.weight), room)
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
			delete(q.idle, t)
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
	for t, st := range q.idle {
		if q.inFlight[t] == 0 {
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
