package pod

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/vcsyncer/syncer/pkg/admission"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
)

// A Pod over its tenant's budget (pods=1, taken by a Pod of another namespace) waits: from the
// syncer's counts alone, nothing is asked of the super apiserver or of the tenant (no full
// read, no TokenRequest) however often it is run; it gets PodScheduled=False QuotaExceeded once
// and one denial count; it is woken (not retried) when the other Pod goes, and its super Pod
// then carries the charge it was admitted with.
func TestPodOverTenantBudgetWaitsWithoutCost(t *testing.T) {
	ctx := context.Background()
	f := newPodBounds(t)
	f.c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{
		// services: a backstop quota in each super namespace, as the built-in default has.
		Quota: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1"), corev1.ResourceRequestsCPU: resource.MustParse("4"),
			corev1.ResourceServices: resource.MustParse("10")}}}))
	var woken []string
	b := admission.NewBudget(admission.BudgetOptions[string]{Wake: func(k string) { woken = append(woken, k) }})
	f.env.Budget = restest.Budget(b)
	_ = reconcileDownward(ctx, f.env, f.c, "app", "web") // the namespace and its quota
	f.syncCaches(t)
	// A Pod of the tenant in another super namespace takes the budget.
	b.Observe("t1", "Pod/t1-other/db", corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")})
	f.tenant.ClearActions()
	f.super.ClearActions()
	denials := restest.DenialsRise("t1", resources.KindPod, policy.RuleTenantQuota)
	var actions []k8stesting.Action
	for range 3 {
		if err := reconcileDownward(ctx, f.env, f.c, "app", "web"); err != nil {
			t.Fatalf("reconcile = %v, want nil (the Pod is parked, not retried)", err)
		}
		actions = append(actions, f.tenant.Actions()...)
		// The status write brings the Pod back at its new version (the informer would).
		live, _ := f.tenant.CoreV1().Pods("app").Get(ctx, "web", metav1.GetOptions{})
		_ = f.c.Informers.Core().V1().Pods().Informer().GetIndexer().Update(live)
		f.tenant.ClearActions()
	}
	if n := len(f.super.Actions()); n != 0 {
		t.Errorf("super calls for a Pod over its tenant's budget: %v", f.super.Actions())
	}
	var patches int
	for _, a := range actions {
		switch {
		case a.GetVerb() == "get" && a.GetResource().Resource == "pods":
			t.Error("the full Pod was read although the budget has no room")
		case a.GetVerb() == "create":
			t.Errorf("tenant create while waiting: %s/%s", a.GetResource().Resource, a.GetSubresource())
		case a.GetVerb() == "patch" && a.GetSubresource() == "status":
			patches++
		}
	}
	if patches != 1 {
		t.Errorf("status patches = %d, want 1 (PodScheduled=False once)", patches)
	}
	if d := denials(); d != 1 {
		t.Errorf("denials rose by %v, want 1", d)
	}
	live, _ := f.tenant.CoreV1().Pods("app").Get(ctx, "web", metav1.GetOptions{})
	cond := scheduledCondition(live)
	if cond == nil || cond.Reason != policy.ReasonQuotaExceeded || !strings.Contains(cond.Message, "requested pods=1, used 1, limited 1") {
		t.Fatalf("condition %+v, want QuotaExceeded naming the budget, its use and the request", cond)
	}
	if len(woken) != 0 {
		t.Fatalf("woken %v before room appeared", woken)
	}
	b.Observe("t1", "Pod/t1-other/db", nil)
	if len(woken) != 1 || woken[0] != "app/web" {
		t.Fatalf("woken %v, want [app/web]", woken)
	}
	if err := reconcileDownward(ctx, f.env, f.c, "app", "web"); err != nil {
		t.Fatalf("reconcile after room appeared: %v", err)
	}
	sp, err := f.super.CoreV1().Pods(f.superNS).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("super Pod not created once room appeared: %v", err)
	}
	want := "count/pods=1,limits.cpu=100m,limits.memory=128Mi,pods=1,requests.cpu=100m,requests.memory=128Mi"
	if got := sp.Annotations[policy.AnnotationCharge]; got != want {
		t.Errorf("charge annotation %q, want %q", got, want)
	}
	if len(sp.Spec.Containers[0].Resources.Requests) != 0 || len(sp.Spec.Containers[0].Resources.Limits) != 0 {
		t.Errorf("the charge was written into the Pod: %+v", sp.Spec.Containers[0].Resources)
	}
	if got := b.Used("t1")[corev1.ResourcePods]; got.String() != "1" {
		t.Errorf("used pods %s after the create, want 1 (reserved until observed)", got.String())
	}
}
