package handover

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resume"
)

// Adopt implements tenant.Handover. It takes the tenant's state from one checkpoint:
//   - for a tenant released by shard from (expired false), its hand-over checkpoint, written
//     by Drain on from once the tenant's reconciles had stopped; from's own latest checkpoint
//     only when no hand-over checkpoint holds the tenant. A periodic checkpoint of from newer
//     than the hand-over may have been taken while from was removing the tenant, with part of
//     its super ack entries already forgotten;
//   - for a tenant whose shard from died holding it (expired true), the newer of its hand-over
//     checkpoint (written when it came to from) and from's last periodic checkpoint.
//
// From that checkpoint, for tenant (UID uid) only, it takes the tenant informers' states, the
// super informers' ack entries of the tenant's super objects, the tenant's unfinished
// requests (parked until the tenant syncs) and whether the checkpoint left the tenant out.
// When no checkpoint holds the tenant's state, it starts cold (every object of it is
// reconciled once). Call it before the tenant is registered.
func (h *Shard) Adopt(ctx context.Context, tenantName, uid, from string, expired bool) {
	log := ctrl.LoggerFrom(ctx).WithName("sharding").WithValues("from", from) // the caller's logger names the tenant
	ckpt := h.ckpt()
	if ckpt == nil {
		return
	}
	if _, running := h.registry.Get(tenantName); running {
		log.Error(errAdoptRunning, "Not taking the tenant's state from a checkpoint")
		return
	}
	var best *checkpoint.Checkpoint
	var bestStore string
	consider := func(cached bool, st checkpoint.Store, err error) {
		if err != nil {
			log.Error(err, "No checkpoint store")
			return
		}
		var cp *checkpoint.Checkpoint
		if cached {
			cp = h.cache.load(ctx, ckpt, st)
		} else {
			cp = ckpt.LoadFrom(ctx, st)
		}
		if cp == nil || !holdsTenant(cp, tenantName) {
			return
		}
		if best == nil || cp.TakenAt.After(best.TakenAt) {
			best, bestStore = cp, st.String()
		}
	}
	o := h.state.Options()
	if o.TenantStoreOf != nil {
		st, err := o.TenantStoreOf(tenantName)
		consider(false, st, err)
	}
	if o.StoreOf != nil && from != "" && (expired || best == nil) {
		st, err := o.StoreOf(from)
		consider(expired, st, err) // a dead shard's checkpoint no longer changes: cached
	}
	if best == nil {
		log.Info("No checkpoint holds the tenant's state; it starts cold")
		metrics.ShardHandover("cold")
		return
	}
	n, err := h.adoptFrom(best, tenantName, uid)
	if err != nil {
		log.Error(err, "Cannot take the tenant's state from the checkpoint; it starts cold", "store", bestStore)
		metrics.ShardHandover("cold")
		return
	}
	log.Info("Took the tenant's state from a checkpoint", "store", bestStore, "takenAt", best.TakenAt,
		"sources", n.sources, "queueItems", n.items, "leftOut", n.leftOut)
	metrics.ShardHandover("adopted")
}

// errAdoptRunning: Adopt was called for a tenant that is registered (its informers run).
var errAdoptRunning = errors.New("the tenant is registered here already")

// adoptCacheTTL is how long a shard's checkpoint, once read for one tenant, serves the others
// taken from it (a dead shard's tenants are claimed one after another).
const adoptCacheTTL = 30 * time.Second

// checkpointCache keeps the last checkpoint read from each other shard's store for
// adoptCacheTTL, so that taking a dead shard's tenants reads and decodes its checkpoint once,
// not once per tenant. Per-tenant hand-over stores are not cached (each is read once).
type checkpointCache struct {
	mu sync.Mutex
	m  map[string]cachedCheckpoint
}

type cachedCheckpoint struct {
	cp *checkpoint.Checkpoint
	at time.Time
}

func (c *checkpointCache) load(ctx context.Context, ckpt *checkpoint.Checkpointer, st checkpoint.Store) *checkpoint.Checkpoint {
	key := st.String()
	c.mu.Lock()
	if e, ok := c.m[key]; ok && time.Since(e.at) < adoptCacheTTL {
		c.mu.Unlock()
		return e.cp
	}
	c.mu.Unlock()
	cp := ckpt.LoadFrom(ctx, st)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]cachedCheckpoint{}
	}
	for k, e := range c.m {
		if time.Since(e.at) >= adoptCacheTTL {
			delete(c.m, k)
		}
	}
	c.m[key] = cachedCheckpoint{cp: cp, at: time.Now()}
	c.mu.Unlock()
	return cp
}

// holdsTenant reports whether cp has a source of the tenant.
func holdsTenant(cp *checkpoint.Checkpoint, tenantName string) bool {
	prefix := resume.TenantPrefix + tenantName + "/"
	for _, st := range cp.Sources {
		if strings.HasPrefix(st.ID, prefix) {
			return true
		}
	}
	return false
}

type adopted struct {
	sources, items int
	leftOut        bool
}

// adoptFrom applies tenant's part of cp (see Adopt).
func (h *Shard) adoptFrom(cp *checkpoint.Checkpoint, tenantName, uid string) (adopted, error) {
	items, err := resume.DecodeQueueItems(cp.Queues)
	if err != nil {
		return adopted{}, err
	}
	prefix := resume.TenantPrefix + tenantName + "/"
	var tenants, super []source.State
	for _, st := range cp.Sources {
		switch {
		case strings.HasPrefix(st.ID, prefix):
			tenants = append(tenants, st)
		case strings.HasPrefix(st.ID, resume.SuperPrefix+"/"):
			super = append(super, st)
		}
	}
	var n adopted
	n.sources = len(tenants)
	if n.sources == 0 {
		return n, nil
	}
	sources := h.state.Sources()
	sources.Forget(prefix)
	sources.Restore(tenants)
	sources.MergeAcks(super, func(_ string, v source.ObjectVersion) bool {
		return v.Owner != nil && v.Owner.TenantUID == uid
	})
	n.items = h.state.ParkItems(items, func(t string) bool { return t == tenantName })
	h.state.RestorePolicyFor(cp, tenantName)
	if slices.Contains(cp.LeftOut, tenantName) {
		n.leftOut = true
		h.state.MarkCold(tenantName)
	}
	return n, nil
}
