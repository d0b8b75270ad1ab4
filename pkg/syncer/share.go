package syncer

import (
	"time"

	"github.com/vcsyncer/syncer/pkg/fairqueue"
	"github.com/vcsyncer/syncer/pkg/metrics"
)

// ShareOptions configures each tenant's share of the syncer's super writes and workers.
type ShareOptions struct {
	// SuperWriteQPS is the super writes per second shared by the tenants writing, by weight:
	// each has a token bucket refilled at SuperWriteQPS × weight ÷ Σ weights of the tenants
	// that wrote in the last second (the whole rate when alone), charged after each reconcile
	// with the super writes it made (counted by fairqueue.CountWrites on the super client); a
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

// newWriteBudget returns the per-tenant budget of super writes, nil when o turns it off.
func newWriteBudget(o ShareOptions, weight func(string) int) *fairqueue.Budget {
	if o.SuperWriteQPS <= 0 {
		return nil
	}
	return fairqueue.NewBudget(fairqueue.BudgetOptions{Rate: o.SuperWriteQPS, Burst: float64(o.SuperWriteBurst), Weight: weight})
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
