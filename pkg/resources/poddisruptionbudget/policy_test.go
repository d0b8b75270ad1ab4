package poddisruptionbudget_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/poddisruptionbudget"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
)

func intOrStr(s string) *intstr.IntOrString {
	v := intstr.Parse(s)
	return &v
}

// The super copy of a tenant PodDisruptionBudget lets the super cluster's disruption controller
// compute the tenant's budget: super Pods have no owner references, so a maxUnavailable or
// percentage budget would count 0 expected Pods there and allow no eviction at all (every
// super node drain blocked). It is synced as an integer minAvailable (the tenant's
// desiredHealthy), with unhealthyPodEvictionPolicy AlwaysAllow; a budget that allows no
// disruption is synced allowing one unless the policy allows blocking.
func TestDownwardTranslatesBudgetsSoSuperDrainsAreNotBlocked(t *testing.T) {
	always, ifHealthy := policyv1.AlwaysAllow, policyv1.IfHealthyBudget
	allowBlocking := &tenancyv1alpha1.TenantPolicySpec{DisruptionBudgets: &tenancyv1alpha1.DisruptionBudgetPolicy{AllowBlocking: ptr(true)}}
	for name, tc := range map[string]struct {
		pol          *tenancyv1alpha1.TenantPolicySpec
		minAvail     string // "" = none
		maxUnavail   string
		eviction     *policyv1.UnhealthyPodEvictionPolicyType
		desired      int32 // tenant status.desiredHealthy
		expected     int32 // tenant status.expectedPods
		stale        bool  // the tenant's status is for an older generation
		wantMin      int32
		wantEviction policyv1.UnhealthyPodEvictionPolicyType
		wantReported bool
	}{
		"maxUnavailable 1":              {maxUnavail: "1", desired: 2, expected: 3, wantMin: 2, wantEviction: always},
		"maxUnavailable 34%":            {maxUnavail: "34%", desired: 1, expected: 3, wantMin: 1, wantEviction: always},
		"minAvailable 50%":              {minAvail: "50%", desired: 2, expected: 3, wantMin: 2, wantEviction: always},
		"minAvailable 2":                {minAvail: "2", desired: 2, expected: 3, wantMin: 2, wantEviction: always},
		"IfHealthyBudget is not copied": {maxUnavail: "1", eviction: &ifHealthy, desired: 2, expected: 3, wantMin: 2, wantEviction: always},
		"maxUnavailable 0":              {maxUnavail: "0", desired: 3, expected: 3, wantMin: 2, wantEviction: always, wantReported: true},
		"minAvailable 100%":             {minAvail: "100%", desired: 3, expected: 3, wantMin: 2, wantEviction: always, wantReported: true},
		"minAvailable 3 of 3":           {minAvail: "3", desired: 3, expected: 3, wantMin: 2, wantEviction: always, wantReported: true},
		"a status claiming more Pods":   {maxUnavail: "1", desired: 99, expected: 100, wantMin: 2, wantEviction: always},
		"status not computed yet":       {maxUnavail: "1", stale: true, wantMin: 2, wantEviction: always},
		"status not computed, 0":        {maxUnavail: "0", stale: true, wantMin: 2, wantEviction: always, wantReported: true},
		"blocking allowed": {pol: allowBlocking, maxUnavail: "0", eviction: &ifHealthy, desired: 3, expected: 3,
			wantMin: 3, wantEviction: ifHealthy},
	} {
		t.Run(name, func(t *testing.T) {
			h := restest.New(t, "pdb-"+strings.NewReplacer(" ", "-", "%", "pct").Replace(strings.ToLower(name)), "shop")
			if tc.pol != nil {
				h.SetPolicy(tc.pol)
			}
			superNS := resources.SuperNamespace(h.C, "shop")
			pods := h.Env.SuperInformers.Core().V1().Pods().Informer()
			for i := range 3 {
				h.Super(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("db-%d", i), Namespace: superNS, UID: types.UID(fmt.Sprint("p", i)),
					Labels: map[string]string{"app": "db", conversion.LabelManagedBy: conversion.ManagedByValue, conversion.LabelTenantUID: h.C.UID}}})
			}
			h.Super(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: superNS, UID: "w0",
				Labels: map[string]string{"app": "web", conversion.LabelManagedBy: conversion.ManagedByValue, conversion.LabelTenantUID: h.C.UID}}})
			pdb := &policyv1.PodDisruptionBudget{
				ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop", UID: "pdb-uid", ResourceVersion: "5", Generation: 2},
				Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
					UnhealthyPodEvictionPolicy: tc.eviction},
				Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 2, DesiredHealthy: tc.desired, ExpectedPods: tc.expected,
					CurrentHealthy: tc.expected, DisruptionsAllowed: max(tc.expected-tc.desired, 0)},
			}
			if tc.minAvail != "" {
				pdb.Spec.MinAvailable = intOrStr(tc.minAvail)
			}
			if tc.maxUnavail != "" {
				pdb.Spec.MaxUnavailable = intOrStr(tc.maxUnavail)
			}
			if tc.stale {
				pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DesiredHealthy: 1000}
			}
			h.Tenant(h.C.Informers.Policy().V1().PodDisruptionBudgets().Informer(), pdb)
			r := poddisruptionbudget.Resource
			r.SuperInformer(h.Env)
			if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "db"); err != nil {
				t.Fatalf("Downward = %v", err)
			}
			got, err := h.SuperCS.PolicyV1().PodDisruptionBudgets(superNS).Get(h.Ctx(), "db", metav1.GetOptions{})
			if err != nil {
				t.Fatalf("not synced: %v", err)
			}
			if got.Spec.MaxUnavailable != nil || got.Spec.MinAvailable == nil || *got.Spec.MinAvailable != intstr.FromInt32(tc.wantMin) {
				t.Errorf("super spec minAvailable %v maxUnavailable %v, want minAvailable %d", got.Spec.MinAvailable, got.Spec.MaxUnavailable, tc.wantMin)
			}
			if got.Spec.UnhealthyPodEvictionPolicy == nil || *got.Spec.UnhealthyPodEvictionPolicy != tc.wantEviction {
				t.Errorf("unhealthyPodEvictionPolicy %v, want %s", got.Spec.UnhealthyPodEvictionPolicy, tc.wantEviction)
			}
			ev := h.Events()
			if tc.wantReported != (len(ev) == 1 && strings.Contains(ev[0], "Warning PolicyDenied disruptionBudget: ")) || len(ev) > 1 {
				t.Errorf("events %q (reported wanted: %v)", ev, tc.wantReported)
			}
			// The super copy is current: reconciling again changes nothing.
			h.Super(r.SuperInformer(h.Env), got)
			if m := r.Check(h.Env, h.C, pdb, got); m != resources.InSync {
				t.Errorf("Check after the sync = %v", m)
			}
		})
	}
}

// A change of the tenant's budget status (the tenant's disruption controller recounting after
// a scale) and a tenant Pod appearing or going re-sync the budget.
func TestBudgetsFollowTheirPods(t *testing.T) {
	h := restest.New(t, "pdb-deps", "shop")
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop", UID: "pdb-uid"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: intOrStr("1"), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}
	h.Tenant(h.C.Informers.Policy().V1().PodDisruptionBudgets().Informer(), pdb)
	r := poddisruptionbudget.Resource
	if !containsKind(r.DependsOn(), resources.KindPod) {
		t.Fatalf("DependsOn = %v, want Pod among them", r.DependsOn())
	}
	db := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: "shop", Labels: map[string]string{"app": "db"}}}
	web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", Labels: map[string]string{"app": "web"}}}
	want := resources.Request{Tenant: h.C.Name, Kind: resources.KindPodDisruptionBudget, Namespace: "shop", Name: "db"}
	if got := r.Dependents(h.C, db); len(got) != 1 || got[0] != want {
		t.Errorf("Dependents(db-0) = %v, want [%v]", got, want)
	}
	if got := r.Dependents(h.C, web); len(got) != 0 {
		t.Errorf("Dependents(web-0) = %v, want none", got)
	}
}

func containsKind(ks []resources.Kind, k resources.Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }
