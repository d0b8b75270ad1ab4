package resume

import (
	"context"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// With sharding, the super informers of Env.SuperInformers (every super object the syncer
// writes for a tenant: namespaces, Pods, ConfigMaps, Secrets, Services, ...) cache only the
// objects of the tenants registered on this shard: a source.Scope on the tenant-UID label
// (conversion.LabelTenantUID) that a tenant joins when its Cluster starts and leaves when it is
// unregistered. The caches shared by every tenant stay whole on every shard: super Nodes
// (vNodes), public StorageClasses and PriorityClasses, PersistentVolumes and super Events.

// scopeWait bounds how long a tenant's first sync waits for the super caches to hold its
// objects. After it the sync goes on: a super object not cached yet is then reconciled (and
// found on the apiserver) rather than skipped.
const scopeWait = 10 * time.Second

// scopeSeedGrace is how long tenant UIDs taken from a checkpoint stay in the scope without a
// registered Cluster: the tenants the shard held when it stopped are claimed again within it
// (a Lease duration or two), so their objects are not dropped and listed again meanwhile.
const scopeSeedGrace = 2 * time.Minute

// NewScope returns the scope of the super informers, or nil without sharding.
func NewScope(sharding bool) *source.Scope {
	if !sharding {
		return nil
	}
	return source.NewScope(conversion.LabelTenantUID)
}

// ScopeWaitFor puts tenant c into the super informers' scope and waits, up to scopeWait,
// until the super caches hold its objects (sharding only).
func (st *State) ScopeWaitFor(c *tenant.Cluster) {
	scope := st.cfg.Scope
	if scope == nil {
		return
	}
	gen := scope.Add(c.UID)
	ctx, cancel := context.WithTimeout(context.Background(), scopeWait)
	defer cancel()
	start := time.Now()
	if err := scope.Wait(ctx, gen); err != nil {
		ctrl.Log.WithName("sharding").Error(err, "The super caches do not hold the tenant's objects yet; syncing it anyway",
			"tenant", c.Name, "waited", time.Since(start).Round(time.Millisecond))
	}
}

// ScopeRemove takes tenant c out of the super informers' scope once no Cluster of its UID is
// registered: its super objects leave this shard's caches.
func (st *State) ScopeRemove(c *tenant.Cluster) {
	if st.cfg.Scope == nil {
		return
	}
	if cur, ok := st.registry.Get(c.Name); ok && cur.UID == c.UID {
		return
	}
	st.cfg.Scope.Remove(c.UID)
}

// seedScope puts the tenants whose super objects cp's super informers held into the scope, so
// that resuming from cp lists nothing for them, and forgets those not registered again within
// scopeSeedGrace.
func (st *State) seedScope(ctx context.Context, cp *checkpoint.Checkpoint) {
	scope := st.cfg.Scope
	if scope == nil {
		return
	}
	seeded := map[string]bool{}
	for _, s := range cp.Sources {
		if !strings.HasPrefix(s.ID, SuperPrefix+"/") {
			continue
		}
		for _, uid := range s.Scope {
			if uid != source.ScopeNone && !seeded[uid] {
				seeded[uid] = true
				scope.Add(uid)
			}
		}
	}
	if len(seeded) == 0 {
		return
	}
	go func() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(scopeSeedGrace):
		}
		registered := map[string]bool{}
		for _, name := range st.registry.Names() {
			if c, ok := st.registry.Get(name); ok {
				registered[c.UID] = true
			}
		}
		for uid := range seeded {
			if !registered[uid] {
				scope.Remove(uid)
			}
		}
	}()
}
