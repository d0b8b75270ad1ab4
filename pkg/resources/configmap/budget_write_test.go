package configmap

import (
	"io"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/vcsyncer/syncer/pkg/admission"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
)

// The generic downward reconciler keeps a budget reservation after a super create whose
// outcome is unknown (a broken connection) and returns it after a refusal (Forbidden).
func TestConfigMapCreateOfUnknownOutcomeKeepsTheBudgetReservation(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"broken connection", io.ErrUnexpectedEOF, "1"},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "cfg", io.EOF), "0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := restest.New(t, "t1", "shop")
			h.SetPolicy(&tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{
				Quota: corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("2")}}})
			b := admission.NewBudget(admission.BudgetOptions[string]{Wake: func(string) {}})
			h.Env.Budget = restest.Budget(b)
			h.Tenant(h.C.Informers.Core().V1().ConfigMaps().Informer(),
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "shop", UID: "cm-uid", ResourceVersion: "1"}})
			makeSuperNamespace(t, h, "cfg")
			h.SuperCS.PrependReactor("create", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, c.err
			})
			if err := Resource.Downward(h.Ctx(), h.Env, h.C, "shop", "cfg"); err == nil {
				t.Fatal("Downward = nil, want the create's error")
			}
			if got := b.Used("t1")[corev1.ResourceConfigMaps]; got.String() != c.want {
				t.Errorf("used configmaps %s after a create that failed with %v, want %s", got.String(), c.err, c.want)
			}
		})
	}
}
