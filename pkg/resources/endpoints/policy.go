package endpoints

import (
	"net/netip"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// PodIPIndex is the index of the super Pod cache by IP (every status.podIPs entry, in
// netip.Addr.String form), added by SuperInformer.
const PodIPIndex = "vc-syncer/pod-ip"

// AddPodIPIndex adds PodIPIndex to the super Pod informer of env unless it has it. It must be
// called before the informer starts (the Resources' SuperInformer methods are).
func AddPodIPIndex(env *resources.Env) {
	inf := env.SuperInformers.Core().V1().Pods().Informer()
	if _, ok := inf.GetIndexer().GetIndexers()[PodIPIndex]; ok {
		return
	}
	_ = inf.AddIndexers(cache.Indexers{PodIPIndex: podIPs})
}

func podIPs(obj any) ([]string, error) {
	st, ok := podcache.StatusOf(obj)
	if !ok {
		return nil, nil
	}
	return ipsOf(st), nil
}

// ipsOf returns a Pod's IPs (status.podIPs, or status.podIP), normalised.
func ipsOf(st *corev1.PodStatus) []string {
	var out []string
	add := func(s string) {
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, a.Unmap().String())
		}
	}
	for _, ip := range st.PodIPs {
		add(ip.IP)
	}
	if len(st.PodIPs) == 0 && st.PodIP != "" {
		add(st.PodIP)
	}
	return out
}

// OwnPodIP returns a func reporting whether an address is the IP of one of tenant c's super
// Pods (label conversion.LabelTenantUID) that has not finished (phase neither Succeeded nor
// Failed: a finished Pod's IP goes back to the pool) and is not a super Node's address (a
// hostNetwork Pod's IP is its Node's: kubelet, etcd). It reads the super caches.
func OwnPodIP(env *resources.Env, c *tenant.Cluster) func(netip.Addr) bool {
	var nodeAddrs map[netip.Addr]bool
	isNode := func(a netip.Addr) bool {
		if env.SuperNodes == nil {
			return false
		}
		if nodeAddrs == nil {
			nodeAddrs = map[netip.Addr]bool{}
			nodes, _ := env.SuperNodes.Core().V1().Nodes().Lister().List(labels.Everything())
			for _, n := range nodes {
				for _, na := range n.Status.Addresses {
					if x, err := netip.ParseAddr(na.Address); err == nil {
						nodeAddrs[x.Unmap()] = true
					}
				}
			}
		}
		return nodeAddrs[a]
	}
	inf := env.SuperInformers.Core().V1().Pods().Informer()
	return func(a netip.Addr) bool {
		a = a.Unmap()
		objs, err := inf.GetIndexer().ByIndex(PodIPIndex, a.String())
		if err != nil { // no index (a cache set up without SuperInformer): scan the tenant's Pods
			objs = nil
			for _, o := range inf.GetStore().List() {
				if p, ok := podcache.From(o); ok && p.Labels[conversion.LabelTenantUID] == c.UID {
					objs = append(objs, o)
				}
			}
		}
		for _, o := range objs {
			p, ok := podcache.From(o)
			if !ok || p.Labels[conversion.LabelTenantUID] != c.UID ||
				p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			for _, ip := range ipsOf(&p.Status) {
				if ip == a.String() && !isNode(a) {
					return true
				}
			}
		}
		return false
	}
}

// AddressProblems returns, for an endpoint object in tenant namespace ns naming addresses ips
// and targetRefs refs, what tenant c's policy refuses (policy.EndpointIPProblem,
// policy.TargetRefProblem), each problem once.
func AddressProblems(env *resources.Env, c *tenant.Cluster, ns string, ips []string, refs []*corev1.ObjectReference) []string {
	own := OwnPodIP(env, c)
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, ip := range ips {
		add(policy.EndpointIPProblem(c.Policy().Network(), ip, own))
	}
	for _, r := range refs {
		add(policy.TargetRefProblem(ns, r))
	}
	return out
}

// IPWatch records, per tenant, which endpoint objects name which IPs, so a change of a
// tenant Pod (it got an IP, finished, or is gone) re-enqueues the objects naming its IPs: an
// object refused because a Pod IP was not known yet is synced once it is, and the super copy
// of one whose Pod is gone is deleted before the IP can go to another tenant's Pod. It is safe
// for concurrent use; the zero value is ready.
type IPWatch struct {
	mu sync.Mutex
	// m: tenant → IP → requests; byReq: tenant → request → IPs (to replace or drop a record).
	m     map[string]map[string]map[resources.Request]bool
	byReq map[string]map[resources.Request][]string
}

// Set records that req (of tenant c) names ips (replacing what was recorded for it).
func (w *IPWatch) Set(c *tenant.Cluster, req resources.Request, ips []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dropLocked(c.Name, req)
	if len(ips) == 0 {
		return
	}
	if w.m == nil {
		w.m, w.byReq = map[string]map[string]map[resources.Request]bool{}, map[string]map[resources.Request][]string{}
	}
	if w.m[c.Name] == nil {
		w.m[c.Name], w.byReq[c.Name] = map[string]map[resources.Request]bool{}, map[resources.Request][]string{}
	}
	var norm []string
	for _, s := range ips {
		a, err := netip.ParseAddr(s)
		if err != nil {
			continue
		}
		ip := a.Unmap().String()
		if w.m[c.Name][ip] == nil {
			w.m[c.Name][ip] = map[resources.Request]bool{}
		}
		w.m[c.Name][ip][req] = true
		norm = append(norm, ip)
	}
	w.byReq[c.Name][req] = norm
}

// Drop forgets req (of tenant c).
func (w *IPWatch) Drop(c *tenant.Cluster, req resources.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dropLocked(c.Name, req)
}

func (w *IPWatch) dropLocked(tenantName string, req resources.Request) {
	for _, ip := range w.byReq[tenantName][req] {
		delete(w.m[tenantName][ip], req)
		if len(w.m[tenantName][ip]) == 0 {
			delete(w.m[tenantName], ip)
		}
	}
	delete(w.byReq[tenantName], req)
}

// For returns the requests of tenant c recorded as naming one of tenant Pod p's IPs.
func (w *IPWatch) For(c *tenant.Cluster, st *corev1.PodStatus) []resources.Request {
	return w.ForIPs(c, ipsOf(st))
}

// ForIPs returns the requests of tenant c recorded as naming one of ips (any textual form of
// an address; those that do not parse are ignored).
func (w *IPWatch) ForIPs(c *tenant.Cluster, ips []string) []resources.Request {
	norm := make([]string, 0, len(ips))
	for _, s := range ips {
		if a, err := netip.ParseAddr(s); err == nil {
			norm = append(norm, a.Unmap().String())
		}
	}
	ips = norm
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []resources.Request
	seen := map[resources.Request]bool{}
	for _, ip := range ips {
		for req := range w.m[c.Name][ip] {
			if !seen[req] {
				seen[req] = true
				out = append(out, req)
			}
		}
	}
	return out
}

// Forget drops every record of tenant tenantName.
func (w *IPWatch) Forget(tenantName string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, tenantName)
	delete(w.byReq, tenantName)
}
