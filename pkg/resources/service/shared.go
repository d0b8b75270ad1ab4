package service

import (
	"net/netip"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// takesShared reports whether the super copy of tenant Service t, created now, would get a
// ClusterIP allocated by the super cluster from its shared range: t is neither headless nor
// ExternalName, and its ClusterIPs are not all inside c's Service ranges (tenantIPs).
func takesShared(c *tenant.Cluster, t *corev1.Service) bool {
	if t.Spec.Type == corev1.ServiceTypeExternalName || t.Spec.ClusterIP == corev1.ClusterIPNone {
		return false
	}
	return tenantIPs(c.ServiceCIDRs(), t) == nil
}

// holdsShared reports whether super Service s holds a ClusterIP outside c's Service ranges
// (an address of the super cluster's shared range).
func holdsShared(c *tenant.Cluster, s *corev1.Service) bool {
	if s.Spec.Type == corev1.ServiceTypeExternalName {
		return false
	}
	ranges := c.ServiceCIDRs()
	for _, ip := range clusterIPs(s) {
		if ip == corev1.ClusterIPNone || ip == "" {
			continue
		}
		a, err := netip.ParseAddr(ip)
		if err != nil {
			continue
		}
		if !slices.ContainsFunc(ranges, func(p netip.Prefix) bool { return p.Contains(a) }) {
			return true
		}
	}
	return false
}

// pendingTTL is how long a reservation of sharedTracker waits for its super Service to reach
// the super cache before it is dropped.
const pendingTTL = 2 * time.Minute

// sharedTracker counts, per tenant, the super Services that hold an address of the super
// cluster's shared Service range, for services.maxSharedClusterIPs: those in the super cache
// plus those reserved by this process and not cached yet, so concurrent reconciles (and a
// cache behind the writes) never take more than the policy allows. Safe for concurrent use.
type sharedTracker struct {
	mu sync.Mutex
	// pending: tenant name → super Service key (namespace/name) → reservation time.
	pending map[string]map[string]time.Time
	now     func() time.Time
}

// shared is the process's tracker.
var shared = &sharedTracker{}

// reserve takes a slot for the super Service key of tenant c if c holds fewer than its
// policy's maxSharedClusterIPs; super lists the super Services (the cache). It returns nil
// when the slot is taken (or key held one already), else the refusal of tenant Service t.
func (st *sharedTracker) reserve(c *tenant.Cluster, super corelisters.ServiceLister, t *corev1.Service, key string) *policy.Denial {
	max := policy.DefaultMaxSharedClusterIPs
	if p := c.Policy().Services().MaxSharedClusterIPs; p != nil {
		max = int(*p)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	now := time.Now
	if st.now != nil {
		now = st.now
	}
	held := map[string]bool{}
	if svcs, err := super.List(labels.Everything()); err == nil {
		for _, s := range svcs {
			if conversion.OwnedByTenant(s, c.UID) && holdsShared(c, s) {
				held[s.Namespace+"/"+s.Name] = true
			}
		}
	}
	mine := st.pending[c.Name]
	for k, at := range mine {
		if held[k] || now().Sub(at) > pendingTTL {
			delete(mine, k) // cached now (counted there), or never created
			continue
		}
		held[k] = true
	}
	if held[key] {
		return nil
	}
	if d := policy.SharedClusterIPDenial(t, len(held), max); d != nil {
		return d
	}
	if st.pending == nil {
		st.pending = map[string]map[string]time.Time{}
	}
	if st.pending[c.Name] == nil {
		st.pending[c.Name] = map[string]time.Time{}
	}
	st.pending[c.Name][key] = now()
	return nil
}

// release drops the reservation of key (its super Service was not created).
func (st *sharedTracker) release(c *tenant.Cluster, key string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.pending[c.Name], key)
}

// forget drops every reservation of the named tenant.
func (st *sharedTracker) forget(tenantName string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.pending, tenantName)
}
