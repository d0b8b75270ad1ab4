package tenant

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

func TestKubeletClientCACondition(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := tenancyv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	caA, caB, other := testCertPEM(t, true), testCertPEM(t, true), testCertPEM(t, true)
	mk := func(name, ca string) *tenancyv1alpha1.Tenant {
		return &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name, UID: k8stypes.UID("uid-" + name)}, Spec: tenancyv1alpha1.TenantSpec{KubeletClientCA: ca}}
	}
	cases := map[string]struct {
		tenant      *tenancyv1alpha1.Tenant
		others      []*tenancyv1alpha1.Tenant
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantMessage string // a part of the message
		wantEvent   bool
	}{
		"none":                      {tenant: mk("a", ""), wantStatus: metav1.ConditionTrue, wantReason: ReasonKubeletClientCANotSet},
		"valid and distinct":        {tenant: mk("a", caA), others: []*tenancyv1alpha1.Tenant{mk("b", caB), mk("c", "")}, wantStatus: metav1.ConditionTrue, wantReason: ReasonValid},
		"not PEM":                   {tenant: mk("a", "hello"), wantStatus: metav1.ConditionFalse, wantReason: ReasonInvalidKubeletClientCA, wantMessage: "not a PEM bundle", wantEvent: true},
		"not a CA":                  {tenant: mk("a", testCertPEM(t, false)), wantStatus: metav1.ConditionFalse, wantReason: ReasonInvalidKubeletClientCA, wantMessage: "not a CA", wantEvent: true},
		"same CA as another":        {tenant: mk("a", caA), others: []*tenancyv1alpha1.Tenant{mk("b", caA)}, wantStatus: metav1.ConditionFalse, wantReason: ReasonSharedKubeletClientCA, wantMessage: `Tenant "b"`, wantEvent: true},
		"one CA of a bundle shared": {tenant: mk("a", other+caA), others: []*tenancyv1alpha1.Tenant{mk("b", caB+caA)}, wantStatus: metav1.ConditionFalse, wantReason: ReasonSharedKubeletClientCA, wantMessage: `Tenant "b"`, wantEvent: true},
		"another's invalid CA":      {tenant: mk("a", caA), others: []*tenancyv1alpha1.Tenant{mk("b", "garbage")}, wantStatus: metav1.ConditionTrue, wantReason: ReasonValid},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := []runtime.Object{tc.tenant}
			for _, o := range tc.others {
				objs = append(objs, o)
			}
			rec := record.NewFakeRecorder(10)
			r := &Reconciler{Client: fake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(objs...).Build(), Recorder: rec}
			tn := tc.tenant.DeepCopy()
			r.kubeletCAStatus(context.Background(), tn)
			c := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionKubeletClientCAValid)
			if c == nil || c.Status != tc.wantStatus || c.Reason != tc.wantReason || !strings.Contains(c.Message, tc.wantMessage) {
				t.Fatalf("KubeletClientCAValid = %+v, want %s %s containing %q", c, tc.wantStatus, tc.wantReason, tc.wantMessage)
			}
			if got := len(rec.Events); got != map[bool]int{true: 1}[tc.wantEvent] {
				t.Errorf("%d Events, want one: %v", got, tc.wantEvent)
			}
			// Once reported, the same state writes no second Event.
			r.kubeletCAStatus(context.Background(), tn)
			if got := len(rec.Events); got != map[bool]int{true: 1}[tc.wantEvent] {
				t.Errorf("after a second reconcile, %d Events", got)
			}
		})
	}
}
