package tenant

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
)

func TestResolvePolicy(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := tenancyv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	def := &tenancyv1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: tenancyv1alpha1.TenantPolicySpec{
		Services: &tenancyv1alpha1.ServicePolicy{AllowedTypes: []corev1.ServiceType{corev1.ServiceTypeNodePort}},
	}}
	gold := &tenancyv1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "gold"}, Spec: tenancyv1alpha1.TenantPolicySpec{
		Pods: &tenancyv1alpha1.PodPolicy{AllowedCSIDrivers: []string{"csi.example.com"}},
	}}
	cases := map[string]struct {
		policyName    string
		objs          []runtime.Object
		wantValid     metav1.ConditionStatus
		wantTypes     []corev1.ServiceType
		wantDrivers   int
		wantEvents    int
		wantIsDefault bool
	}{
		"no policies: built-in":                {wantValid: metav1.ConditionTrue, wantTypes: []corev1.ServiceType{corev1.ServiceTypeClusterIP}, wantIsDefault: true},
		"default policy applies":               {objs: []runtime.Object{def}, wantValid: metav1.ConditionTrue, wantTypes: []corev1.ServiceType{corev1.ServiceTypeNodePort}},
		"named over default":                   {policyName: "gold", objs: []runtime.Object{def, gold}, wantValid: metav1.ConditionTrue, wantTypes: []corev1.ServiceType{corev1.ServiceTypeNodePort}, wantDrivers: 1},
		"missing named: built-in, not default": {policyName: "typo", objs: []runtime.Object{def}, wantValid: metav1.ConditionFalse, wantTypes: []corev1.ServiceType{corev1.ServiceTypeClusterIP}, wantEvents: 1, wantIsDefault: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec := record.NewFakeRecorder(10)
			r := &Reconciler{Client: fake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(tc.objs...).Build(), Recorder: rec}
			tn := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "t"}, Spec: tenancyv1alpha1.TenantSpec{PolicyName: tc.policyName}}
			e, err := r.resolvePolicy(context.Background(), tn)
			if err != nil {
				t.Fatal(err)
			}
			if c := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionPolicyValid); c == nil || c.Status != tc.wantValid {
				t.Errorf("PolicyValid = %+v, want %s", c, tc.wantValid)
			}
			if got := e.Services().AllowedTypes; len(got) != len(tc.wantTypes) || got[0] != tc.wantTypes[0] {
				t.Errorf("service types = %v, want %v", got, tc.wantTypes)
			}
			if got := len(e.Pods().AllowedCSIDrivers); got != tc.wantDrivers {
				t.Errorf("csi drivers = %d, want %d", got, tc.wantDrivers)
			}
			if got := len(rec.Events); got != tc.wantEvents {
				t.Errorf("events = %d, want %d", got, tc.wantEvents)
			}
			if (e.Generation == policy.Default().Generation) != tc.wantIsDefault {
				t.Errorf("generation %s, built-in %s, want built-in: %v", e.Generation, policy.Default().Generation, tc.wantIsDefault)
			}
		})
	}
}
