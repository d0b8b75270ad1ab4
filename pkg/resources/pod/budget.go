package pod

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// admitBudget decides whether tenant Pod t (as cached: its resources are in the cache) fits in
// its tenant's budget (limits.quota counted over all of the tenant's namespaces), from the
// syncer's counts alone, before any apiserver is asked anything for it
// (resources.AdmitBudget). When it fits, its charge (policy.PodCharge) is reserved and the
// hold is returned (wait false); the caller defers its Done. When it does not fit, the Pod
// waits (wait true): refuseBudget reports it, and the Pod is parked, to run again when room
// appears (an object of the tenant ends or is deleted) or the policy changes, not retried
// with backoff.
func admitBudget(ctx context.Context, env *resources.Env, c *tenant.Cluster, t *corev1.Pod, superNS string) (h *resources.BudgetHold, wait bool, err error) {
	h, d, err := resources.AdmitBudget(env, c, resources.KindPod, t, superNS, policy.PodCharge(t, defaultCharge(c)))
	if err != nil {
		return nil, false, err
	}
	if d != nil {
		return nil, true, refuseBudget(ctx, c, t, d)
	}
	return h, false, nil
}

// recheckBudget charges the full spec of the Pod (read from the tenant apiserver after
// admitBudget): when it costs other than the cached Pod did (resized in between), the
// reservation is taken again for it; wait is true when it no longer fits (reported, parked,
// the reservation returned by h.Done).
func recheckBudget(ctx context.Context, c *tenant.Cluster, h *resources.BudgetHold, full *corev1.Pod) (wait bool, err error) {
	d, err := h.Recharge(full, policy.PodCharge(full, defaultCharge(c)))
	if err != nil {
		return false, err
	}
	if d != nil {
		return true, refuseBudget(ctx, c, full, d)
	}
	return false, nil
}

// defaultCharge is tenant c's limits.defaultCharge.
func defaultCharge(c *tenant.Cluster) corev1.ResourceList {
	if l := c.Policy().Limits(); l != nil {
		return l.DefaultCharge
	}
	return nil
}

// annotateCharge records the Pod's charge h.Charge on super Pod want (policy.AnnotationCharge).
func annotateCharge(h *resources.BudgetHold, want *corev1.Pod) {
	if want.Annotations == nil {
		want.Annotations = map[string]string{}
	}
	want.Annotations[policy.AnnotationCharge] = policy.FormatCharge(h.Charge)
}

// refuseBudget reports that tenant Pod t waits for room in its tenant's budget (d, rule
// tenantQuota) through the policy's refusal path: condition PodScheduled=False with reason
// d.Reason() (QuotaExceeded) and d's message (written once: a Pod that waits keeps the
// condition of its first refusal, so the changing use in the message causes no write loop),
// one Warning Event with the same reason and one count of vcsyncer_policy_denials_total per
// Pod version and policy generation (admit.Deny), and one Warning Event on the Pod's
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
	admit.Deny(c, resources.KindPod, obj, d)
	return nil
}
