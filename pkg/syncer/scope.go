package syncer

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

// newSuperScope returns the scope of the super informers, or nil without sharding.
func newSuperScope(o Options) *source.Scope {
	if o.Sharding == nil {
		return nil
	}
	return source.NewScope(conversion.LabelTenantUID)
}

// scopeWaitFor puts tenant c into the super informers' scope and waits, up to scopeWait,
// until the super caches hold its objects (sharding only).
func (s *Syncer) scopeWaitFor(c *tenant.Cluster) {
	if s.scope == nil {
		return
	}
	gen := s.scope.Add(c.UID)
	ctx, cancel := context.WithTimeout(context.Background(), scopeWait)
	defer cancel()
	start := time.Now()
	if err := s.scope.Wait(ctx, gen); err != nil {
		ctrl.Log.WithName("sharding").Error(err, "The super caches do not hold the tenant's objects yet; syncing it anyway",
			"tenant", c.Name, "waited", time.Since(start).Round(time.Millisecond))
	}
}

// scopeRemove takes tenant c out of the super informers' scope once no Cluster of its UID is
// registered: its super objects leave this shard's caches.
func (s *Syncer) scopeRemove(c *tenant.Cluster) {
	if s.scope == nil {
		return
	}
	if cur, ok := s.registry.Get(c.Name); ok && cur.UID == c.UID {
		return
	}
	s.scope.Remove(c.UID)
}

// seedScope puts the tenants whose super objects cp's super informers held into the scope, so
// that resuming from cp lists nothing for them, and forgets those not registered again within
// scopeSeedGrace.
func (s *Syncer) seedScope(ctx context.Context, cp *checkpoint.Checkpoint) {
	if s.scope == nil {
		return
	}
	seeded := map[string]bool{}
	for _, st := range cp.Sources {
		if !strings.HasPrefix(st.ID, superSourcePrefix+"/") {
			continue
		}
		for _, uid := range st.Scope {
			if uid != source.ScopeNone && !seeded[uid] {
				seeded[uid] = true
				s.scope.Add(uid)
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
		for _, name := range s.registry.Names() {
			if c, ok := s.registry.Get(name); ok {
				registered[c.UID] = true
			}
		}
		for uid := range seeded {
			if !registered[uid] {
				s.scope.Remove(uid)
			}
		}
	}()
}

// superCacheStats reports the super informer caches for vcsyncer_super_cache_objects.
func (s *Syncer) superCacheStats() (map[string]int, int, bool) {
	out := map[string]int{}
	for kind, r := range s.resources {
		if inf := r.SuperInformer(s.env); inf != nil {
			out[string(kind)] = len(inf.GetStore().ListKeys())
		}
	}
	if s.scope == nil {
		return out, 0, false
	}
	return out, len(s.scope.Values()), true
}
