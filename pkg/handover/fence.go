package handover

import (
	"context"
	"sync"
	"time"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/resume"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Fence tells the workers, with sharding on, whether this replica may write for a tenant
// now; pkg/sharding.Membership implements it (its Owns is false for every tenant once this
// shard's own Lease is not renewed in time).
type Fence interface {
	Owns(tenant string) bool
}

// FenceDelay is how long a request of a registered tenant this shard may not write for waits
// before it is looked at again; it stays in the queue (and in checkpoints) meanwhile.
const FenceDelay = time.Second

// Shard is this replica's side of the tenants' hand-over between shards: which tenants it
// holds (SetClaimed), whether a worker may write for a tenant (Fenced), the running reconciles
// a drain waits for (Begin, End), and the hand-over checkpoints (Drain, Adopt).
type Shard struct {
	fence    Fence
	state    *resume.State
	registry *tenant.Registry

	// running counts each tenant's running reconciles (Drain waits for them).
	running inflight
	// claims are the tenants this shard holds; the fence lets the workers write only for them.
	claims sync.Map
	// cache keeps other shards' checkpoints read by Adopt for a while.
	cache checkpointCache
}

var _ tenant.Handover = (*Shard)(nil)

// New returns the Shard of a syncer: fence is nil without sharding (nothing is fenced); state
// is the syncer's checkpoint state (its Checkpointer and Options.StoreOf, TenantStoreOf).
func New(fence Fence, state *resume.State) *Shard {
	return &Shard{fence: fence, state: state}
}

// SetRegistry gives the Shard the tenant registry (before the syncer starts).
func (h *Shard) SetRegistry(r *tenant.Registry) { h.registry = r }

func (h *Shard) ckpt() *checkpoint.Checkpointer { return h.state.Checkpointer() }

// Begin counts a reconcile of tenant as running (before the fence check: Drain waits for it);
// End ends it.
func (h *Shard) Begin(tenant string) { h.running.begin(tenant) }

// End ends a reconcile Begin counted.
func (h *Shard) End(tenant string) { h.running.end(tenant) }

// Fenced reports whether tenantName is registered here but this shard may not write for it:
// sharding is on, and either the tenant is not claimed (status.shard does not name this shard,
// as far as the Tenant controller has seen) or the ring gives it to another shard, or this
// shard's Lease is stale.
func (h *Shard) Fenced(tenantName string) bool {
	if h.fence == nil {
		return false
	}
	if _, registered := h.registry.Get(tenantName); !registered {
		return false // nothing to write for: the worker drops it
	}
	_, claimed := h.claims.Load(tenantName)
	return !claimed || !h.fence.Owns(tenantName)
}

// SetClaimed implements tenant.Handover.
func (h *Shard) SetClaimed(tenantName string, claimed bool) {
	if claimed {
		h.claims.Store(tenantName, struct{}{})
	} else {
		h.claims.Delete(tenantName)
	}
}

// inflight counts the running reconciles of each tenant, so that a drain can wait for them.
type inflight struct {
	mu   sync.Mutex
	cond *sync.Cond
	n    map[string]int
}

func (f *inflight) begin(tenant string) {
	f.mu.Lock()
	if f.n == nil {
		f.n, f.cond = map[string]int{}, sync.NewCond(&f.mu)
	}
	f.n[tenant]++
	f.mu.Unlock()
}

func (f *inflight) end(tenant string) {
	f.mu.Lock()
	if f.n[tenant]--; f.n[tenant] <= 0 {
		delete(f.n, tenant)
		f.cond.Broadcast()
	}
	f.mu.Unlock()
}

// wait blocks until tenant has no running reconcile or ctx is done; it returns ctx's error then.
func (f *inflight) wait(ctx context.Context, tenant string) error {
	stop := context.AfterFunc(ctx, func() {
		f.mu.Lock()
		if f.cond != nil {
			f.cond.Broadcast()
		}
		f.mu.Unlock()
	})
	defer stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.n[tenant] > 0 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		f.cond.Wait()
	}
	return nil
}
