package policy

import (
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

func TestSuperBudget(t *testing.T) {
	val := func(s string) *intstr.IntOrString { v := intstr.Parse(s); return &v }
	current := func(desired, expected int32) policyv1.PodDisruptionBudgetStatus {
		return policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DesiredHealthy: desired, ExpectedPods: expected}
	}
	for name, tc := range map[string]struct {
		spec     policyv1.PodDisruptionBudgetSpec
		status   policyv1.PodDisruptionBudgetStatus
		pods     int32
		blocking bool
		wantMin  int32
		reported bool
	}{
		// The tenant's desiredHealthy, computed with the tenant's controllers (5 replicas).
		"maxUnavailable 1 of 5":            {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("1")}, status: current(4, 5), pods: 5, wantMin: 4},
		"one Pod short: relaxed, silently": {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("1")}, status: current(4, 5), pods: 4, wantMin: 3},
		"status claiming 1000 Pods":        {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("1")}, status: current(999, 1000), pods: 3, wantMin: 2},
		"maxUnavailable 0, status current": {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("0")}, status: current(5, 5), pods: 5, wantMin: 4, reported: true},
		"maxUnavailable 25%, stale status": {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("25%")}, pods: 5, wantMin: 3},
		"minAvailable 50%, stale status":   {spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: val("50%")}, pods: 5, wantMin: 3},
		"minAvailable int ignores status":  {spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: val("2")}, status: current(9, 5), pods: 5, wantMin: 2},
		"minAvailable above the Pods":      {spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: val("7")}, pods: 5, wantMin: 4, reported: true},
		"neither field":                    {spec: policyv1.PodDisruptionBudgetSpec{}, pods: 2, wantMin: 1, reported: true},
		"no Pods: nothing to report":       {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("0")}, pods: 0, wantMin: 0},
		"no Pods yet, minAvailable 2":      {spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: val("2")}, pods: 0, wantMin: 2},
		"negative status":                  {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("1")}, status: current(-3, 2), pods: 2, wantMin: 0},
		"blocking allowed":                 {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("0")}, status: current(5, 5), pods: 5, blocking: true, wantMin: 5},
	} {
		t.Run(name, func(t *testing.T) {
			pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", Generation: 1}, Spec: tc.spec, Status: tc.status}
			pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
			got, d := SuperBudget(&tenancyv1alpha1.DisruptionBudgetPolicy{AllowBlocking: ptr(tc.blocking)}, pdb, tc.pods)
			if got.MaxUnavailable != nil || got.MinAvailable == nil || got.MinAvailable.Type != intstr.Int || got.MinAvailable.IntVal != tc.wantMin {
				t.Errorf("minAvailable %v maxUnavailable %v, want minAvailable %d", got.MinAvailable, got.MaxUnavailable, tc.wantMin)
			}
			if (d != nil) != tc.reported || (d != nil && d.Rule != RuleDisruptionBudget) {
				t.Errorf("denial %v, reported wanted %v", d, tc.reported)
			}
			if got.Selector == pdb.Spec.Selector || got.Selector.MatchLabels["app"] != "db" {
				t.Error("selector not copied (or shared)")
			}
			if !tc.blocking && (got.UnhealthyPodEvictionPolicy == nil || *got.UnhealthyPodEvictionPolicy != policyv1.AlwaysAllow) {
				t.Errorf("unhealthyPodEvictionPolicy %v", got.UnhealthyPodEvictionPolicy)
			}
		})
	}
}
