package syncer

import (
	"sync"
	"sync/atomic"
	"time"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/status"
)

var _ status.Provider = (*Syncer)(nil)

// statusState is what the Syncer records for the status page (pkg/status).
type statusState struct {
	// lastSync maps a tenant name to the Unix time in nanoseconds (*atomic.Int64) of its
	// last successful reconcile, in either direction. Entries of removed tenants stay (one
	// word per tenant name ever seen) so that a Paused tenant keeps its last sync time.
	lastSync sync.Map
	// lastCheckpoint is set by SetLastCheckpoint; nil: never checkpointed.
	lastCheckpoint atomic.Pointer[func(tenant string) time.Time]
}

// recordSync notes a successful reconcile of one of tenant's objects now. Requests of a
// tenant that is not (or no longer) synced are dropped by process without a reconcile, so
// they do not count. It is called by every worker after every request: one map load and
// one atomic store, no lock.
func (s *Syncer) recordSync(tenant string) {
	if c, ok := s.registry.Get(tenant); !ok || !c.Synced() {
		return
	}
	now := time.Now().UnixNano()
	if v, ok := s.status.lastSync.Load(tenant); ok {
		v.(*atomic.Int64).Store(now)
		return
	}
	v := &atomic.Int64{}
	v.Store(now)
	if prev, loaded := s.status.lastSync.LoadOrStore(tenant, v); loaded {
		prev.(*atomic.Int64).Store(now)
	}
}

// lastSyncOf returns when tenant's last successful reconcile finished; zero: never.
func (s *Syncer) lastSyncOf(tenant string) time.Time {
	v, ok := s.status.lastSync.Load(tenant)
	if !ok {
		return time.Time{}
	}
	return time.Unix(0, v.(*atomic.Int64).Load())
}

// SetLastCheckpoint gives the Syncer the function that reports when a tenant's sync progress
// was last checkpointed (the zero time: never, e.g. a tenant added after the last
// checkpoint). Until it is called the status page shows "never". Safe to call at any time.
func (s *Syncer) SetLastCheckpoint(f func(tenant string) time.Time) {
	s.status.lastCheckpoint.Store(&f)
}

// TenantStatuses implements status.Provider: one row per tenant in the registry, with its
// phase derived from the connection (Running once its caches synced and its apiserver
// answers, Unreachable after a failed probe, Connecting before), its queues (nil without
// fair queuing, which keeps no per-tenant figures), last sync and last checkpoint; then a
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
	var checkpoint func(string) time.Time
	if f := s.status.lastCheckpoint.Load(); f != nil {
		checkpoint = *f
	}
	var out []status.Tenant
	for _, name := range s.registry.Names() {
		c, ok := s.registry.Get(name)
		if !ok {
			continue
		}
		st := c.State()
		row := status.Tenant{Name: name, Weight: c.Weight(), LastSync: s.lastSyncOf(name)}
		switch {
		case st.Synced && st.Connected:
			row.Phase = string(tenancyv1alpha1.TenantRunning)
		case !st.Connected && st.LastError != "":
			row.Phase, row.Reason = string(tenancyv1alpha1.TenantUnreachable), st.LastReason
		default:
			row.Phase = string(tenancyv1alpha1.TenantConnecting)
		}
		if down != nil {
			d, u := down[name], up[name]
			row.Downward, row.Upward = &d, &u
		}
		out = append(out, row)
	}
	connected := make(map[string]bool, len(out))
	for _, row := range out {
		connected[row.Name] = true
	}
	s.status.lastSync.Range(func(k, _ any) bool {
		if name := k.(string); !connected[name] {
			out = append(out, status.Tenant{Name: name, LastSync: s.lastSyncOf(name)})
		}
		return true
	})
	if checkpoint != nil {
		for i := range out {
			out[i].LastCheckpoint = checkpoint(out[i].Name)
		}
	}
	return out
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
