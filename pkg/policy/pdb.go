package policy

import (
	"slices"
	"strings"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
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
// budget over the same Pods is refused (SecondBudget), and, where the provider set one, the
// TenantPolicy's bound on how long a budget may hold a drain (hold, see DrainHold; a zero
// hold is off).
func SuperBudget(pdb *policyv1.PodDisruptionBudget, pods int32, hold DrainHold) (policyv1.PodDisruptionBudgetSpec, Held) {
	spec := policyv1.PodDisruptionBudgetSpec{Selector: pdb.Spec.Selector.DeepCopy()}
	if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil {
		v := *p
		spec.UnhealthyPodEvictionPolicy = &v
	} else {
		always := policyv1.AlwaysAllow
		spec.UnhealthyPodEvictionPolicy = &always
	}
	desired := desiredHealthy(pdb, pods)
	h := hold.held(desired)
	if !h.Relaxed {
		h.MinAvailable = desired
	}
	minAvailable := intstr.FromInt32(h.MinAvailable)
	spec.MinAvailable = &minAvailable
	return spec, h
}

// DrainHold is what SuperBudget needs to bound how long a budget may hold a super-cluster
// drain (TenantPolicy disruptionBudgets.maxBlockingSeconds). It is derived from the super
// copy's status only (no timer in the syncer), so a restart does not reset it.
type DrainHold struct {
	// Bound is disruptionBudgets.maxBlockingSeconds; 0 (or less) is off.
	Bound time.Duration
	// Now is the current time.
	Now time.Time
	// Super is the current super copy of the budget (its spec and status), or nil.
	Super *policyv1.PodDisruptionBudget
	// Draining reports whether one of the budget's super Pods is on a cordoned
	// (spec.unschedulable) super Node: a drain is waiting.
	Draining bool
}

// minDrainPoll is the shortest interval at which a budget held past nothing yet is looked at
// again to notice a cordon (a cordon does not reconcile the budget by itself).
const minDrainPoll = 10 * time.Second

// Held is what the bound of a DrainHold decided.
type Held struct {
	// Relaxed reports that the super copy allows one disruption past the bound.
	Relaxed bool
	// Report reports that the copy is relaxed now from a protecting one: the tenant budget
	// gets its Warning Event (keyed by Since, once per episode).
	Report bool
	// Since is when the budget began to allow no disruption (the super copy's
	// DisruptionAllowed condition's lastTransitionTime), when Relaxed.
	Since time.Time
	// MinAvailable is the super copy's minAvailable.
	MinAvailable int32
	// Wait is when the budget must be reconciled again for the bound (0: not needed): the time
	// left before a held drain is let through, or the interval at which a relaxed copy or a
	// blocking budget is looked at again (a drain's end or start is noticed so).
	Wait time.Duration
}

// held applies the bound to a budget whose desired healthy Pods are desired. A super copy
// that has allowed no disruption (condition DisruptionAllowed False) for longer than the bound
// while a drain waits is relaxed to its current healthy Pods less one (never below 0); once
// relaxed, it keeps that while its one disruption is unused (condition True) and the drain
// waits. The eviction that uses it sets the condition False again (a new lastTransitionTime),
// so the next disruption waits the bound again.
func (d DrainHold) held(desired int32) Held {
	if d.Bound <= 0 || d.Super == nil {
		return Held{}
	}
	poll := max(d.Bound, minDrainPoll)
	cond := apimeta.FindStatusCondition(d.Super.Status.Conditions, policyv1.DisruptionAllowedCondition)
	if cond == nil {
		return Held{Wait: poll} // no status yet
	}
	cur := desired
	if m := d.Super.Spec.MinAvailable; m != nil && m.Type == intstr.Int {
		cur = m.IntVal
	}
	if cond.Status == metav1.ConditionTrue && d.Super.Status.DisruptionsAllowed > 0 {
		if cur < desired && d.Draining {
			return Held{Relaxed: true, MinAvailable: max(cur, 0), Since: cond.LastTransitionTime.Time, Wait: poll}
		}
		return Held{} // protects, or a relaxed copy whose drain is over goes back to protecting
	}
	if cond.Status != metav1.ConditionFalse {
		return Held{Wait: poll} // status being updated
	}
	if !d.Draining {
		return Held{Wait: poll}
	}
	since := cond.LastTransitionTime.Time
	if left := since.Add(d.Bound).Sub(d.Now); left > 0 {
		return Held{Wait: left + time.Second/2}
	}
	to := min(max(d.Super.Status.CurrentHealthy-1, 0), desired)
	if to >= desired {
		return Held{Wait: poll} // its status does not show a healthy Pod to let go
	}
	return Held{Relaxed: true, Report: cur >= desired, Since: since, MinAvailable: to, Wait: poll}
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

// SelectorNotCopied returns the refusal (rule disruptionBudget) of tenant PodDisruptionBudget
// pdb when its selector names a label key that copied reports false for (a key the syncer does
// not copy from tenant Pods to their super copies as it is: its own domain, which it writes
// itself, and keys outside the metadata allowlist, which it drops), or nil. Such a requirement
// selects one set among the tenant's Pods and another among their super copies: a budget that
// selects no tenant Pod (so not a second budget there, see SecondBudget) could select every
// super Pod of its namespace, and the eviction API refuses to evict a Pod under two budgets,
// so it would hold every drain of them for good.
func SelectorNotCopied(pdb *policyv1.PodDisruptionBudget, copied func(key string) bool) *Denial {
	sel := pdb.Spec.Selector
	if sel == nil {
		return nil
	}
	keys := make([]string, 0, len(sel.MatchLabels)+len(sel.MatchExpressions))
	for k := range sel.MatchLabels {
		keys = append(keys, k)
	}
	for _, r := range sel.MatchExpressions {
		keys = append(keys, r.Key)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !copied(k) {
			return Deny(RuleDisruptionBudget, "PodDisruptionBudget %s/%s selects on label key %s, which the syncer does not copy to super-cluster Pods as it is "+
				"(its own keys, and keys outside the TenantPolicy's metadata.allowedLabelPrefixes): its super copy would select other Pods than it does here "+
				"and could hold the super cluster's drains, so it is not synced; select on labels the Pods carry in both clusters", pdb.Namespace, pdb.Name, k)
		}
	}
	return nil
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
