package syncer

import (
	"time"

	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

const (
	directionDownward = metrics.Downward
	directionUpward   = metrics.Upward
)

// observer returns the fair queue's Observe callback: it records a popped request's time in
// queue, except for tenants no longer registered (requests left in the queue of a removed
// tenant are popped after its series were forgotten and must not bring them back).
func (s *Syncer) observer(direction string) func(string, time.Duration) {
	return func(tenant string, d time.Duration) {
		if s.registry == nil {
			return
		}
		if _, ok := s.registry.Get(tenant); ok {
			metrics.QueueWait(tenant, direction, d)
		}
	}
}

func (s *Syncer) forgetTenantMetrics(tenant string) {
	s.track.Forget(tenant)
	s.down.retries.Forget(tenant)
	s.up.retries.Forget(tenant)
	s.retryLog.Forget(tenant)
	metrics.ForgetTenant(tenant)
}

// queueStats reports per-tenant depth and oldest-item age of both pipelines for metrics.
func (s *Syncer) queueStats() ([]string, map[string]map[string]metrics.QueueStat) {
	var tenants []string
	if s.registry != nil {
		tenants = s.registry.Names()
	}
	out := map[string]map[string]metrics.QueueStat{}
	for dir, q := range map[string]*pipelineQueue{directionDownward: s.down, directionUpward: s.up} {
		m := map[string]metrics.QueueStat{}
		for t, st := range q.stats() {
			m[t] = metrics.QueueStat{Depth: st.Depth, Oldest: st.Oldest, InFlight: st.InFlight, Hold: st.Hold, Slow: st.Slow}
		}
		out[dir] = m
	}
	return tenants, out
}

// registerMetrics registers the tenant health source and the Pod-creation phase tracker's
// super Pod handler. Called once from New.
func (s *Syncer) registerMetrics() {
	metrics.RegisterTenantHealth(s.tenantHealth)
	metrics.RegisterHotStats(s.hotStats)
	metrics.RegisterSuperCacheStats(s.superCacheStats)
	_, _ = s.env.SuperInformers.Core().V1().Pods().Informer().AddEventHandler(s.track.SuperPodHandler())
}

// trackPods registers the Pod-creation tracker's handler on a tenant's Pod informer. Called
// from ClusterStarting.
func (s *Syncer) trackPods(c *tenant.Cluster) {
	if r, ok := s.resources[resources.KindPod]; ok {
		_ = c.AddEventHandler(r.TenantInformer(c), s.track.TenantPodHandler(c.Name, c.Synced)) // the initial list is not new Pods
	}
}

// tenantHealth reports every registered tenant's Connected and Synced state and the bytes
// held for it (tenant.HeldBytes) for metrics.
func (s *Syncer) tenantHealth() map[string]metrics.TenantHealth {
	out := map[string]metrics.TenantHealth{}
	if s.registry == nil {
		return out
	}
	for _, name := range s.registry.Names() {
		if c, ok := s.registry.Get(name); ok {
			st := c.State()
			held, heldOut := c.Held.Totals()
			out[name] = metrics.TenantHealth{Connected: st.Connected, Synced: st.Synced, CachedBytes: held, HeldOut: heldOut,
				CachedObjects: c.Held.Entries(), Suspended: st.Suspended}
		}
	}
	return out
}

// observeSync runs one reconcile of req (run, the worker's call of process) and records its
// duration and result (vcsyncer_sync_duration_seconds), the end-to-end lag of the changes it
// handled (vcsyncer_sync_lag_seconds) and the Pod-creation phases that end at this pop. Nothing
// is recorded for a tenant that is no longer registered (its series were forgotten).
func (s *Syncer) observeSync(req resources.Request, down bool, run func() error) error {
	dir := directionUpward
	if down {
		dir = directionDownward
	}
	start := time.Now()
	arrived := s.track.Popped(dir, req, start)
	err := run()
	end := time.Now()
	if s.registry == nil {
		return err
	}
	if _, ok := s.registry.Get(req.Tenant); !ok {
		return err
	}
	metrics.SyncDone(req.Tenant, string(req.Kind), dir, end.Sub(start), err)
	if !arrived.IsZero() {
		if err == nil {
			metrics.SyncLag(req.Tenant, string(req.Kind), dir, end.Sub(arrived))
		} else {
			s.track.Requeued(dir, req, arrived) // the change is still not written: keep its clock
		}
	}
	return err
}
