package syncer

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/admission"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
)

// podBudget adapts an admission.Budget to resources.PodBudget: the tenant-wide budgets
// (limits.quota over all of a tenant's namespaces), keyed by super Pod namespace/name.
type podBudget struct {
	b *admission.Budget[resources.Request]
}

func (a podBudget) Reserve(tenant, namespace, name, superNamespace string, need, hard corev1.ResourceList) (bool, []policy.BudgetExceeded, error) {
	req := resources.Request{Tenant: tenant, Kind: resources.KindPod, Namespace: namespace, Name: name}
	ok, over, err := a.b.Reserve(tenant, req, superNamespace+"/"+name, need, hard)
	out := make([]policy.BudgetExceeded, len(over))
	for i, o := range over {
		out[i] = policy.BudgetExceeded{Name: o.Name, Requested: o.Requested, Used: o.Used, Hard: o.Hard}
	}
	return ok, out, err
}

func (a podBudget) Created(tenant, superNamespace, name string) {
	a.b.Created(tenant, superNamespace+"/"+name)
}

func (a podBudget) Release(tenant, superNamespace, name string) {
	a.b.Release(tenant, superNamespace+"/"+name)
}

func (a podBudget) Leave(tenant, superNamespace, name string) {
	a.b.Leave(tenant, superNamespace+"/"+name)
}

// newBudget builds the tenants' budgets, kept from the super Pod informer's events: each
// owned super Pod counts its recorded charge (superPodCharge) until it ends or is deleted; a
// Pod parked for room is enqueued again as a live event. Reservations are refused
// (ErrBudgetNotSynced, retried) until the handler has been given every super Pod present at
// start, so a restarted syncer never admits on a partial count.
func (s *Syncer) newBudget() (*admission.Budget[resources.Request], error) {
	var reg cache.ResourceEventHandlerRegistration
	b := admission.NewBudget(admission.BudgetOptions[resources.Request]{
		Wake:   func(req resources.Request) { s.enqueue(s.down, req, true) },
		Synced: func() bool { return reg != nil && reg.HasSynced() },
	})
	observe := func(obj any) {
		p, ok := podcache.From(obj)
		if !ok {
			return
		}
		if o, owned := conversion.OwnerOf(p); owned {
			b.Observe(o.Tenant, p.Namespace+"/"+p.Name, superPodCharge(p))
		}
	}
	gone := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if m, ok := obj.(metav1.Object); ok {
			if o, owned := conversion.OwnerOf(m); owned {
				b.Observe(o.Tenant, m.GetNamespace()+"/"+m.GetName(), nil)
			}
		}
	}
	var err error
	reg, err = s.env.SuperInformers.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, n any) { observe(n) },
		DeleteFunc: gone,
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// superPodCharge returns what super Pod p counts in its tenant's budget: nothing once it ended;
// the charge the syncer recorded on it when it created it (policy.AnnotationCharge); for a
// super Pod without one (created by an older syncer) its charge under the built-in
// defaultCharge, from its cached spec.
func superPodCharge(p *corev1.Pod) corev1.ResourceList {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return nil
	}
	if v, ok := p.Annotations[policy.AnnotationCharge]; ok {
		if charge, ok := policy.ParseCharge(v); ok {
			return charge
		}
	}
	return policy.PodCharge(p, policy.Builtin().Limits.DefaultCharge)
}
