package namespace_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/namespace"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// A tenant Namespace the tenant cache holds as a stub (over limits.maxObjectBytes) with no
// super namespace yet is refused (rule objectSize), without a panic and without a super
// namespace.
func TestHeldOutNamespaceWithoutSuperNamespaceIsRefused(t *testing.T) {
	h := restest.New(t, "ns-held")
	q := resource.MustParse("1Ki")
	h.SetPolicy(&tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{MaxObjectBytes: &q}})
	big := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "big", UID: types.UID("ns-big"), ResourceVersion: "3",
		Annotations: map[string]string{"note": strings.Repeat("x", 2000)}}}
	stub := h.C.Readmit(big)
	if !tenant.IsHeldOut(stub) {
		t.Fatal("a Namespace with 2 KB of annotations passed a 1Ki cap")
	}
	h.Tenant(h.C.Informers.Core().V1().Namespaces().Informer(), stub.(*corev1.Namespace))
	denied := h.Denials(resources.KindNamespace, policy.RuleObjectSize)
	if err := namespace.Resource.Downward(h.Ctx(), h.Env, h.C, "", "big"); err != nil {
		t.Fatalf("Downward of a held-out Namespace = %v, want nil (refused, no retry)", err)
	}
	if got := h.Denials(resources.KindNamespace, policy.RuleObjectSize) - denied; got != 1 {
		t.Errorf("%v objectSize denials, want 1", got)
	}
	if _, err := h.SuperCS.CoreV1().Namespaces().Get(h.Ctx(), resources.SuperNamespace(h.C, "big"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a super namespace was created for a stub (%v)", err)
	}
}
