package syncer

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/resources"
)

// superPodIPsChanged is called for every update (newObj set) and delete (newObj nil) of a
// super Pod. When the change frees or gains an address of a tenant's running super Pod (the
// Pod is gone or finished, or its IPs changed), it enqueues downward, at high priority, the
// tenant objects that named one of the addresses when last reconciled (resources.PodIPMapper:
// Endpoints and EndpointSlices), so a super copy never keeps an address its tenant's Pod no
// longer holds, whatever the tenant's apiserver lets the syncer write into the tenant Pod.
func (s *Syncer) superPodIPsChanged(oldObj, newObj any) {
	if d, ok := oldObj.(cache.DeletedFinalStateUnknown); ok {
		oldObj = d.Obj
	}
	m, ok := oldObj.(metav1.Object)
	if !ok || !s.ready.ready.Load() {
		return // before the super caches synced, ClusterSynced enqueues every object
	}
	c, _, ok := s.syncedOwner(m)
	if !ok {
		return
	}
	var mappers []resources.PodIPMapper
	for _, r := range s.resources {
		if pm, ok := r.(resources.PodIPMapper); ok {
			mappers = append(mappers, pm)
		}
	}
	if len(mappers) == 0 {
		return
	}
	changed := changedPodIPs(liveIPs(oldObj), liveIPs(newObj))
	if len(changed) == 0 {
		return
	}
	for _, pm := range mappers {
		for _, req := range pm.PodIPDependents(c, changed) {
			s.enqueue(s.down, req, true)
		}
	}
}

// liveIPs returns the addresses a Pod (a *corev1.Pod or a cached *podcache.Pod; nil: none)
// holds: its status IPs, normalised, unless it has finished (Succeeded or Failed: its
// addresses are back in the pool).
func liveIPs(obj any) map[string]bool {
	if obj == nil {
		return nil
	}
	st, ok := podcache.StatusOf(obj)
	if !ok || st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
		return nil
	}
	out := map[string]bool{}
	add := func(s string) {
		if a, err := netip.ParseAddr(s); err == nil {
			out[a.Unmap().String()] = true
		}
	}
	for _, ip := range st.PodIPs {
		add(ip.IP)
	}
	add(st.PodIP)
	return out
}

// changedPodIPs returns the addresses in exactly one of before and after.
func changedPodIPs(before, after map[string]bool) []string {
	var out []string
	for ip := range before {
		if !after[ip] {
			out = append(out, ip)
		}
	}
	for ip := range after {
		if !before[ip] {
			out = append(out, ip)
		}
	}
	return out
}
