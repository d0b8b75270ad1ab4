package syncer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/checkpoint/trackingqueue"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// ShardFence tells the workers, with sharding on, whether this replica may write for a tenant
// now; pkg/sharding.Membership implements it (its Owns is false for every tenant once this
// shard's own Lease is not renewed in time).
type ShardFence interface {
	Owns(tenant string) bool
}

var _ tenant.Handover = (*Syncer)(nil)

// fenceDelay is how long a request of a registered tenant this shard may not write for waits
// before it is looked at again; it stays in the queue (and in checkpoints) meanwhile.
const fenceDelay = time.Second

// drainTimeout bounds Drain's wait for the tenant's running reconciles (each is bounded by
// the request timeouts of its clients).
const drainTimeout = 30 * time.Second

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

// fenced reports whether tenantName is registered here but this shard may not write for it:
// sharding is on, and either the tenant is not claimed (status.shard does not name this shard,
// as far as the Tenant controller has seen) or the ring gives it to another shard, or this
// shard's Lease is stale.
func (s *Syncer) fenced(tenantName string) bool {
	if s.opts.Sharding == nil {
		return false
	}
	if _, registered := s.registry.Get(tenantName); !registered {
		return false // nothing to write for: process drops it
	}
	_, claimed := s.claims.Load(tenantName)
	return !claimed || !s.opts.Sharding.Owns(tenantName)
}

// SetClaimed implements tenant.Handover.
func (s *Syncer) SetClaimed(tenantName string, claimed bool) {
	if claimed {
		s.claims.Store(tenantName, struct{}{})
	} else {
		s.claims.Delete(tenantName)
	}
}

// Drain implements tenant.Handover: it waits (up to 30 s) until no reconcile of the tenant
// runs — none starts meanwhile, as the fence holds its requests back once the tenant is not
// claimed — then, with save, writes the tenant's hand-over checkpoint (handoverCheckpoint) to
// its own store (CheckpointOptions.TenantStoreOf), which the next shard resumes from. It
// returns an error when reconciles still run after 30 s or the checkpoint is not written; the
// tenant must then stay here, fenced (counted in vcsyncer_shard_handovers_total{result=
// "drain_failed"}).
func (s *Syncer) Drain(ctx context.Context, tenantName string, save bool) (err error) {
	defer func() {
		if err != nil {
			metrics.ShardHandover("drain_failed")
		}
	}()
	wctx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	if err := s.running.wait(wctx, tenantName); err != nil {
		return fmt.Errorf("reconciles of tenant %s still running after %s: %w", tenantName, drainTimeout, err)
	}
	if !save || s.ckpt == nil || s.opts.Checkpoint.TenantStoreOf == nil {
		return nil
	}
	c, ok := s.registry.Get(tenantName)
	if !ok {
		return nil
	}
	st, err := s.opts.Checkpoint.TenantStoreOf(tenantName)
	if err != nil {
		return err
	}
	cp, err := s.handoverCheckpoint(c)
	if err != nil {
		return err
	}
	data, err := checkpoint.Encode(cp)
	if err != nil {
		return err
	}
	if err := st.Save(ctx, data); err != nil {
		return fmt.Errorf("saving the hand-over checkpoint to %s: %w", st.String(), err)
	}
	ctrl.LoggerFrom(ctx).WithName("sharding").Info("Hand-over checkpoint written", "store", st.String(),
		"sources", len(cp.Sources), "queueItems", cp.QueueItems, "bytes", len(data))
	metrics.ShardHandover("drained")
	return nil
}

// handoverCheckpoint takes the checkpoint of one tenant, in the order of a full one (positions
// before queues): its tenant informers' states; the super informers' ack entries of its super
// objects (no super objects: the next shard's super caches are live already); its unfinished
// requests; and whether the budget leaves it out.
func (s *Syncer) handoverCheckpoint(c *tenant.Cluster) (*checkpoint.Checkpoint, error) {
	prefix := tenantSourcePrefix + c.Name + "/"
	cp := s.ckpt.NewCheckpoint(time.Now())
	states, err := s.sources.Checkpoint(func(id string) bool {
		return strings.HasPrefix(id, prefix) || strings.HasPrefix(id, superSourcePrefix+"/")
	})
	if err != nil {
		return nil, err
	}
	for _, st := range states {
		if strings.HasPrefix(st.ID, superSourcePrefix+"/") {
			acks := map[string]source.ObjectVersion{}
			for k, v := range st.Acked {
				if v.Owner != nil && v.Owner.TenantUID == c.UID {
					acks[k] = v
				}
			}
			st = source.State{ID: st.ID, Acked: acks, Identity: st.Identity}
		}
		cp.Sources = append(cp.Sources, st)
	}
	// The policy mark before the queues: one set after them may stand for enqueues they lack.
	pol, err := json.Marshal(s.policyMarks.snapshot(func(t string) bool { return t == c.Name }))
	if err != nil {
		return nil, err
	}
	mine := s.queueItems(func(t string) bool { return t == c.Name })
	if cp.Queues, err = encodeQueueItems(mine); err != nil {
		return nil, err
	}
	cp.QueueItems = len(mine)
	cp.Extras = map[string][]byte{policyExtra: pol} // the policy its objects were examined under
	if over, _ := s.overBudget(s.ckpt.MaxItems()); over[c.Name] {
		cp.LeftOut = []string{c.Name} // its items are saved anyway; the next shard lists it cold
	}
	return cp, nil
}

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
func (s *Syncer) Adopt(ctx context.Context, tenantName, uid, from string, expired bool) {
	log := ctrl.LoggerFrom(ctx).WithName("sharding").WithValues("from", from) // the caller's logger names the tenant
	if s.ckpt == nil {
		return
	}
	if _, running := s.registry.Get(tenantName); running {
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
			cp = s.adoptCache.load(ctx, s.ckpt, st)
		} else {
			cp = s.ckpt.LoadFrom(ctx, st)
		}
		if cp == nil || !holdsTenant(cp, tenantName) {
			return
		}
		if best == nil || cp.TakenAt.After(best.TakenAt) {
			best, bestStore = cp, st.String()
		}
	}
	if s.opts.Checkpoint.TenantStoreOf != nil {
		st, err := s.opts.Checkpoint.TenantStoreOf(tenantName)
		consider(false, st, err)
	}
	if s.opts.Checkpoint.StoreOf != nil && from != "" && (expired || best == nil) {
		st, err := s.opts.Checkpoint.StoreOf(from)
		consider(expired, st, err) // a dead shard's checkpoint no longer changes: cached
	}
	if best == nil {
		log.Info("No checkpoint holds the tenant's state; it starts cold")
		metrics.ShardHandover("cold")
		return
	}
	n, err := s.adoptFrom(best, tenantName, uid)
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
	prefix := tenantSourcePrefix + tenantName + "/"
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
func (s *Syncer) adoptFrom(cp *checkpoint.Checkpoint, tenantName, uid string) (adopted, error) {
	items, err := decodeQueueItems(cp.Queues)
	if err != nil {
		return adopted{}, err
	}
	prefix := tenantSourcePrefix + tenantName + "/"
	var tenants, super []source.State
	for _, st := range cp.Sources {
		switch {
		case strings.HasPrefix(st.ID, prefix):
			tenants = append(tenants, st)
		case strings.HasPrefix(st.ID, superSourcePrefix+"/"):
			super = append(super, st)
		}
	}
	var n adopted
	n.sources = len(tenants)
	if n.sources == 0 {
		return n, nil
	}
	s.sources.Forget(prefix)
	s.sources.Restore(tenants)
	s.sources.MergeAcks(super, func(_ string, v source.ObjectVersion) bool {
		return v.Owner != nil && v.Owner.TenantUID == uid
	})
	for _, it := range items {
		if it.Req.Tenant == tenantName {
			s.park(it.Req, it.Down, trackingqueue.DelayWindow{Earliest: it.Earliest, Latest: it.Latest}, nil)
			n.items++
		}
	}
	s.restorePolicyFor(cp, tenantName)
	if slices.Contains(cp.LeftOut, tenantName) {
		n.leftOut = true
		s.budgetMu.Lock()
		if s.coldTenants == nil {
			s.coldTenants = map[string]bool{}
		}
		s.coldTenants[tenantName] = true
		s.budgetMu.Unlock()
	}
	return n, nil
}
