package syncer

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/vcsyncer/syncer/pkg/fairqueue"
	"github.com/vcsyncer/syncer/pkg/metrics"
)

// ShareOptions configures each tenant's share of the syncer's super writes and workers.
type ShareOptions struct {
	// SuperWriteQPS is the super writes per second shared by the tenants writing, by weight:
	// each has a token bucket refilled at SuperWriteQPS × weight ÷ Σ weights of the tenants
	// that wrote in the last second (the whole rate when alone), charged after each reconcile
	// with the super writes it made (counted by CountSuperWrites on the super client); a
	// tenant below zero has its downward requests held in its queue until it is back at zero.
	// 0 turns the share off.
	SuperWriteQPS float64
	// SuperWriteBurst is each tenant's bucket size, in writes. Values below 1 count as 1.
	SuperWriteBurst int
	// WorkerReservePercent is the percentage of each pipeline's workers (rounded up, at least 1
	// and at most all but one) a tenant may not take beyond its weighted share, so other
	// tenants' first requests find a free worker at once (fairqueue.Options.Reserve). 0 turns
	// the reserve off (the cap is then work-conserving).
	WorkerReservePercent int
	// SlowTenantThreshold: a tenant whose requests hold a worker this long or longer on average
	// leaves each other active tenant (requests queued or in flight, or one finished less than a
	// second ago) the most workers it used at once lately plus one, within that tenant's
	// weighted share, even while the others have nothing queued (fairqueue.Options.SlowAfter).
	// 0 turns it off.
	SlowTenantThreshold time.Duration
}

// reserveOf returns the workers kept in reserve out of workers for percent.
func reserveOf(workers, percent int) int {
	if percent <= 0 || workers < 2 {
		return 0
	}
	return min(max((workers*percent+99)/100, 1), workers-1)
}

// newWriteBudget returns the per-tenant budget of super writes, nil when o turns it off.
func newWriteBudget(o ShareOptions, weight func(string) int) *fairqueue.Budget {
	if o.SuperWriteQPS <= 0 {
		return nil
	}
	return fairqueue.NewBudget(fairqueue.BudgetOptions{Rate: o.SuperWriteQPS, Burst: float64(o.SuperWriteBurst), Weight: weight})
}

// writeCounter counts the super writes of one reconcile (CountSuperWrites).
type writeCounter struct{ n atomic.Int64 }

type writeCounterKey struct{}

// withWriteCounter returns ctx carrying a fresh writeCounter.
func withWriteCounter(ctx context.Context) (context.Context, *writeCounter) {
	c := &writeCounter{}
	return context.WithValue(ctx, writeCounterKey{}, c), c
}

// CountSuperWrites wraps the super client's transport (rest.Config.Wrap) so that each write
// request (any method but GET, HEAD and OPTIONS) made with a reconcile's context is counted
// against that reconcile's tenant, for its share of Options.Share.SuperWriteQPS. Requests
// without such a context (informers, checkpoints, leader election) are not counted.
func CountSuperWrites(rt http.RoundTripper) http.RoundTripper {
	return countingTransport{rt}
}

type countingTransport struct{ next http.RoundTripper }

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if c, ok := r.Context().Value(writeCounterKey{}).(*writeCounter); ok {
			c.n.Add(1)
		}
	}
	return t.next.RoundTrip(r)
}

// chargeWrites charges n super writes of tenant's reconcile to its share.
func (s *Syncer) chargeWrites(tenant string, n int64) {
	if n <= 0 {
		return
	}
	metrics.SuperWrites(tenant, int(n))
	if s.writes != nil {
		s.writes.Charge(tenant, float64(n))
	}
}

// writeShareDelayed is the fair queue's report of a tenant held back for its write share.
func writeShareDelayed(tenant string, d time.Duration) { metrics.WriteShareDelayed(tenant, d) }
