package fairqueue

import (
	"sync"
	"time"
)

// Budget shares a rate of work units (for the syncer: super-cluster writes) between the
// tenants that use it, by weight: each active tenant has a token bucket of Burst units refilled
// at Rate × weight ÷ Σ weights of the active tenants per second. Work is charged after it is
// done (Charge), so a bucket may go below zero; while it is, ReadyAt is the time it is back at
// zero, and a Queue with this Budget as its Limiter holds the tenant's items back until then.
// A tenant counts as active from its first Charge until it has charged nothing for Idle and
// owes nothing; so a tenant alone gets the whole Rate, and a newcomer starts with a full bucket
// and lowers the others' rates at its first Charge. It is safe for concurrent use and may be
// shared by several Queues.
type Budget struct {
	o BudgetOptions

	mu        sync.Mutex
	tenants   map[string]*bucket // active tenants
	weightSum int                // Σ bucket.weight
	swept     time.Time
}

// BudgetOptions configures a Budget.
type BudgetOptions struct {
	// Rate is the units per second shared by the active tenants. Required (> 0).
	Rate float64
	// Burst is the size of each tenant's bucket, in units. Values below 1 count as 1.
	Burst float64
	// Weight returns a tenant's weight (values below 1 count as 1), read when it becomes
	// active. Defaults to 1 for every tenant.
	Weight func(tenant string) int
	// Idle is how long a tenant that owes nothing stays active after its last Charge.
	// Defaults to DefaultBudgetIdle.
	Idle time.Duration
	// Now returns the current time; for tests. Defaults to time.Now.
	Now func() time.Time
}

// DefaultBudgetIdle is the default of BudgetOptions.Idle.
const DefaultBudgetIdle = time.Second

type bucket struct {
	tokens float64
	at     time.Time // tokens is as of at
	last   time.Time // last Charge
	weight int
}

var _ Limiter = (*Budget)(nil)

// NewBudget returns a Budget. It panics if o.Rate is not above 0.
func NewBudget(o BudgetOptions) *Budget {
	if !(o.Rate > 0) {
		panic("fairqueue: BudgetOptions.Rate must be above 0")
	}
	if o.Burst < 1 {
		o.Burst = 1
	}
	if o.Weight == nil {
		o.Weight = func(string) int { return 1 }
	}
	if o.Idle <= 0 {
		o.Idle = DefaultBudgetIdle
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Budget{o: o, tenants: map[string]*bucket{}}
}

// Charge takes units from tenant's bucket (it may go below zero), making the tenant active.
func (b *Budget) Charge(tenant string, units float64) {
	if units <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.o.Now()
	b.sweepLocked(now)
	k, ok := b.tenants[tenant]
	if !ok {
		b.refillAllLocked(now) // at the old rates, before the newcomer lowers them
		w := max(b.o.Weight(tenant), 1)
		k = &bucket{tokens: b.o.Burst, at: now, weight: w}
		b.tenants[tenant] = k
		b.weightSum += w
	}
	b.refillLocked(k, now)
	k.tokens -= units
	k.last = now
}

// ReadyAt implements Limiter: the time tenant's bucket is back at zero, or the zero time when
// it is not below zero.
func (b *Budget) ReadyAt(tenant string) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.o.Now()
	b.sweepLocked(now)
	k, ok := b.tenants[tenant]
	if !ok {
		return time.Time{}
	}
	b.refillLocked(k, now)
	if k.tokens >= 0 {
		return time.Time{}
	}
	return now.Add(time.Duration(-k.tokens / b.rateLocked(k) * float64(time.Second)))
}

// Rate returns tenant's current rate in units per second (its share of Rate if it became
// active now when it is not).
func (b *Budget) Rate(tenant string) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if k, ok := b.tenants[tenant]; ok {
		return b.rateLocked(k)
	}
	w := max(b.o.Weight(tenant), 1)
	return b.o.Rate * float64(w) / float64(b.weightSum+w)
}

func (b *Budget) rateLocked(k *bucket) float64 {
	return b.o.Rate * float64(k.weight) / float64(b.weightSum)
}

func (b *Budget) refillLocked(k *bucket, now time.Time) {
	if dt := now.Sub(k.at); dt > 0 {
		k.tokens = min(b.o.Burst, k.tokens+b.rateLocked(k)*dt.Seconds())
		k.at = now
	}
}

func (b *Budget) refillAllLocked(now time.Time) {
	for _, k := range b.tenants {
		b.refillLocked(k, now)
	}
}

// sweepLocked, at most every Idle/10, drops the tenants idle for Idle that owe nothing (their
// next Charge starts from a full bucket), after refilling every bucket at the old rates.
func (b *Budget) sweepLocked(now time.Time) {
	if now.Sub(b.swept) < b.o.Idle/10 {
		return
	}
	b.swept = now
	b.refillAllLocked(now)
	for t, k := range b.tenants {
		if now.Sub(k.last) >= b.o.Idle && k.tokens >= 0 {
			delete(b.tenants, t)
			b.weightSum -= k.weight
		}
	}
}
