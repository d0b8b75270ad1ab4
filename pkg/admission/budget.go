package admission

import (
	"errors"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ErrBudgetNotSynced is returned by Budget.Reserve until the super objects that existed when
// the syncer started have all been observed: before that, the tenants' use is not known.
var ErrBudgetNotSynced = errors.New("the tenants' budgets are not counted yet (super caches not observed)")

// DefaultReservationTTL is how long a reservation whose super object was written is kept
// while the super informer has not delivered that write (Budget.Observe replaces it then).
const DefaultReservationTTL = 2 * time.Minute

// BudgetOptions configures a Budget.
type BudgetOptions[T comparable] struct {
	// Wake runs a parked item again (an object that waited for room, now likely to fit).
	// Required.
	Wake func(T)
	// Synced reports whether every super object present at start has been observed; nil:
	// always.
	Synced func() bool
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// ReservationTTL defaults to DefaultReservationTTL.
	ReservationTTL time.Duration
	// AfterFunc runs f once, d from now, on its own goroutine: the expiry of a tenant's written
	// reservations that nothing replaced. nil: time.AfterFunc.
	AfterFunc func(d time.Duration, f func())
}

// Exceeded is one key of a budget that a charge does not fit under.
type Exceeded struct {
	Name                  corev1.ResourceName
	Requested, Used, Hard resource.Quantity
}

// Budget counts each tenant's use of a tenant-wide budget (a ResourceList of hard limits
// over all of the tenant's super objects, Pods, claims, Services and the other counted kinds,
// whatever their namespace) and parks the items that do not fit until room appears.
//
// An object's charge is counted from the moment it is reserved (Reserve, before its super
// object is created, or updated to cost more) and, once the super informer delivers the
// super object, from the informer (Observe: the charge of the object itself), until it ends
// or is deleted (Observe with a nil charge). A reservation whose write failed is returned
// (Release), and the charge it replaced counts again. So two workers admitting two objects of
// one tenant at once cannot both take the last room, and a restarted syncer counts the same
// as before from its super caches alone. A written reservation (Created) that a later
// reservation of the same key replaces (the object's next reconcile, after a write whose outcome
// was unknown) counts again if that one is returned. Written reservations that the informer
// never replaces expire after the ReservationTTL, and the items parked behind them are woken
// then. Keys are the callers' (kind, namespace and name of the super object).
//
// It is safe for concurrent use.
type Budget[T comparable] struct {
	o       BudgetOptions[T]
	mu      sync.Mutex
	tenants map[string]*budgetTenant[T]
}

type budgetEntry struct {
	charge   corev1.ResourceList
	reserved bool      // a reservation, not (yet) an observed super object
	created  time.Time // for a reservation: when its super object was written (zero: not yet)
	// prev is, for a reservation that replaced an observed super object's charge (the object
	// is being updated to cost more), that observed entry: restored by Release or when the
	// reservation expires.
	prev *budgetEntry
}

type budgetWaiter[T comparable] struct {
	item T
	key  string
	need corev1.ResourceList
}

type budgetTenant[T comparable] struct {
	used    corev1.ResourceList
	pods    map[string]*budgetEntry
	waiting []budgetWaiter[T] // first come, first woken
	hard    corev1.ResourceList
	// expiring is set while an expiry of the tenant's written reservations is scheduled.
	expiring bool
}

// NewBudget returns an empty Budget.
func NewBudget[T comparable](o BudgetOptions[T]) *Budget[T] {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ReservationTTL <= 0 {
		o.ReservationTTL = DefaultReservationTTL
	}
	if o.AfterFunc == nil {
		o.AfterFunc = func(d time.Duration, f func()) { time.AfterFunc(d, f) }
	}
	return &Budget[T]{o: o, tenants: map[string]*budgetTenant[T]{}}
}

func (b *Budget[T]) tenantLocked(tenant string) *budgetTenant[T] {
	ts := b.tenants[tenant]
	if ts == nil {
		ts = &budgetTenant[T]{used: corev1.ResourceList{}, pods: map[string]*budgetEntry{}}
		b.tenants[tenant] = ts
	}
	return ts
}

// Reserve takes charge need for key (the super object's kind/namespace/name) in tenant's budget hard
// when it fits, and reports ok. A key counted already (reserved or observed) has its charge
// replaced. When need does not fit, item is parked (once per key) and woken by Wake when room
// appears, and over says which keys of hard it would exceed; the caller returns without a
// retry. Only the keys that need takes more than zero of are checked (a use over a lowered
// hard does not refuse a Pod that takes none of it). A written reservation of key that this
// one replaces counts again if this one is returned (Release): its write's outcome may have
// been unknown, and the object may exist. It returns ErrBudgetNotSynced before the super cache
// has been observed.
func (b *Budget[T]) Reserve(tenant string, item T, key string, need, hard corev1.ResourceList) (ok bool, over []Exceeded, err error) {
	if b.o.Synced != nil && !b.o.Synced() {
		return false, nil, ErrBudgetNotSynced
	}
	b.mu.Lock()
	ts := b.tenantLocked(tenant)
	ts.hard = hard
	wake := b.expireLocked(ts)
	defer func() {
		b.mu.Unlock()
		b.wakeAll(wake)
	}()
	old := ts.pods[key]
	if over = ts.overLocked(old, need, hard); len(over) > 0 {
		ts.parkLocked(budgetWaiter[T]{item: item, key: key, need: need})
		return false, over, nil
	}
	e := &budgetEntry{charge: need, reserved: true}
	switch {
	case old == nil:
	case !old.reserved:
		e.prev = old
	case !old.created.IsZero():
		// At most one written reservation is kept behind this one, on the observed entry (if
		// any) behind all of them.
		e.prev = &budgetEntry{charge: old.charge, reserved: true, created: old.created, prev: observedBase(old.prev)}
	default:
		e.prev = old.prev
	}
	ts.setLocked(key, e)
	ts.unparkLocked(key)
	return true, nil, nil
}

// observedBase returns the first entry of the chain from e that is not a reservation (an
// observed super object's), nil when there is none.
func observedBase(e *budgetEntry) *budgetEntry {
	for e != nil && e.reserved {
		e = e.prev
	}
	return e
}

// Fits reports whether Reserve would take need for key in tenant's budget hard now, without
// reserving or parking anything (false before the super cache has been observed). Another
// caller may take the room before key's Reserve.
func (b *Budget[T]) Fits(tenant, key string, need, hard corev1.ResourceList) bool {
	if b.o.Synced != nil && !b.o.Synced() {
		return false
	}
	b.mu.Lock()
	ts := b.tenants[tenant] // not created: a removed tenant's late question leaves nothing
	var wake []T
	if ts == nil {
		ts = &budgetTenant[T]{used: corev1.ResourceList{}}
	} else {
		wake = b.expireLocked(ts)
	}
	fits := len(ts.overLocked(ts.pods[key], need, hard)) == 0
	b.mu.Unlock()
	b.wakeAll(wake)
	return fits
}

// overLocked returns the keys of hard that need would exceed in ts's use, old (key's counted
// entry, nil when none) replaced by need; only the keys need takes more than zero of.
func (ts *budgetTenant[T]) overLocked(old *budgetEntry, need, hard corev1.ResourceList) (over []Exceeded) {
	for name, h := range hard {
		n, ok := need[name]
		if !ok || n.Sign() <= 0 {
			continue
		}
		used := ts.used[name].DeepCopy()
		if old != nil {
			used.Sub(old.charge[name])
		}
		total := used.DeepCopy()
		total.Add(n)
		if total.Cmp(h) > 0 {
			over = append(over, Exceeded{Name: name, Requested: n.DeepCopy(), Used: used, Hard: h.DeepCopy()})
		}
	}
	return over
}

// Created records that the super object of a reservation was written, or that its write's
// outcome is unknown: the reservation is kept until Observe replaces it, or for the
// ReservationTTL (an expiry is scheduled then, which wakes the items parked behind it).
func (b *Budget[T]) Created(tenant, key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ts := b.tenants[tenant]; ts != nil {
		if e := ts.pods[key]; e != nil && e.reserved {
			e.created = b.o.Now()
			b.scheduleExpiryLocked(tenant, ts, e.created)
		}
	}
}

// scheduleExpiryLocked schedules, unless one is scheduled already, the expiry of tenant's
// written reservations for just after the one written at created ends.
func (b *Budget[T]) scheduleExpiryLocked(tenant string, ts *budgetTenant[T], created time.Time) {
	if ts.expiring {
		return
	}
	ts.expiring = true
	d := created.Add(b.o.ReservationTTL).Sub(b.o.Now()) + time.Millisecond
	b.o.AfterFunc(max(d, time.Millisecond), func() { b.expireScheduled(tenant, ts) })
}

// expireScheduled expires tenant's written reservations whose time is over, wakes the items
// that fit in the room they held, and schedules the next expiry for the oldest one left. ts
// is the tenant's entry the expiry was scheduled for: a tenant's entry dropped and made again
// has its own.
func (b *Budget[T]) expireScheduled(tenant string, ts *budgetTenant[T]) {
	b.mu.Lock()
	if b.tenants[tenant] != ts {
		b.mu.Unlock()
		return
	}
	ts.expiring = false
	wake := b.expireLocked(ts) // no expired written reservation is left, current or behind one
	var oldest time.Time
	for _, e := range ts.pods {
		for ; e != nil && e.reserved; e = e.prev {
			if !e.created.IsZero() && (oldest.IsZero() || e.created.Before(oldest)) {
				oldest = e.created
			}
		}
	}
	if !oldest.IsZero() {
		b.scheduleExpiryLocked(tenant, ts, oldest)
	}
	b.dropIfEmptyLocked(tenant, ts)
	b.mu.Unlock()
	b.wakeAll(wake)
}

// Leave forgets key's place in line (its object is gone or no longer waits).
func (b *Budget[T]) Leave(tenant, key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ts := b.tenants[tenant]; ts != nil {
		ts.unparkLocked(key)
	}
}

// Release returns the reservation of key (its super object was not created or updated): what
// it replaced, if any (an observed charge, or a written reservation not yet expired), counts
// again; an observed super object's charge is not touched, nor key's place in line.
func (b *Budget[T]) Release(tenant, key string) {
	b.mu.Lock()
	ts := b.tenants[tenant]
	var wake []T
	if ts != nil {
		if e := ts.pods[key]; e != nil && e.reserved {
			p, now := e.prev, b.o.Now()
			for b.expired(p, now) {
				p = p.prev // a written reservation behind it that has expired meanwhile
			}
			ts.setLocked(key, p)
			wake = ts.wakeLocked()
		}
		b.dropIfEmptyLocked(tenant, ts)
	}
	b.mu.Unlock()
	b.wakeAll(wake)
}

// Observe records super object key of tenant as the super informer has it: charge is what
// the object is counted (nil for a Pod that ended, or an object that was deleted, which
// counts nothing). It replaces a reservation of the same key, unless it costs less than the
// reservation (the object before the write the reservation is for: the reservation stays).
// A nil charge does not remove a reservation, written (Created) or not: that is a newer
// object at the same name, whose ADD the informer delivers after the older one's DELETE. When the tenant's use goes
// down, the parked items that now fit are woken, first come first.
func (b *Budget[T]) Observe(tenant, key string, charge corev1.ResourceList) {
	b.mu.Lock()
	ts := b.tenants[tenant]
	if ts == nil && charge == nil {
		b.mu.Unlock()
		return
	}
	ts = b.tenantLocked(tenant)
	var wake []T
	e := ts.pods[key]
	switch {
	case charge == nil && e != nil && e.reserved:
		// The deletion of an older object at this name (the informer delivers a reserved
		// object's ADD before its DELETE): the reservation is the newer object's, and stays
		// until its ADD replaces it, Release, or the ReservationTTL. The object it would have
		// updated is gone: nothing to restore.
		e.prev = nil
	case charge == nil && e == nil:
	case charge == nil:
		ts.setLocked(key, nil)
		wake = ts.wakeLocked()
		b.dropIfEmptyLocked(tenant, ts)
	case e != nil && e.reserved && lessOrEqual(charge, e.charge) && !equalLists(charge, e.charge):
		// A reservation for more than the object is seen to cost: the object as it was before
		// the write the reservation is for (an update to cost more, whose older events, a
		// status change say, the informer still delivers), or an older object at the name. It
		// stays, with what it replaced now this observation, until an observation of what it
		// reserved replaces it, Release, or the ReservationTTL.
		e.prev = &budgetEntry{charge: charge}
	default:
		lower := e != nil && lessOrEqual(charge, e.charge) && !equalLists(charge, e.charge)
		ts.setLocked(key, &budgetEntry{charge: charge})
		if lower {
			wake = ts.wakeLocked()
		}
	}
	b.mu.Unlock()
	b.wakeAll(wake)
}

// Stopped drops tenant's parked items (its syncing stopped: paused, its kubeconfig unusable,
// moved to another shard or removed; a started tenant enqueues its objects again) and keeps
// its counts: its super objects stay until deleted, and the super informers' Observe calls keep
// counting them whether the tenant syncs or not, so a tenant paused and resumed cannot start
// another budget's worth of Pods beside the ones still running. Reservations stay too: their
// reconciles end with Release, or the informer replaces them. Once the tenant counts nothing
// (its objects deleted, or left this shard's caches), its entry goes.
func (b *Budget[T]) Stopped(tenant string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ts := b.tenants[tenant]; ts != nil {
		ts.waiting = nil
		b.dropIfEmptyLocked(tenant, ts)
	}
}

// dropIfEmptyLocked deletes tenant's entry when it counts nothing and nothing waits.
func (b *Budget[T]) dropIfEmptyLocked(tenant string, ts *budgetTenant[T]) {
	if len(ts.pods) == 0 && len(ts.waiting) == 0 {
		delete(b.tenants, tenant)
	}
}

// Used returns a copy of tenant's counted use (reservations included).
func (b *Budget[T]) Used(tenant string) corev1.ResourceList {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := corev1.ResourceList{}
	if ts := b.tenants[tenant]; ts != nil {
		for k, v := range ts.used {
			if !v.IsZero() {
				out[k] = v.DeepCopy()
			}
		}
	}
	return out
}

// Waiting returns the number of tenant's parked items.
func (b *Budget[T]) Waiting(tenant string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ts := b.tenants[tenant]; ts != nil {
		return len(ts.waiting)
	}
	return 0
}

func (b *Budget[T]) wakeAll(items []T) {
	for _, it := range items {
		b.o.Wake(it)
	}
}

// expireLocked drops reservations whose super object was written (or whose write's outcome
// was unknown) more than ReservationTTL ago and never observed (the informer missed it, e.g.
// deleted at once, or nothing was written), restoring what a reservation replaced (an observed
// charge, or a written reservation not yet expired), drops expired written reservations kept
// behind current ones, and returns the parked items that now fit.
func (b *Budget[T]) expireLocked(ts *budgetTenant[T]) []T {
	now := b.o.Now()
	changed := false
	for key, e := range ts.pods {
		if b.expired(e, now) {
			p := e.prev
			for b.expired(p, now) {
				p = p.prev
			}
			ts.setLocked(key, p)
			changed = true
			continue
		}
		// A written reservation kept behind a current one that has expired is dropped too
		// (it counts nothing now; Release would skip it).
		for ; e != nil && e.reserved; e = e.prev {
			for b.expired(e.prev, now) {
				e.prev = e.prev.prev
			}
		}
	}
	if !changed {
		return nil
	}
	return ts.wakeLocked()
}

// expired reports whether e is a written reservation older than the ReservationTTL at now.
func (b *Budget[T]) expired(e *budgetEntry, now time.Time) bool {
	return e != nil && e.reserved && !e.created.IsZero() && now.Sub(e.created) > b.o.ReservationTTL
}

// setLocked replaces key's entry (nil removes it), keeping used the sum of the entries.
func (ts *budgetTenant[T]) setLocked(key string, e *budgetEntry) {
	if old := ts.pods[key]; old != nil {
		for k, v := range old.charge {
			q := ts.used[k].DeepCopy()
			q.Sub(v)
			ts.used[k] = q
		}
		delete(ts.pods, key)
	}
	if e == nil {
		return
	}
	ts.pods[key] = e
	for k, v := range e.charge {
		q := ts.used[k].DeepCopy()
		q.Add(v)
		ts.used[k] = q
	}
}

func (ts *budgetTenant[T]) parkLocked(w budgetWaiter[T]) {
	for i := range ts.waiting {
		if ts.waiting[i].key == w.key {
			ts.waiting[i] = w
			return
		}
	}
	ts.waiting = append(ts.waiting, w)
}

func (ts *budgetTenant[T]) unparkLocked(key string) {
	for i := range ts.waiting {
		if ts.waiting[i].key == key {
			ts.waiting = append(ts.waiting[:i], ts.waiting[i+1:]...)
			return
		}
	}
}

// wakeLocked removes from line and returns the parked items that fit in the room left under
// the last hard seen, first come first, each taking its need of the room (they reserve it
// themselves when they run; one that finds the room taken parks again).
func (ts *budgetTenant[T]) wakeLocked() []T {
	if len(ts.waiting) == 0 {
		return nil
	}
	room := corev1.ResourceList{}
	for k, h := range ts.hard {
		r := h.DeepCopy()
		r.Sub(ts.used[k])
		room[k] = r
	}
	var out []T
	kept := ts.waiting[:0]
	for _, w := range ts.waiting {
		fits := true
		for k, r := range room {
			if n, ok := w.need[k]; ok && n.Sign() > 0 && n.Cmp(r) > 0 {
				fits = false
				break
			}
		}
		if !fits {
			kept = append(kept, w)
			continue
		}
		for k := range room {
			r := room[k]
			r.Sub(w.need[k])
			room[k] = r
		}
		out = append(out, w.item)
	}
	ts.waiting = kept
	return out
}

// lessOrEqual reports whether every quantity of a is at most b's (missing counts zero).
func lessOrEqual(a, b corev1.ResourceList) bool {
	for k, v := range a {
		if v.Cmp(b[k]) > 0 {
			return false
		}
	}
	return true
}

func equalLists(a, b corev1.ResourceList) bool {
	return lessOrEqual(a, b) && lessOrEqual(b, a)
}
