package pod

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// A Pod the tenant cache holds as a stub (over limits.maxObjectBytes) gets no super Pod, the
// usual refusal (PodScheduled=False reason PolicyDenied, patched into the tenant Pod; a
// PolicyDenied Event and one count, rule objectSize), and is not refused again at that
// version; the upward path writes nothing into it.
func TestHeldOutPodIsRefused(t *testing.T) {
	h := restest.New(t, "pod-held", "app")
	q := resource.MustParse("1Ki")
	h.SetPolicy(&tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{MaxObjectBytes: &q}})
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "big", UID: "uid-big", ResourceVersion: "4",
		Annotations: map[string]string{"note": strings.Repeat("x", 2000)}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	if err := h.TenantCS.Tracker().Add(p.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	stub := h.C.Readmit(p.DeepCopy())
	if !tenant.IsHeldOut(stub) {
		t.Fatal("a Pod with 2 KB of annotations passed a 1Ki cap")
	}
	if err := h.C.Informers.Core().V1().Pods().Informer().GetIndexer().Add(stub); err != nil {
		t.Fatal(err)
	}
	denied := h.Denials(resources.KindPod, policy.RuleObjectSize)
	for range 2 {
		if err := Resource.Downward(h.Ctx(), h.Env, h.C, "app", "big"); err != nil {
			t.Fatalf("Downward of a stub = %v, want nil (no retry)", err)
		}
		if err := Resource.Upward(h.Ctx(), h.Env, h.C, "app", "big"); err != nil {
			t.Fatalf("Upward of a stub = %v", err)
		}
	}
	if got := h.Denials(resources.KindPod, policy.RuleObjectSize) - denied; got != 1 {
		t.Errorf("%v objectSize denials, want 1", got)
	}
	if _, err := h.SuperCS.CoreV1().Pods(resources.SuperNamespace(h.C, "app")).Get(h.Ctx(), "big", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a super Pod was created for a stub (%v)", err)
	}
	live, err := h.TenantCS.CoreV1().Pods("app").Get(h.Ctx(), "big", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var cond *corev1.PodCondition
	for i := range live.Status.Conditions {
		if live.Status.Conditions[i].Type == corev1.PodScheduled {
			cond = &live.Status.Conditions[i]
		}
	}
	if cond == nil || cond.Status != corev1.ConditionFalse || cond.Reason != policy.ReasonPolicyDenied || !strings.Contains(cond.Message, "objectSize") {
		t.Errorf("tenant Pod condition %+v, want PodScheduled=False reason PolicyDenied (objectSize)", cond)
	}
	if live.Status.Phase != corev1.PodPending || len(live.Spec.Containers) != 1 || len(live.Annotations["note"]) != 2000 {
		t.Errorf("the tenant Pod lost its status, spec or annotations: %+v", live)
	}
}
