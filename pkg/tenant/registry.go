package tenant

import (
	"context"
	"net/netip"
	"sort"
	"sync"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// InformerFactoryFunc builds the informer factory of the tenant named tenant over client; every
// informer it returns must apply transform to objects before caching them.
type InformerFactoryFunc func(tenant string, client kubernetes.Interface, transform cache.TransformFunc) informers.SharedInformerFactory

// Hooks lets the syncer attach to tenant Clusters. Implementations must not block.
type Hooks interface {
	// ClusterStarting is called once per Cluster after its apiserver answered and before its
	// informers start: register informers and event handlers here.
	ClusterStarting(c *Cluster)
	// ClusterSynced is called once the Cluster's caches have synced: enqueue every cached object.
	ClusterSynced(c *Cluster)
	// ClusterStopped is called after a Cluster stopped (Tenant removed, paused or its kubeconfig rotated).
	ClusterStopped(c *Cluster)
	// PolicyChanged is called after a running Cluster's effective policy changed: re-examine
	// every object of the tenant (a refused one may be allowed now, a synced one refused).
	PolicyChanged(c *Cluster)
}

// Registry holds the running tenant Clusters by Tenant name. It is safe for concurrent use.
type Registry struct {
	// NewInformers, if set, builds each Cluster's informer factory (the syncer's resumable
	// factories, pkg/checkpoint/source); nil uses a plain client-go factory. Set it before the
	// first Cluster is added.
	NewInformers InformerFactoryFunc
	// Restored, if set, returns the number of tenant's objects of kind (one of HeldKinds) that
	// the syncer will hold without listing them, and true when it knows: the objects its
	// informer's first List will be answered with from a checkpoint, or 0 for a kind it does
	// not cache (an opt-in kind not opted in, a disabled kind). The count before a Cluster's
	// informers start (limits.maxCachedObjects) then uses it instead of a LIST, so a resume
	// lists nothing. Set it before the first Cluster is added.
	Restored func(tenant, kind string) (int64, bool)
	// RequestTimeout bounds every request of a Cluster's tenant client except its informers'
	// lists and watches (newCluster); 0 means no bound. Set it before the first Cluster is added.
	RequestTimeout time.Duration

	ctx   context.Context
	hooks Hooks

	mu       sync.RWMutex
	clusters map[string]*Cluster
	// ranges are every known Tenant's spec.serviceCIDRs, whether it runs here or not (with
	// sharding, on another replica).
	ranges map[string][]netip.Prefix
	// suspendDelays are, per tenant, the wait before the objects of a tenant whose caches
	// overflowed limits.maxCachedObjects are counted again (nextSuspendDelay).
	suspendDelays map[string]time.Duration
}

// nextSuspendDelay returns how long the Cluster replacing the named tenant's overflowed one
// waits before it counts the tenant's objects again: suspendBackoff's first step, then twice
// the previous wait, up to its cap. It is forgotten when the tenant is removed, so a tenant
// whose object count keeps crossing the cap costs one full list of its objects per wait at most.
func (r *Registry) nextSuspendDelay(name string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.suspendDelays == nil {
		r.suspendDelays = map[string]time.Duration{}
	}
	d := suspendBackoff.Duration
	if prev, ok := r.suspendDelays[name]; ok {
		d = min(time.Duration(float64(prev)*suspendBackoff.Factor), suspendBackoff.Cap)
	}
	r.suspendDelays[name] = d
	return d
}

// NewRegistry returns an empty Registry. Clusters started by it live until ctx is done or
// they are removed.
func NewRegistry(ctx context.Context, hooks Hooks) *Registry {
	return &Registry{ctx: ctx, hooks: hooks, clusters: map[string]*Cluster{}, ranges: map[string][]netip.Prefix{}}
}

// Get returns the running Cluster of the named tenant.
func (r *Registry) Get(name string) (*Cluster, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c, ok := r.clusters[name]
	return c, ok
}

// Names returns the names of the running tenants, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.clusters))
	for n := range r.clusters {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ReservedBy returns the name of a Tenant other than tenant whose spec.serviceCIDRs contain
// ip, or "" when none does. It sees every Tenant the controller has read, including those
// another shard syncs (O(tenants)).
func (r *Registry) ReservedBy(tenant string, ip netip.Addr) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for name, ps := range r.ranges {
		if name == tenant {
			continue
		}
		for _, p := range ps {
			if p.Contains(ip) {
				return name
			}
		}
	}
	return ""
}

// setRanges records Tenant name's spec.serviceCIDRs (nil forgets them).
func (r *Registry) setRanges(name string, ps []netip.Prefix) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ps == nil {
		delete(r.ranges, name)
		return
	}
	r.ranges[name] = ps
}

// put registers c in place of any previous Cluster of the same tenant, stops the previous one,
// then starts c. For the same Tenant (same UID: a rotated kubeconfig) the tenant stays
// registered throughout, so hooks can tell a restart from a removal. A previous Cluster of
// another Tenant of that name (a Tenant deleted and re-created, whose deletion the controller
// may not have seen) is removed first, as by remove: its hooks see the tenant unregistered and
// drop everything kept for it, which must not carry over to the new Tenant (whose super
// namespaces differ).
func (r *Registry) put(c *Cluster) {
	c.claim = r.claim
	if old, ok := r.Get(c.Name); ok && old.UID != c.UID {
		r.remove(c.Name)
	}
	r.mu.Lock()
	old, ok := r.clusters[c.Name]
	r.clusters[c.Name] = c
	r.mu.Unlock()
	if ok {
		old.stop()
		r.hooks.ClusterStopped(old)
	}
	c.start(r.ctx, r.hooks)
}

// claim records identity for c unless another registered Cluster already holds it.
func (r *Registry) claim(c *Cluster, identity string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.clusters {
		if o != c && o.identity == identity {
			return o.Name, false
		}
	}
	c.identity = identity
	return "", true
}

// remove stops and unregisters the named tenant's Cluster, if any.
func (r *Registry) remove(name string) {
	r.mu.Lock()
	c, ok := r.clusters[name]
	delete(r.clusters, name)
	delete(r.suspendDelays, name)
	r.mu.Unlock()
	if ok {
		c.stop()
		r.hooks.ClusterStopped(c)
	}
}

// policyChanged tells the hooks that c's effective policy changed, if c is the running Cluster
// of its tenant and has synced (before that, Hooks.ClusterSynced is to compare the policy its
// objects were last examined under with the current one: a replaced Cluster's first sync
// enqueues only what changed since its ack maps).
func (r *Registry) policyChanged(c *Cluster) {
	if cur, ok := r.Get(c.Name); ok && cur == c && c.Synced() {
		r.hooks.PolicyChanged(c)
	}
}
