package pod

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// budgetHold is a new Pod's place in its tenant's budget (limits.quota counted over all of the
// tenant's namespaces, env.PodBudget) between its admission and its super Pod's create.
type budgetHold struct {
	env     *resources.Env
	c       *tenant.Cluster
	superNS string
	name    string
	charge  corev1.ResourceList // what the Pod is charged (policy.AnnotationCharge on the super Pod)
	held    bool                // a reservation is taken (released by done unless created)
	created bool
}

// admitBudget decides whether tenant Pod t (as cached: its resources are in the cache) fits in
// its tenant's budget, from the syncer's counts alone, before any apiserver is asked anything
// for it. When it fits, its charge is reserved (two workers cannot both take the last room)
// and the hold is returned (wait false); the caller calls done when the reconcile ends.
// When it does not fit, the Pod waits (wait true): refuseBudget reports it, and the Pod is
// parked, to run again when room appears (a Pod of the tenant ends or is deleted) or the policy
// changes, not retried with backoff.
func admitBudget(ctx context.Context, env *resources.Env, c *tenant.Cluster, t *corev1.Pod, superNS string) (h *budgetHold, wait bool, err error) {
	h = &budgetHold{env: env, c: c, superNS: superNS, name: t.Name}
	l := c.Policy().Limits()
	var defaults, hard corev1.ResourceList
	if l != nil {
		defaults, hard = l.DefaultCharge, policy.BudgetHard(l.Quota)
	}
	h.charge = policy.PodCharge(t, defaults)
	if env.PodBudget == nil || len(hard) == 0 {
		return h, false, nil
	}
	ok, over, err := env.PodBudget.Reserve(c.Name, t.Namespace, t.Name, superNS, h.charge, hard)
	if err != nil {
		return nil, false, fmt.Errorf("Pod %s/%s: %w", t.Namespace, t.Name, err)
	}
	if !ok {
		return nil, true, refuseBudget(ctx, c, t, policy.BudgetDenial(fmt.Sprintf("Pod %s/%s", t.Namespace, t.Name), over))
	}
	h.held = true
	return h, false, nil
}

// recheck charges the full spec of the Pod (read from the tenant apiserver after admitBudget):
// when it costs other than the cached Pod did (resized in between), the reservation is taken
// again for it; wait is true when it no longer fits (reported, parked, reservation returned).
func (h *budgetHold) recheck(ctx context.Context, full *corev1.Pod) (wait bool, err error) {
	l := h.c.Policy().Limits()
	var defaults corev1.ResourceList
	if l != nil {
		defaults = l.DefaultCharge
	}
	charge := policy.PodCharge(full, defaults)
	if equality.Semantic.DeepEqual(charge, h.charge) {
		return false, nil
	}
	h.charge = charge
	if !h.held {
		return false, nil
	}
	ok, over, err := h.env.PodBudget.Reserve(h.c.Name, full.Namespace, full.Name, h.superNS, charge, policy.BudgetHard(l.Quota))
	if err != nil {
		return false, err
	}
	if !ok {
		return true, refuseBudget(ctx, h.c, full, policy.BudgetDenial(fmt.Sprintf("Pod %s/%s", full.Namespace, full.Name), over))
	}
	return false, nil
}

// annotate records the Pod's charge on super Pod want (policy.AnnotationCharge).
func (h *budgetHold) annotate(want *corev1.Pod) {
	if want.Annotations == nil {
		want.Annotations = map[string]string{}
	}
	want.Annotations[policy.AnnotationCharge] = policy.FormatCharge(h.charge)
}

// createdSuper reports that the super Pod was created: the reservation stays until the super
// Pod informer delivers it.
func (h *budgetHold) createdSuper() {
	h.created = true
	if h.held {
		h.env.PodBudget.Created(h.c.Name, h.superNS, h.name)
	}
}

// done returns the reservation unless the super Pod was created. Deferred by the caller.
func (h *budgetHold) done() {
	if h != nil && h.held && !h.created {
		h.env.PodBudget.Release(h.c.Name, h.superNS, h.name)
	}
}

// leaveBudget forgets a tenant Pod that is gone from its tenant's line for budget room.
func leaveBudget(env *resources.Env, c *tenant.Cluster, superNS, name string) {
	if env.PodBudget != nil {
		env.PodBudget.Leave(c.Name, superNS, name)
	}
}

// refuseBudget reports that tenant Pod t waits for room in its tenant's budget (d, rule
// tenantQuota) through the policy's refusal path: condition PodScheduled=False with reason
// d.Reason() (QuotaExceeded) and d's message (written once: a Pod that waits keeps the
// condition of its first refusal, so the changing use in the message causes no write loop),
// one Warning Event with the same reason and one count of vcsyncer_policy_denials_total per
// Pod version and policy generation (resources.Deny), and one Warning Event on the Pod's
// controller (reportOwner). It returns nil (the Pod is parked, not
// retried) or the status write's error.
func refuseBudget(ctx context.Context, c *tenant.Cluster, t *corev1.Pod, d *policy.Denial) error {
	obj := t
	if cond := scheduledCondition(t); cond == nil || cond.Status != corev1.ConditionFalse || cond.Reason != d.Reason() ||
		!strings.HasPrefix(cond.Message, string(policy.RuleTenantQuota)+":") {
		updated, err := setNotScheduled(ctx, c, t, d.Reason(), d.Error())
		if err != nil {
			return fmt.Errorf("failed to mark tenant Pod %s/%s waiting for its tenant's budget: %w", t.Namespace, t.Name, err)
		}
		obj = updated
		reportOwner(ctx, c, t, d.Reason(), d.Error())
	}
	resources.Deny(c, resources.KindPod, obj, d)
	return nil
}
