package status

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Recorder keeps what a Provider remembers per tenant beyond its connections: the time of each
// tenant's last successful sync and the function that reports its last checkpoint.
type Recorder struct {
	// lastSync maps a tenant name to the Unix time in nanoseconds (*atomic.Int64) of its
	// last successful reconcile, in either direction. Entries of removed tenants stay (one
	// word per tenant name ever seen) so that a Paused tenant keeps its last sync time.
	lastSync sync.Map
	// lastCheckpoint is set by SetLastCheckpoint; nil: never checkpointed.
	lastCheckpoint atomic.Pointer[func(tenant string) time.Time]
}

// RecordSync notes a successful reconcile of one of tenant's objects now: one map load and
// one atomic store, no lock.
func (r *Recorder) RecordSync(tenant string) {
	now := time.Now().UnixNano()
	if v, ok := r.lastSync.Load(tenant); ok {
		v.(*atomic.Int64).Store(now)
		return
	}
	v := &atomic.Int64{}
	v.Store(now)
	if prev, loaded := r.lastSync.LoadOrStore(tenant, v); loaded {
		prev.(*atomic.Int64).Store(now)
	}
}

// LastSync returns when tenant's last successful reconcile finished; zero: never.
func (r *Recorder) LastSync(tenant string) time.Time {
	v, ok := r.lastSync.Load(tenant)
	if !ok {
		return time.Time{}
	}
	return time.Unix(0, v.(*atomic.Int64).Load())
}

// SetLastCheckpoint sets the function that reports when a tenant's sync progress was last
// checkpointed (the zero time: never). Safe to call at any time.
func (r *Recorder) SetLastCheckpoint(f func(tenant string) time.Time) { r.lastCheckpoint.Store(&f) }

// Complete returns rows (one per connected tenant) with a row without phase or queues added
// for every other tenant that has synced (a Paused tenant, say), with its last sync, and the
// last checkpoint of every row filled in when SetLastCheckpoint was called.
func (r *Recorder) Complete(rows []Tenant) []Tenant {
	connected := make(map[string]bool, len(rows))
	for _, row := range rows {
		connected[row.Name] = true
	}
	r.lastSync.Range(func(k, _ any) bool {
		if name := k.(string); !connected[name] {
			rows = append(rows, Tenant{Name: name, LastSync: r.LastSync(name)})
		}
		return true
	})
	if f := r.lastCheckpoint.Load(); f != nil {
		for i := range rows {
			rows[i].LastCheckpoint = (*f)(rows[i].Name)
		}
	}
	return rows
}

// TopRetrying sorts each tenant's hot requests by failures, most first, and keeps the
// MaxRetrying first.
func TopRetrying(rows map[string][]HotRequest) {
	for t, l := range rows {
		slices.SortStableFunc(l, func(a, b HotRequest) int { return b.Retries - a.Retries })
		if len(l) > MaxRetrying {
			l = l[:MaxRetrying]
		}
		rows[t] = l
	}
}
