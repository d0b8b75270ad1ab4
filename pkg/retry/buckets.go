package retry

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"

	"github.com/vcsyncer/syncer/pkg/resources"
)

// Retry rate of each tenant: a token bucket of retryQPS requests per second with a burst of
// retryBurst, as client-go's default controller rate limiter (10 qps, 100 burst) scaled to the
// syncer's many objects per tenant. The per-item exponential backoff (100 ms to 60 s) comes on
// top (workqueue.NewTypedMaxOfRateLimiter).
const (
	retryQPS   = 200
	retryBurst = 500
	// retrySweepEvery is how often idle buckets are dropped.
	retrySweepEvery = time.Minute
)

// TenantBuckets is a workqueue rate limiter with one token bucket per tenant, so one
// tenant's failing requests delay only its own retries. A bucket that is full again (its
// tenant retried nothing for retryBurst/retryQPS = 2.5 s) is indistinguishable from a new one,
// so it is dropped at the next sweep (at most one per retrySweepEvery, on a When call): the
// buckets of removed or quiet tenants do not accumulate. Safe for concurrent use.
type TenantBuckets struct {
	now func() time.Time

	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
	lastSweep time.Time
}

var _ workqueue.TypedRateLimiter[resources.Request] = (*TenantBuckets)(nil)

// NewTenantBuckets returns empty TenantBuckets on the wall clock.
func NewTenantBuckets() *TenantBuckets {
	return &TenantBuckets{now: time.Now, buckets: map[string]*rate.Limiter{}}
}

// When returns how long r waits for a token of its tenant's bucket (0 while the bucket has
// tokens), taking the token.
func (b *TenantBuckets) When(r resources.Request) time.Duration {
	now := b.now()
	b.mu.Lock()
	if now.Sub(b.lastSweep) >= retrySweepEvery {
		b.lastSweep = now
		for t, l := range b.buckets {
			if l.TokensAt(now) >= retryBurst {
				delete(b.buckets, t)
			}
		}
	}
	l, ok := b.buckets[r.Tenant]
	if !ok {
		l = rate.NewLimiter(rate.Limit(retryQPS), retryBurst)
		b.buckets[r.Tenant] = l
	}
	b.mu.Unlock()
	return l.ReserveN(now, 1).DelayFrom(now)
}

// Forget does nothing: a bucket does not track items.
func (b *TenantBuckets) Forget(resources.Request) {}

// NumRequeues returns 0: a bucket does not track items.
func (b *TenantBuckets) NumRequeues(resources.Request) int { return 0 }

// Len returns the number of buckets held.
func (b *TenantBuckets) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.buckets)
}
