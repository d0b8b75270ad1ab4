package policy

import (
	"slices"
	"strings"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// SuperBudget returns the spec of the super copy of tenant PodDisruptionBudget pdb whose
// selector matches pods super Pods. The super copy protects the Pods exactly as the tenant's
// budget does: the super cluster never allows an eviction the tenant's budget would refuse.
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
// the tenant's status is current (a changed budget), desiredHealthy is computed as the
// disruption controller would, from the larger of pods and the last status.expectedPods
// (percentages rounded up), so an eviction that removes a super Pod never lowers it.
//
// It is never relaxed: a budget short of Pods (an evicted Pod not back yet, replicas that
// cannot be scheduled) or one that allows no disruption at all (maxUnavailable 0,
// minAvailable 100%) holds the super cluster's drains as it holds the tenant's. What keeps a
// budget from holding a drain for good is what a real cluster has: unhealthyPodEvictionPolicy
// is AlwaysAllow unless the tenant chose one (with the default IfHealthyBudget, a
// crash-looping Pod of a budget already short of healthy Pods cannot be evicted), and a second
// budget over the same Pods is refused (SecondBudget).
func SuperBudget(pdb *policyv1.PodDisruptionBudget, pods int32) policyv1.PodDisruptionBudgetSpec {
	spec := policyv1.PodDisruptionBudgetSpec{Selector: pdb.Spec.Selector.DeepCopy()}
	if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil {
		v := *p
		spec.UnhealthyPodEvictionPolicy = &v
	} else {
		always := policyv1.AlwaysAllow
		spec.UnhealthyPodEvictionPolicy = &always
	}
	minAvailable := intstr.FromInt32(desiredHealthy(pdb, pods))
	spec.MinAvailable = &minAvailable
	return spec
}

// desiredHealthy returns the number of the budget's Pods that must stay healthy, as the
// tenant's disruption controller computed it (see SuperBudget), given pods matching super Pods.
func desiredHealthy(pdb *policyv1.PodDisruptionBudget, pods int32) int32 {
	s := pdb.Spec
	if s.MaxUnavailable == nil && s.MinAvailable != nil && s.MinAvailable.Type == intstr.Int {
		return max(s.MinAvailable.IntVal, 0)
	}
	if pdb.Generation > 0 && pdb.Status.ObservedGeneration == pdb.Generation {
		return max(pdb.Status.DesiredHealthy, 0)
	}
	// The tenant's status is for an older version of the budget: the expected count it
	// computed then still stands for the Pods (a budget's change rarely changes its Pods),
	// and super Pods evicted since then are still expected.
	expected := max(pods, pdb.Status.ExpectedPods)
	switch {
	case s.MaxUnavailable != nil:
		n, err := intstr.GetScaledValueFromIntOrPercent(s.MaxUnavailable, int(expected), true)
		if err != nil {
			return expected
		}
		return max(expected-int32(n), 0)
	case s.MinAvailable != nil:
		n, err := intstr.GetScaledValueFromIntOrPercent(s.MinAvailable, int(expected), true)
		if err != nil {
			return expected
		}
		return int32(n)
	}
	return expected // neither set: the disruption controller allows nothing
}

// SecondBudget returns the refusal (rule disruptionBudget) of tenant PodDisruptionBudget pdb
// when a Pod among pods (the tenant Pods of its namespace) that pdb selects is selected by an
// older budget among others (the budgets of its namespace; pdb itself and budgets being
// deleted are skipped; older: created earlier, or at the same second with a smaller name),
// with that budget's name (the oldest such budget, and its Pod first by name, so the same
// budgets give the same refusal), or nil. The eviction API refuses to evict a Pod under two budgets (500 "This pod has more than
// one PodDisruptionBudget"), in the tenant and in the super cluster alike: a second budget
// would hold every drain of its Pods' nodes for good, so it gets no super copy.
func SecondBudget(pdb *policyv1.PodDisruptionBudget, others []*policyv1.PodDisruptionBudget, pods []metav1.Object) (string, *Denial) {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return "", nil
	}
	var mine []metav1.Object
	for _, p := range pods {
		if sel.Matches(labels.Set(p.GetLabels())) {
			mine = append(mine, p)
		}
	}
	slices.SortFunc(mine, func(a, b metav1.Object) int { return strings.Compare(a.GetName(), b.GetName()) })
	others = slices.Clone(others)
	slices.SortFunc(others, func(a, b *policyv1.PodDisruptionBudget) int {
		if older(a, b) {
			return -1
		}
		if older(b, a) {
			return 1
		}
		return 0
	})
	for _, o := range others {
		if o.UID == pdb.UID || o.Name == pdb.Name || o.DeletionTimestamp != nil || !older(o, pdb) {
			continue
		}
		osel, err := metav1.LabelSelectorAsSelector(o.Spec.Selector)
		if err != nil {
			continue
		}
		for _, p := range mine {
			if osel.Matches(labels.Set(p.GetLabels())) {
				return o.Name, Deny(RuleDisruptionBudget, "PodDisruptionBudget %s/%s selects Pod %s, which PodDisruptionBudget %s (older) selects too; "+
					"the eviction API refuses to evict a Pod under more than one budget, so this budget is not synced to the super cluster; "+
					"delete one of the two or make their selectors disjoint",
					pdb.Namespace, pdb.Name, p.GetName(), o.Name)
			}
		}
	}
	return "", nil
}

// older reports whether budget a was created before budget b (by name at the same second).
func older(a, b *policyv1.PodDisruptionBudget) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}
