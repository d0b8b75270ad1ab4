package policy

import (
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// SuperBudget returns the spec of the super copy of tenant PodDisruptionBudget pdb whose
// selector matches pods super Pods, and a disruptionBudget report when p changed what the
// budget allows.
//
// The super cluster's disruption controller (kube-controller-manager, pkg/controller/
// disruption, getExpectedPodCount) counts the expected Pods of a maxUnavailable or percentage
// budget from the Pods' controllers (their owner references' scale). Super Pods have no owner
// references, so there it finds 0 expected Pods (event UnmanagedPods) and allows no
// disruption at all: every eviction, hence every super node drain, is refused. Only an integer
// minAvailable is computed without controllers (expected = the Pods the selector matches,
// desiredHealthy = minAvailable). So the super copy gets an integer minAvailable equal to the
// tenant's desiredHealthy (what the tenant's own disruption controller computed with the
// tenant's controllers, status.desiredHealthy, when status.observedGeneration is the
// budget's generation; an integer minAvailable is taken as is), and no maxUnavailable. Until
// the tenant's status is current, desiredHealthy is computed as the disruption controller
// would with pods as the expected count (percentages rounded up).
//
// A budget with desiredHealthy >= pods allows no eviction of the super Pods even when all of
// them are healthy, and keeps doing so for as long as the tenant has fewer Pods than it
// expects (replicas that cannot be scheduled) or its status says so (the tenant writes its
// own status). Unless p.AllowBlocking, it is synced allowing one disruption (minAvailable
// pods-1). That is reported when the budget itself allows no disruption (desiredHealthy >= the
// tenant's status.expectedPods, or >= pods without a current status: maxUnavailable 0,
// minAvailable 100%, neither field set); a budget that is short of Pods is relaxed without a
// report. Without Pods nothing is blocked and the budget is synced as computed; the Pods'
// arrival re-syncs it. Unless
// p.AllowBlocking, unhealthyPodEvictionPolicy is AlwaysAllow, so Pods that are not ready never
// hold up a drain (with the default IfHealthyBudget, a crash-looping Pod of a budget already
// short of healthy Pods cannot be evicted).
func SuperBudget(p *tenancyv1alpha1.DisruptionBudgetPolicy, pdb *policyv1.PodDisruptionBudget, pods int32) (policyv1.PodDisruptionBudgetSpec, *Denial) {
	desired, expected := desiredHealthy(pdb, pods)
	spec := policyv1.PodDisruptionBudgetSpec{Selector: pdb.Spec.Selector.DeepCopy()}
	always := policyv1.AlwaysAllow
	spec.UnhealthyPodEvictionPolicy = &always
	var d *Denial
	if flagOn(p.AllowBlocking) {
		spec.UnhealthyPodEvictionPolicy = pdb.Spec.UnhealthyPodEvictionPolicy
	} else if pods > 0 && desired >= pods {
		if desired >= expected {
			d = Deny(RuleDisruptionBudget, "PodDisruptionBudget %s/%s allows no disruption of its %d Pods (%d must stay healthy); synced allowing one (minAvailable %d) so super-cluster node drains are not blocked; a TenantPolicy's disruptionBudgets.allowBlocking allows it",
				pdb.Namespace, pdb.Name, pods, desired, pods-1)
		}
		desired = pods - 1
	}
	minAvailable := intstr.FromInt32(desired)
	spec.MinAvailable = &minAvailable
	return spec, d
}

// desiredHealthy returns the number of the budget's Pods that must stay healthy, as the
// tenant's disruption controller computed it (see SuperBudget), and the number of Pods the
// tenant expects (status.expectedPods when the status is current and not 0, else pods), given
// pods matching super Pods.
func desiredHealthy(pdb *policyv1.PodDisruptionBudget, pods int32) (desired, expected int32) {
	s := pdb.Spec
	current := pdb.Generation > 0 && pdb.Status.ObservedGeneration == pdb.Generation
	expected = pods
	if current && pdb.Status.ExpectedPods > 0 {
		expected = pdb.Status.ExpectedPods
	}
	if s.MaxUnavailable == nil && s.MinAvailable != nil && s.MinAvailable.Type == intstr.Int {
		return max(s.MinAvailable.IntVal, 0), expected
	}
	if current {
		return max(pdb.Status.DesiredHealthy, 0), expected
	}
	switch {
	case s.MaxUnavailable != nil:
		n, err := intstr.GetScaledValueFromIntOrPercent(s.MaxUnavailable, int(pods), true)
		if err != nil {
			return pods, expected
		}
		return max(pods-int32(n), 0), expected
	case s.MinAvailable != nil:
		n, err := intstr.GetScaledValueFromIntOrPercent(s.MinAvailable, int(pods), true)
		if err != nil {
			return pods, expected
		}
		return int32(n), expected
	}
	return pods, expected // neither set: the disruption controller allows nothing
}
