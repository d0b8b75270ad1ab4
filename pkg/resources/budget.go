package resources

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/admission"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// BudgetOf adapts b, whose items are T, to Budget: a super object is keyed
// <kind>/<super namespace>/<name>, and the item parked for a tenant object is item(tenant,
// kind, namespace, name) (what b's Wake gets back).
func BudgetOf[T comparable](b *admission.Budget[T], item func(tenant string, kind Kind, namespace, name string) T) Budget {
	return budgetOf[T]{b: b, item: item}
}

type budgetOf[T comparable] struct {
	b    *admission.Budget[T]
	item func(tenant string, kind Kind, namespace, name string) T
}

// BudgetKey is the key of super object superNamespace/name of kind in the budgets BudgetOf
// adapts (what an informer handler Observes).
func BudgetKey(kind Kind, superNamespace, name string) string {
	return string(kind) + "/" + superNamespace + "/" + name
}

func (a budgetOf[T]) Reserve(tenant string, kind Kind, namespace, name, superNamespace string, need, hard corev1.ResourceList) (bool, []policy.BudgetExceeded, error) {
	ok, over, err := a.b.Reserve(tenant, a.item(tenant, kind, namespace, name), BudgetKey(kind, superNamespace, name), need, hard)
	out := make([]policy.BudgetExceeded, len(over))
	for i, o := range over {
		out[i] = policy.BudgetExceeded{Name: o.Name, Requested: o.Requested, Used: o.Used, Hard: o.Hard}
	}
	return ok, out, err
}

func (a budgetOf[T]) Fits(tenant string, kind Kind, superNamespace, name string, need, hard corev1.ResourceList) bool {
	return a.b.Fits(tenant, BudgetKey(kind, superNamespace, name), need, hard)
}

func (a budgetOf[T]) Created(tenant string, kind Kind, superNamespace, name string) {
	a.b.Created(tenant, BudgetKey(kind, superNamespace, name))
}

func (a budgetOf[T]) Release(tenant string, kind Kind, superNamespace, name string) {
	a.b.Release(tenant, BudgetKey(kind, superNamespace, name))
}

func (a budgetOf[T]) Leave(tenant string, kind Kind, superNamespace, name string) {
	a.b.Leave(tenant, BudgetKey(kind, superNamespace, name))
}

// BudgetHold is a tenant object's place in its tenant's budget (limits.quota counted over all
// of the tenant's namespaces, Env.Budget) between its admission and the write of its super
// copy. The Pod reconciler and the generic one (pkg/reconcile) share it; each reports a
// refusal its own way (a Pod's condition, a Service's, an Event).
type BudgetHold struct {
	env     *Env
	c       *tenant.Cluster
	kind    Kind
	superNS string
	name    string
	// Charge is what the object is charged (for a Pod, policy.AnnotationCharge on its super Pod).
	Charge  corev1.ResourceList
	held    bool // a reservation is taken (released by Done unless written)
	written bool
}

// AdmitBudget decides whether tenant object obj of kind, whose super copy superNS/name would
// cost charge, fits in its tenant's budget, from the syncer's counts alone, before any
// apiserver is asked anything for it. When it fits (d nil), its charge is reserved (two
// workers cannot both take the last room) and the hold is returned; the caller defers Done
// and calls Written once the super copy is written. When it does not fit, d is the refusal
// (policy.BudgetDenial, rule tenantQuota) and the object is parked, to run again when room
// appears (an object of the tenant goes or costs less) or the policy changes: the caller
// reports d and returns without a retry. err is not nil while the budgets are not counted yet.
// Without a budget (no Env.Budget, no counted key in limits.quota) everything fits.
func AdmitBudget(env *Env, c *tenant.Cluster, kind Kind, obj metav1.Object, superNS string, charge corev1.ResourceList) (h *BudgetHold, d *policy.Denial, err error) {
	h = &BudgetHold{env: env, c: c, kind: kind, superNS: superNS, name: obj.GetName(), Charge: charge}
	if len(charge) == 0 {
		return h, nil, nil // a kind the budget does not count
	}
	d, err = h.reserve(obj, charge)
	if d != nil || err != nil {
		return nil, d, err
	}
	return h, nil, nil
}

// AdmitBudgetChange is AdmitBudget for an update of the super copy superNS/name of tenant
// object obj of kind from charge have (what the super copy costs now) to want: it reserves
// want in place of have when want is more under any key (the reservation is returned, and
// have counts again, if the update is not written), and holds nothing otherwise.
func AdmitBudgetChange(env *Env, c *tenant.Cluster, kind Kind, obj metav1.Object, superNS string, have, want corev1.ResourceList) (*BudgetHold, *policy.Denial, error) {
	for k, q := range want {
		if q.Cmp(have[k]) > 0 {
			return AdmitBudget(env, c, kind, obj, superNS, want)
		}
	}
	return &BudgetHold{env: env, c: c, kind: kind, superNS: superNS, name: obj.GetName(), Charge: want}, nil, nil
}

// Recharge takes the hold again for obj's new charge when it differs from the one held (a
// Pod's full spec read after AdmitBudget). d is the refusal when it no longer fits: the
// object is parked and its reservation returned.
func (h *BudgetHold) Recharge(obj metav1.Object, charge corev1.ResourceList) (d *policy.Denial, err error) {
	if equality.Semantic.DeepEqual(charge, h.Charge) {
		return nil, nil
	}
	h.Charge = charge
	if !h.held {
		return nil, nil
	}
	return h.reserve(obj, charge)
}

func (h *BudgetHold) reserve(obj metav1.Object, charge corev1.ResourceList) (*policy.Denial, error) {
	hard := budgetHard(h.c)
	if h.env.Budget == nil || len(hard) == 0 {
		return nil, nil
	}
	ok, over, err := h.env.Budget.Reserve(h.c.Name, h.kind, obj.GetNamespace(), obj.GetName(), h.superNS, charge, hard)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", h.kind, obj.GetNamespace(), obj.GetName(), err)
	}
	if !ok {
		// A reservation held already (Recharge) stays until Done returns it.
		return policy.BudgetDenial(fmt.Sprintf("%s %s/%s", h.kind, obj.GetNamespace(), obj.GetName()), over), nil
	}
	h.held = true
	return nil, nil
}

// budgetHard is tenant c's budget: the counted keys of its policy's limits.quota.
func budgetHard(c *tenant.Cluster) corev1.ResourceList {
	if l := c.Policy().Limits(); l != nil {
		return policy.BudgetHard(l.Quota)
	}
	return nil
}

// BudgetFits reports whether tenant object obj of kind (super copy superNS/obj's name), which
// costs charge, fits in tenant c's budget now (true when the tenant has no budget or the kind
// costs nothing): Budget.Fits, which reserves nothing.
func BudgetFits(env *Env, c *tenant.Cluster, kind Kind, obj metav1.Object, superNS string, charge corev1.ResourceList) bool {
	hard := budgetHard(c)
	if env.Budget == nil || len(hard) == 0 || len(charge) == 0 {
		return true
	}
	return env.Budget.Fits(c.Name, kind, superNS, obj.GetName(), charge, hard)
}

// Written reports that the super copy was written: the reservation stays until the super
// informer delivers it.
func (h *BudgetHold) Written() {
	h.written = true
	if h.held {
		h.env.Budget.Created(h.c.Name, h.kind, h.superNS, h.name)
	}
}

// WriteEnded reports how the write of the super copy ended: when err is nil, or leaves the
// outcome unknown (WriteOutcomeUnknown: the apiserver may have written it), the reservation
// stays, as Written keeps it, until the super informer delivers the copy or the budget's
// reservation TTL ends; a retry of the same object replaces it rather than adding to it. After
// a refusal, Done returns it.
func (h *BudgetHold) WriteEnded(err error) {
	if err == nil || WriteOutcomeUnknown(err) {
		h.Written()
	}
}

// WriteOutcomeUnknown reports whether a write that returned err (not nil) may still have been
// applied: any error but an API status below 500, which is the apiserver's answer that it
// wrote nothing (a refusal: 4xx, including AlreadyExists, Conflict and 429). A timeout (504,
// the apiserver's "did not complete within the allowed duration", after which the write can
// still commit), a server timeout, an internal error (an etcd timeout after the commit), a 503
// and a transport error (a connection broken after the request was sent, a client deadline)
// leave it unknown.
func WriteOutcomeUnknown(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	code := status.Status().Code
	return code == 0 || code >= 500
}

// Done returns the reservation unless the super copy was written. Deferred by the caller.
func (h *BudgetHold) Done() {
	if h != nil && h.held && !h.written {
		h.env.Budget.Release(h.c.Name, h.kind, h.superNS, h.name)
	}
}

// LeaveBudget forgets a tenant object that is gone (or no longer wants a super copy) from its
// tenant's line for budget room.
func LeaveBudget(env *Env, c *tenant.Cluster, kind Kind, superNS, name string) {
	if env.Budget != nil {
		env.Budget.Leave(c.Name, kind, superNS, name)
	}
}
