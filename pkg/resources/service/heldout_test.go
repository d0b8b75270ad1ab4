package service

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// A Service the tenant caches hold as a stub (over limits.maxObjectBytes) is refused once per
// version (rule objectSize): no super copy is created for a new one, and the super copy of one
// synced before it grew is left as it was (not updated, not deleted); the upward path writes
// nothing into it.
func TestHeldOutServiceIsRefusedAndItsSuperCopyKept(t *testing.T) {
	h := restest.New(t, "svc-held", "app")
	q := resource.MustParse("1Ki")
	h.SetPolicy(&tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{MaxObjectBytes: &q}})
	mk := func(name string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "5",
			Annotations: map[string]string{"note": strings.Repeat("x", 2000)}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Port: 80}}}}
	}
	tenantInf := h.C.Informers.Core().V1().Services().Informer()
	superInf := h.Env.SuperInformers.Core().V1().Services().Informer()
	superNS := resources.SuperNamespace(h.C, "app")
	for _, name := range []string{"synced", "new"} {
		stub := h.C.Readmit(mk(name))
		if !tenant.IsHeldOut(stub) {
			t.Fatalf("%s: a Service with 2 KB of annotations passed a 1Ki cap", name)
		}
		h.Tenant(tenantInf, stub.(runtime.Object))
	}
	// "synced" has a super copy from before it grew.
	small := mk("synced")
	small.Annotations = nil
	old := Desired(h.C, small, superNS, nil)
	old.Spec.ClusterIP = "10.96.0.10"
	h.Super(superInf, old)

	denied := h.Denials(resources.KindService, policy.RuleObjectSize)
	for range 2 {
		for _, name := range []string{"synced", "new"} {
			if err := Resource.Downward(h.Ctx(), h.Env, h.C, "app", name); err != nil {
				t.Fatalf("Downward of stub %s = %v, want nil (no retry)", name, err)
			}
			if err := Resource.Upward(h.Ctx(), h.Env, h.C, "app", name); err != nil {
				t.Fatalf("Upward of stub %s = %v", name, err)
			}
		}
	}
	if got := h.Denials(resources.KindService, policy.RuleObjectSize) - denied; got != 2 {
		t.Errorf("%v objectSize denials, want 2 (one per stub, once per version)", got)
	}
	if _, err := h.SuperCS.CoreV1().Services(superNS).Get(h.Ctx(), "new", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a super copy was created for a stub (%v)", err)
	}
	got, err := h.SuperCS.CoreV1().Services(superNS).Get(h.Ctx(), "synced", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the super copy of a Service that grew past the cap was deleted: %v", err)
	}
	if got.ResourceVersion != old.ResourceVersion || got.Spec.ClusterIP != "10.96.0.10" {
		t.Errorf("the super copy was changed: %+v", got)
	}
	for _, a := range h.TenantCS.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			t.Errorf("a write into the tenant from a stub: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}
