package chaos

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
)

// TestPolicyFlipWhileDown: the Tenant names the refusing policy only while every replica is
// down, the refusal begins once they run again and lasts while a super copy of the tenant's
// Services is left; then every replica is stopped again, the old policy put back and they are
// started again.
func TestPolicyFlipWhileDown(t *testing.T) {
	tn := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "tenant-1"}, Spec: tenancyv1alpha1.TenantSpec{PolicyName: "own"}}
	cl := crfake.NewClientBuilder().WithScheme(app.Scheme()).WithObjects(tn).Build()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc-1", Namespace: "tenant-1-x-chaos-a",
		Labels: map[string]string{conversion.LabelTenantUID: tenantUID, LabelLoad: ValueLoad}}}
	super := fake.NewClientset(svc)
	rs := []*Replica{sleeper(t), sleeper(t)}
	before := []int{rs[0].PID(), rs[1].PID()}
	tg := &Target{Tenancy: cl, Super: super, TenantNames: []string{"tenant-1"}, TenantUIDs: []string{tenantUID}, Refusals: &Refusals{}, Replicas: rs}
	policyName := func() string {
		got := &tenancyv1alpha1.Tenant{}
		if err := cl.Get(t.Context(), client.ObjectKey{Name: "tenant-1"}, got); err != nil {
			t.Fatal(err)
		}
		return got.Spec.PolicyName
	}
	done := make(chan error, 1)
	go func() {
		_, err := Injectors[PolicyFlipWhileDown](context.Background(), tg, Fault{Kind: PolicyFlipWhileDown, HoldMillis: 50})
		done <- err
	}()
	waitFor(t, "the refusal to begin", func() bool { _, ok := tg.Refusals.Ongoing()[RefusalKey(tenantUID, "Service")]; return ok })
	if got := policyName(); got != RefusingPolicy {
		t.Errorf("during the refusal the Tenant names policy %q, want %s", got, RefusingPolicy)
	}
	var during []int
	for i, r := range rs {
		during = append(during, r.PID())
		if during[i] == 0 || during[i] == before[i] {
			t.Errorf("during the refusal %s runs as pid %d (before: %d): not started again", r.ID, during[i], before[i])
		}
	}
	select {
	case err := <-done:
		t.Fatalf("the fault ended while a super Service copy was left: %v", err)
	default:
	}
	if err := super.CoreV1().Services(svc.Namespace).Delete(t.Context(), svc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := policyName(); got != "own" {
		t.Errorf("after the fault the Tenant names policy %q, want own again", got)
	}
	if n := len(tg.Refusals.Ongoing()); n != 0 {
		t.Errorf("%d refusals left after the fault", n)
	}
	for i, r := range rs {
		if pid := r.PID(); pid == 0 || pid == during[i] {
			t.Errorf("after the fault %s runs as pid %d (during: %d): not stopped and started again", r.ID, pid, during[i])
		}
	}
}
