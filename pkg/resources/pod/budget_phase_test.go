package pod

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/admission"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
)

// TestPodMarkedFinishedByItsTenantIsChargedItsSpec: a tenant writes its own Pods' status, so a
// fresh Pod whose status.phase it sets to Succeeded (pods/status in its own apiserver) must not
// be charged nothing: while the budget (pods=1) is full, the Pod gets no super copy.
func TestPodMarkedFinishedByItsTenantIsChargedItsSpec(t *testing.T) {
	ctx := context.Background()
	f := newPodBounds(t)
	f.c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{
		// services: a backstop quota in each super namespace, as the built-in default has.
		Quota: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1"), corev1.ResourceRequestsCPU: resource.MustParse("4"),
			corev1.ResourceServices: resource.MustParse("10")}}}))
	b := admission.NewBudget(admission.BudgetOptions[string]{Wake: func(string) {}})
	f.env.Budget = restest.Budget(b)
	_ = reconcileDownward(ctx, f.env, f.c, "app", "web") // the namespace and its quota
	f.syncCaches(t)
	// The budget is full: another Pod of the tenant takes pods=1.
	b.Observe("t1", "Pod/t1-other/db", corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")})

	live, err := f.tenant.CoreV1().Pods("app").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Status.Phase = corev1.PodSucceeded
	if live, err = f.tenant.CoreV1().Pods("app").UpdateStatus(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Informers.Core().V1().Pods().Informer().GetIndexer().Update(live); err != nil {
		t.Fatal(err)
	}
	if err := reconcileDownward(ctx, f.env, f.c, "app", "web"); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if sp, err := f.super.CoreV1().Pods(f.superNS).Get(ctx, "web", metav1.GetOptions{}); err == nil {
		t.Fatalf("super Pod created over a full budget for a Pod its tenant marked Succeeded (charge %q)", sp.Annotations[policy.AnnotationCharge])
	}
}
