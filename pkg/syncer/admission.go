package syncer

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/admission"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/resources"
)

// AdmissionOptions configures the admission window for new super Pods (pkg/admission).
type AdmissionOptions struct {
	// MaxWindow bounds the window, in Pods; 0 turns the window off (Pods are created as fast
	// as the downward workers go). MinWindow is its lower bound and start (default
	// admission.DefaultMinWindow).
	MaxWindow, MinWindow int
}

// podAdmission adapts an admission.Window to resources.PodAdmission.
type podAdmission struct {
	w *admission.Window[resources.Request]
}

func (a podAdmission) Admit(tenant, namespace, name, superNamespace string) (ok, took bool) {
	req := resources.Request{Tenant: tenant, Kind: resources.KindPod, Namespace: namespace, Name: name}
	return a.w.Acquire(tenant, req, superNamespace+"/"+name)
}

func (a podAdmission) Created(superNamespace, name string) { a.w.Created(superNamespace + "/" + name) }

func (a podAdmission) Abort(superNamespace, name string) { a.w.Abort(superNamespace + "/" + name) }

// newAdmission builds the window (nil when o.MaxWindow is 0 or fair queuing is off): a granted
// Pod is enqueued again as a live event, and the window follows the super Pod informer.
func (s *Syncer) newAdmission(o AdmissionOptions, fair bool) (*admission.Window[resources.Request], error) {
	if o.MaxWindow <= 0 || !fair {
		return nil, nil
	}
	w := admission.New(admission.Options[resources.Request]{
		MinWindow: o.MinWindow, MaxWindow: o.MaxWindow, Weight: s.weight,
		Wake:    func(req resources.Request) { s.enqueue(s.down, req, true) },
		OnAdmit: metrics.AdmissionAdmitted,
	})
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
		pending, bound := superPodPending(obj)
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
	_, err := s.env.SuperInformers.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, n any) { observe(n) },
		DeleteFunc: gone,
	})
	if err != nil {
		return nil, err
	}
	metrics.RegisterAdmissionStats(func() (int, map[string]int, map[string]int) {
		st := w.Stats()
		if s.registry != nil {
			for _, name := range s.registry.Names() { // 0, not absent, for registered tenants
				if _, ok := st.Waiting[name]; !ok {
					st.Waiting[name] = 0
				}
				if _, ok := st.HeldBy[name]; !ok {
					st.HeldBy[name] = 0
				}
			}
		}
		return st.Window, st.Waiting, st.HeldBy
	})
	return w, nil
}

// superPodPending reports whether super Pod obj (a cached or plain Pod) waits for the super
// scheduler (not bound, not terminating, not found unschedulable by it), and whether it is
// bound. It decodes the status of an unbound cached Pod only, never its spec.
func superPodPending(obj any) (pending, bound bool) {
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

// adjustAdmission adapts the window every admission.DefaultAdjustInterval until ctx is done.
func (s *Syncer) adjustAdmission(ctx context.Context) {
	wait.UntilWithContext(ctx, func(context.Context) { s.admission.Adjust() }, admission.DefaultAdjustInterval)
}
