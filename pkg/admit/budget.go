package admit

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/admission"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
)

// NewBudget builds the tenants' budgets (limits.quota counted over all of a tenant's
// namespaces), kept from the super informers' events of Pods and of every kind of synced the
// budget charges (policy.ChargedKind): each owned super object counts its charge
// (superCharge) until it ends or is deleted; an object parked for room is given to wake (the
// syncer enqueues it again as a live event). Reservations are refused
// (admission.ErrBudgetNotSynced, retried) until the handlers have been given every super
// object present at start, so a restarted syncer never admits on a partial count. Call it
// once synced holds every kind the syncer runs.
func NewBudget(env *resources.Env, synced map[resources.Kind]resources.Resource, wake func(resources.Request)) (*admission.Budget[resources.Request], error) {
	var regs []cache.ResourceEventHandlerRegistration
	b := admission.NewBudget(admission.BudgetOptions[resources.Request]{
		Wake: wake,
		Synced: func() bool {
			for _, r := range regs {
				if !r.HasSynced() {
					return false
				}
			}
			return regs != nil
		},
	})
	for kind, r := range synced {
		if kind != resources.KindPod && !policy.ChargedKind(string(kind)) {
			continue
		}
		observe := func(obj any) { observeSuper(b, kind, obj, "") }
		gone := func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if m, ok := obj.(metav1.Object); ok {
				if o, owned := conversion.OwnerOf(m); owned {
					b.Observe(o.Tenant, resources.BudgetKey(kind, m.GetNamespace(), m.GetName()), nil)
				}
			}
		}
		reg, err := r.SuperInformer(env).AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    observe,
			UpdateFunc: func(_, n any) { observe(n) },
			DeleteFunc: gone,
		})
		if err != nil {
			return nil, err
		}
		regs = append(regs, reg)
	}
	return b, nil
}

// observeSuper observes super object obj of kind (as its informer has it) in its owning
// tenant's budget b: its charge (superCharge). With tenant set, objects of other tenants are
// skipped before their charge is computed. It reports whether obj was observed.
func observeSuper(b *admission.Budget[resources.Request], kind resources.Kind, obj any, tenant string) bool {
	m, ok := obj.(metav1.Object)
	if !ok {
		return false
	}
	o, owned := conversion.OwnerOf(m)
	if !owned || tenant != "" && o.Tenant != tenant {
		return false
	}
	_, charge, ok := superCharge(kind, obj)
	if !ok {
		return false
	}
	b.Observe(o.Tenant, resources.BudgetKey(kind, m.GetNamespace(), m.GetName()), charge)
	return true
}

// CountTenant observes in budget b (NewBudget's) every super object of tenant that the super
// informers of the charged kinds in synced cache now, as their handlers would, and returns how
// many. With sharding, a tenant that joins this shard has its super objects listed into the
// caches (resume.State.ScopeWaitFor) and handed to the handlers some time later; counting it
// from the caches before its informers start means none of its Pods is admitted against a
// partial count. It costs one pass over the shard's cached objects of those kinds.
//
// After each observation the object is looked up again, until the cache holds what was last
// observed (at most a few rounds): an informer updates its cache before it notifies its
// handlers (client-go's shared informer), so a change the lookup does not see yet reaches the
// handlers after this observation and overrides it, and one it sees is observed here.
func CountTenant(env *resources.Env, synced map[resources.Kind]resources.Resource, b *admission.Budget[resources.Request], tenant string) int {
	n := 0
	for kind, r := range synced {
		if kind != resources.KindPod && !policy.ChargedKind(string(kind)) {
			continue
		}
		store := r.SuperInformer(env).GetStore()
		for _, obj := range store.List() {
			if !observeSuper(b, kind, obj, tenant) {
				continue
			}
			n++
			m := obj.(metav1.Object) // observeSuper took it as one
			budgetKey := resources.BudgetKey(kind, m.GetNamespace(), m.GetName())
			key, err := cache.MetaNamespaceKeyFunc(obj)
			if err != nil {
				continue
			}
			last := obj
			for range 8 {
				cur, exists, err := store.GetByKey(key)
				if err != nil || exists && cur == last || !exists && last == nil {
					break
				}
				if !exists {
					b.Observe(tenant, budgetKey, nil)
					last = nil
					continue
				}
				if !observeSuper(b, kind, cur, tenant) {
					b.Observe(tenant, budgetKey, nil) // no longer the tenant's
				}
				last = cur
			}
		}
	}
	return n
}

// superCharge returns super object obj of kind (as its informer has it) and what it counts in
// its tenant's budget: a Pod's recorded charge (superPodCharge), another kind's
// policy.ObjectCharge, shared between the objects of a kind that cost the same object counts
// (most of them), so a tenant's thousands of Secrets and ConfigMaps do not each hold a copy.
func superCharge(kind resources.Kind, obj any) (metav1.Object, corev1.ResourceList, bool) {
	if kind == resources.KindPod {
		m, ok := podcache.MetaOf(obj)
		if !ok {
			return nil, nil, false
		}
		return m, superPodCharge(obj), true
	}
	ro, ok := obj.(runtime.Object)
	if !ok {
		return nil, nil, false
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil, false
	}
	return m, plainCharges.intern(kind, policy.ObjectCharge(ro)), true
}

// chargeInterner keeps, per kind, the first charge of that kind seen, and hands it out in
// place of an equal one. Charges are never changed once made (admission.Budget reads them).
type chargeInterner struct {
	mu sync.Mutex
	m  map[resources.Kind]corev1.ResourceList
}

var plainCharges = &chargeInterner{m: map[resources.Kind]corev1.ResourceList{}}

func (ci *chargeInterner) intern(kind resources.Kind, charge corev1.ResourceList) corev1.ResourceList {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	have, ok := ci.m[kind]
	if !ok {
		ci.m[kind] = charge
		return charge
	}
	if equality.Semantic.DeepEqual(have, charge) {
		return have
	}
	return charge
}

// superPodCharge returns what super Pod obj (cached or plain) counts in its tenant's budget: nothing once it ended;
// the charge the syncer recorded on it when it created it (policy.AnnotationCharge); for a
// super Pod without one (created by an older syncer) its charge under the built-in
// defaultCharge, from its cached spec.
func superPodCharge(obj any) corev1.ResourceList {
	m, ok1 := podcache.MetaOf(obj)
	st, ok2 := podcache.StatusOf(obj)
	if !ok1 || !ok2 || st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
		return nil
	}
	if v, ok := m.Annotations[policy.AnnotationCharge]; ok {
		if charge, ok := policy.ParseCharge(v); ok {
			return charge
		}
	}
	// No recorded charge (a super Pod of an earlier version): the spec decides.
	if p, ok := podcache.From(obj); ok {
		return policy.PodCharge(p, policy.Builtin().Limits.DefaultCharge)
	}
	return nil
}
