package syncer

import (
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
	changed := podcache.ChangedIPs(oldObj, newObj)
	if len(changed) == 0 {
		return
	}
	for _, pm := range mappers {
		for _, req := range pm.PodIPDependents(c, changed) {
			s.enqueue(s.down, req, true)
		}
	}
}
