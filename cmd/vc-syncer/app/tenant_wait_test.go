package app

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

func TestWaitTenantRunning(t *testing.T) {
	tenantWith := func(phase tenancyv1alpha1.TenantPhase, conds ...metav1.Condition) *tenancyv1alpha1.Tenant {
		return &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "t1"},
			Status: tenancyv1alpha1.TenantStatus{Phase: phase, Conditions: conds}}
	}
	running := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(tenantWith(tenancyv1alpha1.TenantRunning)).Build()
	var out bytes.Buffer
	if err := WaitTenantRunning(context.Background(), running, "t1", time.Second, &out); err != nil || !strings.Contains(out.String(), "Running") {
		t.Errorf("running tenant: err %v, output %q", err, out.String())
	}
	denied := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(tenantWith(tenancyv1alpha1.TenantUnreachable,
		metav1.Condition{Type: tenancyv1alpha1.ConditionKubeconfigValid, Status: metav1.ConditionTrue},
		metav1.Condition{Type: tenancyv1alpha1.ConditionConnected, Status: metav1.ConditionFalse, Reason: "Unauthorized", Message: "token expired"},
	)).Build()
	err := WaitTenantRunning(context.Background(), denied, "t1", 700*time.Millisecond, &out)
	if err == nil || !strings.Contains(err.Error(), "Connected=False (Unauthorized): token expired") {
		t.Errorf("unreachable tenant: err %v, want the Connected condition", err)
	}
}
