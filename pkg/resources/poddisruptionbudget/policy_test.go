package poddisruptionbudget_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

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
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func intOrStr(s string) *intstr.IntOrString {
	v := intstr.Parse(s)
	return &v
}

// The super copy of a tenant PodDisruptionBudget lets the super cluster's disruption controller
// compute the tenant's budget: super Pods have no owner references, so a maxUnavailable or
// percentage budget would count 0 expected Pods there and allow no eviction at all (every
// super node drain blocked). It is synced as an integer minAvailable (the tenant's
// desiredHealthy), never relaxed (a budget allowing no disruption holds super drains as it
// holds the tenant's), with the tenant's unhealthyPodEvictionPolicy or AlwaysAllow when it set
// none. Nothing is reported: nothing was changed.
func TestDownwardTranslatesBudgetsAsTheTenantComputesThem(t *testing.T) {
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
	}{
		"maxUnavailable 1":                {maxUnavail: "1", desired: 2, expected: 3, wantMin: 2, wantEviction: always},
		"maxUnavailable 34%":              {maxUnavail: "34%", desired: 1, expected: 3, wantMin: 1, wantEviction: always},
		"minAvailable 50%":                {minAvail: "50%", desired: 2, expected: 3, wantMin: 2, wantEviction: always},
		"minAvailable 2":                  {minAvail: "2", desired: 2, expected: 3, wantMin: 2, wantEviction: always},
		"the tenant's IfHealthyBudget":    {maxUnavail: "1", eviction: &ifHealthy, desired: 2, expected: 3, wantMin: 2, wantEviction: ifHealthy},
		"maxUnavailable 0":                {maxUnavail: "0", desired: 3, expected: 3, wantMin: 3, wantEviction: always},
		"minAvailable 100%":               {minAvail: "100%", desired: 3, expected: 3, wantMin: 3, wantEviction: always},
		"minAvailable 3 of 3":             {minAvail: "3", desired: 3, expected: 3, wantMin: 3, wantEviction: always},
		"a status short of Pods":          {maxUnavail: "1", desired: 3, expected: 4, wantMin: 3, wantEviction: always},
		"status not computed yet":         {maxUnavail: "1", stale: true, wantMin: 2, wantEviction: always},
		"status not computed, 0":          {maxUnavail: "0", stale: true, wantMin: 3, wantEviction: always},
		"allowBlocking is ignored":        {pol: allowBlocking, maxUnavail: "0", desired: 3, expected: 3, wantMin: 3, wantEviction: always},
		"allowBlocking, the tenant's own": {pol: allowBlocking, maxUnavail: "1", eviction: &ifHealthy, desired: 2, expected: 3, wantMin: 2, wantEviction: ifHealthy},
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
			if ev := h.Events(); len(ev) != 0 {
				t.Errorf("events %q, want none", ev)
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
	if !containsKind(r.DependsOn(), resources.KindPod) || !containsKind(r.DependsOn(), resources.KindPodDisruptionBudget) {
		t.Fatalf("DependsOn = %v, want Pod and PodDisruptionBudget among them", r.DependsOn())
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
	// Another budget of the namespace changing (created, deleted) re-syncs this one, which it
	// may have refused as a second budget; a budget is no dependent of itself.
	other := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db2", Namespace: "shop"}}
	if got := r.Dependents(h.C, other); len(got) != 1 || got[0] != want {
		t.Errorf("Dependents(budget db2) = %v, want [%v]", got, want)
	}
	if got := r.Dependents(h.C, pdb); len(got) != 0 {
		t.Errorf("Dependents(budget db) = %v, want none", got)
	}
}

// A second budget over Pods an older budget selects gets no super copy (one synced before is
// deleted), is reported once per generation, and is in sync for remediation; once the older
// budget is gone it is synced.
func TestSecondBudgetIsRefused(t *testing.T) {
	h := restest.New(t, "pdb-second", "shop")
	superNS := resources.SuperNamespace(h.C, "shop")
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	first := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop", UID: "u1", ResourceVersion: "1", Generation: 1, CreationTimestamp: t0},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: intOrStr("1"), Selector: sel}}
	second := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db-strict", Namespace: "shop", UID: "u2", ResourceVersion: "2", Generation: 1,
		CreationTimestamp: metav1.NewTime(t0.Add(time.Minute))}, Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: intOrStr("0"), Selector: sel}}
	pdbs := h.C.Informers.Policy().V1().PodDisruptionBudgets().Informer()
	h.Tenant(pdbs, first)
	h.Tenant(h.C.Informers.Core().V1().Pods().Informer(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: "shop", Labels: map[string]string{"app": "db"}}})
	r := poddisruptionbudget.Resource
	superInf := r.SuperInformer(h.Env)
	// The second budget was synced before the first existed (or before this version).
	stale := &policyv1.PodDisruptionBudget{ObjectMeta: resources.DesiredMeta(h.C, second, superNS, nil), Spec: second.Spec}
	h.Super(superInf, stale)
	h.Tenant(pdbs, second)
	for i := range 2 {
		if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "db-strict"); err != nil {
			t.Fatalf("Downward #%d = %v", i, err)
		}
	}
	if _, err := h.SuperCS.PolicyV1().PodDisruptionBudgets(superNS).Get(h.Ctx(), "db-strict", metav1.GetOptions{}); err == nil {
		t.Error("the second budget's super copy was kept")
	}
	ev := h.Events()
	if len(ev) != 1 || !strings.Contains(ev[0], "Warning PolicyDenied disruptionBudget: ") || !strings.Contains(ev[0], "PodDisruptionBudget db (older)") {
		t.Errorf("events %q, want one refusal naming db", ev)
	}
	if m := r.Check(h.Env, h.C, second, nil); m != resources.InSync {
		t.Errorf("Check of the refused budget without a super copy = %v", m)
	}
	// The older budget itself is synced.
	if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "db"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SuperCS.PolicyV1().PodDisruptionBudgets(superNS).Get(h.Ctx(), "db", metav1.GetOptions{}); err != nil {
		t.Errorf("the first budget was not synced: %v", err)
	}
	// The older budget goes: the second one is synced.
	if err := pdbs.GetStore().Delete(first); err != nil {
		t.Fatal(err)
	}
	if err := superInf.GetStore().Delete(stale); err != nil { // as the super informer saw the delete
		t.Fatal(err)
	}
	if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "db-strict"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SuperCS.PolicyV1().PodDisruptionBudgets(superNS).Get(h.Ctx(), "db-strict", metav1.GetOptions{}); err != nil {
		t.Errorf("the second budget alone was not synced: %v", err)
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

// A budget is not synced while a budget or a Pod of its namespace is held out of the syncer's
// memory (a stub: no selector, no labels): SecondBudget cannot see what the stub selects or
// carries, and the stub's super copy is left as it was, so a second budget over the same
// super Pods would get a super copy and the eviction API would answer 500 for them. It is
// refused (naming the held-out object) and synced once that object is readmitted.
func TestBudgetBesideAHeldOutObjectWaits(t *testing.T) {
	h := restest.New(t, "pdb-stub", "shop")
	superNS := resources.SuperNamespace(h.C, "shop")
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	// The older budget db, cached as a stub after it grew past the tenant's memory bound.
	stub := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop", UID: "u1", ResourceVersion: "2", CreationTimestamp: t0,
		Annotations: map[string]string{tenant.AnnotationHeldOut: "cachedBytes 9000"}}}
	if !tenant.IsHeldOut(stub) {
		t.Fatal("setup: the stub is not recognised as one")
	}
	second := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db-strict", Namespace: "shop", UID: "u2", ResourceVersion: "3", Generation: 1,
		CreationTimestamp: metav1.NewTime(t0.Add(time.Minute))}, Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: intOrStr("0"), Selector: sel}}
	pdbs := h.C.Informers.Policy().V1().PodDisruptionBudgets().Informer()
	h.Tenant(pdbs, stub)
	h.Tenant(h.C.Informers.Core().V1().Pods().Informer(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: "shop", Labels: map[string]string{"app": "db"}}})
	h.Tenant(pdbs, second)
	r := poddisruptionbudget.Resource
	if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "db-strict"); err != nil {
		t.Fatalf("Downward = %v", err)
	}
	if _, err := h.SuperCS.PolicyV1().PodDisruptionBudgets(superNS).Get(h.Ctx(), "db-strict", metav1.GetOptions{}); err == nil {
		t.Fatal("ATTACK ESCAPED: budget db-strict got a super copy while the older budget db is held out (its super copy still selects app=db)")
	}
	if ev := h.Events(); len(ev) != 1 || !strings.Contains(ev[0], "PolicyDenied") || !strings.Contains(ev[0], "db") {
		t.Errorf("events %q, want one refusal naming db", ev)
	}
	// db is readmitted (in full, a selector disjoint from db-strict's): db-strict is synced.
	full := stub.DeepCopy()
	full.Annotations, full.ResourceVersion = nil, "4"
	full.Spec = policyv1.PodDisruptionBudgetSpec{MinAvailable: intOrStr("1"), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}}
	if err := pdbs.GetStore().Update(full); err != nil {
		t.Fatal(err)
	}
	if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "db-strict"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SuperCS.PolicyV1().PodDisruptionBudgets(superNS).Get(h.Ctx(), "db-strict", metav1.GetOptions{}); err != nil {
		t.Errorf("db-strict not synced once db is readmitted: %v", err)
	}
}
