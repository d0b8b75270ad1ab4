package syncer

import (
	"time"

	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/retry"
	"github.com/vcsyncer/syncer/pkg/status"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

var _ status.Provider = (*Syncer)(nil)

// recordSync notes a successful reconcile of one of tenant's objects now. Requests of a
// tenant that is not (or no longer) synced are dropped by process without a reconcile, so
// they do not count. It is called by every worker after every request.
func (s *Syncer) recordSync(tenant string) {
	if c, ok := s.registry.Get(tenant); ok && c.Synced() {
		s.status.RecordSync(tenant)
	}
}

// SetLastCheckpoint gives the status page the function that reports when a tenant's sync
// progress was last checkpointed (the zero time: never, e.g. a tenant added after the last
// checkpoint). Until it is called the page shows "never". Safe to call at any time.
func (s *Syncer) SetLastCheckpoint(f func(tenant string) time.Time) { s.status.SetLastCheckpoint(f) }

// TenantStatuses implements status.Provider: one row per tenant in the registry, with its
// phase derived from the connection as the Tenant controller derives it (tenant.PhaseOf), its
// queues (nil without fair queuing, which keeps no per-tenant figures), last sync, last
// checkpoint and hot requests (at most status.MaxRetrying, most failures first); then a
// row without phase or queues for every other tenant that has synced since the start (a
// Paused tenant, say), with its last sync and last checkpoint.
func (s *Syncer) TenantStatuses() []status.Tenant {
	if s.registry == nil {
		return nil
	}
	var down, up map[string]status.Queue
	if s.down.fair != nil {
		down, up = queueFigures(s.down), queueFigures(s.up)
	}
	hotCounts, hotRows := s.hotTables()
	var out []status.Tenant
	for _, name := range s.registry.Names() {
		c, ok := s.registry.Get(name)
		if !ok {
			continue
		}
		st := c.State()
		row := status.Tenant{Name: name, Weight: c.Weight(), LastSync: s.status.LastSync(name),
			HotRequests: hotCounts[name], Retrying: hotRows[name], KubeletStreams: int(metrics.KubeletOpenStreamsCount(name))}
		row.Phase = string(tenant.PhaseOf(st))
		if !st.Connected && st.LastError != "" {
			row.Reason = st.LastReason
		}
		if down != nil {
			d, u := down[name], up[name]
			row.Downward, row.Upward = &d, &u
		}
		out = append(out, row)
	}
	return s.status.Complete(out)
}

// queueFigures returns q's per-tenant depth and oldest-item age (tenants with an empty
// queue are absent).
func queueFigures(q *pipelineQueue) map[string]status.Queue {
	out := map[string]status.Queue{}
	for t, st := range q.stats() {
		out[t] = status.Queue{Depth: st.Depth, OldestSeconds: st.Oldest.Seconds()}
	}
	return out
}

// hotTables returns, per tenant, the number of hot requests of both pipelines and the
// status.MaxRetrying most failing of them (most failures first). O(failing requests).
func (s *Syncer) hotTables() (map[string]int, map[string][]status.HotRequest) {
	counts := map[string]int{}
	rows := map[string][]status.HotRequest{}
	for _, p := range []struct {
		dir string
		q   *pipelineQueue
	}{{directionDownward, s.down}, {directionUpward, s.up}} {
		for k, c := range p.q.retries.HotCountsFull() {
			counts[k.Tenant] += c.Requests
		}
		for t, l := range p.q.retries.Hot(status.MaxRetrying) {
			for _, h := range l {
				rows[t] = append(rows[t], status.HotRequest{
					Direction: p.dir, Kind: string(h.Request.Kind), Namespace: h.Request.Namespace, Name: h.Request.Name,
					Retries: h.Retries, Reason: h.Reason, LastError: h.LastError, Since: h.Since,
					LongBackoff: h.SinceChange >= retry.LongBackoffRetries,
				})
			}
		}
	}
	status.TopRetrying(rows)
	return counts, rows
}

// TenantLags returns, for every registered tenant, how long its oldest unfinished request of
// each pipeline has waited: a request waiting in the queue for a worker counts from when it
// was queued (the fair queue's oldest item; without fair queuing only failed requests are
// seen), a request whose reconcile failed and waits for its retry from its first failure. A
// request refused for good (waiting for its object to change) does not count. The Tenant
// status's lag (tenant.LagWriter) comes from here.
func (s *Syncer) TenantLags() map[string]tenant.Lag {
	out := map[string]tenant.Lag{}
	if s.registry == nil {
		return out
	}
	now := time.Now()
	age := func(q *pipelineQueue) map[string]time.Duration {
		m := map[string]time.Duration{}
		for t, st := range q.stats() {
			m[t] = st.Oldest
		}
		for t, since := range q.retries.Oldest() {
			if d := now.Sub(since); d > m[t] {
				m[t] = d
			}
		}
		return m
	}
	down, up := age(s.down), age(s.up)
	for _, name := range s.registry.Names() {
		out[name] = tenant.Lag{Downward: down[name], Upward: up[name]}
	}
	return out
}
