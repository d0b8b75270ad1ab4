package poddisruptionbudget

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func TestDesired(t *testing.T) {
	c := &tenant.Cluster{Name: "t", UID: "u"}
	env := &resources.Env{SuperInformers: informers.NewSharedInformerFactory(fake.NewClientset(), 0)}
	superNS := resources.SuperNamespace(c, "apps")
	pct := intstr.FromString("67%")
	one := intstr.FromInt32(1)
	always := policyv1.AlwaysAllow
	cases := map[string]policyv1.PodDisruptionBudgetSpec{
		"minAvailable percent": {MinAvailable: &pct, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}},
		"maxUnavailable with eviction policy": {MaxUnavailable: &one, UnhealthyPodEvictionPolicy: &always,
			Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpExists}}}},
	}
	for name, spec := range cases {
		t.Run(name, func(t *testing.T) {
			in := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "apps", UID: "p-uid"}, Spec: spec,
				Status: policyv1.PodDisruptionBudgetStatus{CurrentHealthy: 3}}
			got := Desired(env, c, in, superNS, nil)
			if d := cmp.Diff(spec.Selector, got.Spec.Selector); d != "" {
				t.Errorf("selector changed:\n%s", d)
			}
			if got.Status.CurrentHealthy != 0 || !conversion.OwnedByTenant(got, "u") || got.Namespace != superNS {
				t.Errorf("status or meta wrong: %+v %+v", got.Status, got.ObjectMeta)
			}
			if !Equal(got, got.DeepCopy()) {
				t.Error("Equal(x, copy) = false")
			}
			other := got.DeepCopy()
			other.Spec.Selector = nil
			if Equal(got, other) {
				t.Error("Equal ignores the selector")
			}
		})
	}
}
