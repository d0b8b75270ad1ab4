package admission

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
)

// SuperPodHandler returns the handler that feeds w from the super Pod informer: every super
// Pod the syncer owns (conversion.OwnerOf), keyed "namespace/name", is Observed with its
// creation time, whether it waits for the super scheduler and whether it is bound (SuperPodPending);
// a deleted one is Observed as neither.
func (w *Window[K]) SuperPodHandler() cache.ResourceEventHandler {
	observe := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		p, ok := podcache.MetaOf(obj)
		if !ok {
			return
		}
		o, owned := conversion.OwnerOf(p)
		if !owned {
			return
		}
		pending, bound := SuperPodPending(obj)
		w.Observe(o.Tenant, p.Namespace+"/"+p.Name, p.CreationTimestamp.Time, pending, bound)
	}
	gone := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if m, ok := obj.(metav1.Object); ok {
			if o, owned := conversion.OwnerOf(m); owned {
				w.Observe(o.Tenant, m.GetNamespace()+"/"+m.GetName(), m.GetCreationTimestamp().Time, false, false)
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, n any) { observe(n) },
		DeleteFunc: gone,
	}
}

// SuperPodPending reports whether super Pod obj (a cached or plain Pod) waits for the super
// scheduler (not bound, not terminating, not found unschedulable by it), and whether it is
// bound. It decodes the status of an unbound cached Pod only, never its spec.
func SuperPodPending(obj any) (pending, bound bool) {
	p, ok1 := podcache.MetaOf(obj)
	node, ok2 := podcache.NodeNameOf(obj)
	if !ok1 || !ok2 {
		return false, false
	}
	if node != "" {
		return false, true
	}
	if !p.DeletionTimestamp.IsZero() {
		return false, false
	}
	st, ok := podcache.StatusOf(obj)
	if !ok || st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
		return false, false
	}
	for _, c := range st.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return false, false // the scheduler tried (Unschedulable) or it is gated
		}
	}
	return true, false
}
