package kubelet_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// setPolicyName sets Tenant name's spec.policyName.
func setPolicyName(t *testing.T, c client.Client, name, policy string) {
	t.Helper()
	updateTenant(t, c, name, "spec.policyName", func(s *tenancyv1alpha1.TenantSpec) { s.PolicyName = policy })
}

// testExecSwitchedOffByPolicy: a TenantPolicy with kubelet.allowExec false makes a tenant
// user's `kubectl exec` fail (403 from the kubelet API, result policy_forbidden, nothing
// forwarded) while `kubectl logs` still works; the tenant's exec works again once its Tenant
// no longer names that policy.
func testExecSwitchedOffByPolicy(t *testing.T, c client.Client, t1 *localcluster.ControlPlane) {
	ctx := context.Background()
	pol := &tenancyv1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "no-exec"},
		Spec: tenancyv1alpha1.TenantPolicySpec{Kubelet: &tenancyv1alpha1.KubeletPolicy{AllowExec: new(false)}}}
	if err := c.Create(ctx, pol); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), pol) })
	setPolicyName(t, c, t1.Name, "no-exec")
	refused := metrics.KubeletRequests(t1.Name, "exec", "policy_forbidden")
	itest.Eventually(t, time.Minute, "kubectl exec refused by the tenant's policy", func(ctx context.Context) error {
		var stderr strings.Builder
		err := execIn(ctx, t1, []string{"echo", "exec-refused"}, io.Discard, &stderr)
		if err == nil {
			return itest.Errorf("kubectl exec succeeded with kubelet.allowExec false")
		}
		if metrics.KubeletRequests(t1.Name, "exec", "policy_forbidden") == refused {
			return itest.Errorf("exec failed (%v) but not by the policy", err)
		}
		t.Logf("kubectl exec with kubelet.allowExec false: %v", err)
		return nil
	})
	// The syncer sees the policy change asynchronously, so an exec before the first refusal
	// may still be forwarded; once one is refused, the next is refused too and none goes through.
	refused = metrics.KubeletRequests(t1.Name, "exec", "policy_forbidden")
	forwarded := metrics.KubeletRequests(t1.Name, "exec", "forwarded")
	ectx, ecancel := context.WithTimeout(ctx, 30*time.Second)
	defer ecancel()
	if err := execIn(ectx, t1, []string{"echo", "exec-refused-again"}, io.Discard, io.Discard); err == nil {
		t.Errorf("kubectl exec succeeded after a refusal by the policy")
	}
	if d := metrics.KubeletRequests(t1.Name, "exec", "policy_forbidden") - refused; d < 1 {
		t.Errorf("%v exec requests refused by the policy for one more kubectl exec, want at least 1 (WebSocket, then SPDY)", d)
	}
	if d := metrics.KubeletRequests(t1.Name, "exec", "forwarded") - forwarded; d != 0 {
		t.Errorf("%v exec requests forwarded while the policy switches exec off", d)
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := t1.Client.CoreV1().Pods("web").GetLogs("frontend", &corev1.PodLogOptions{Container: "app"}).DoRaw(lctx); err != nil {
		t.Errorf("kubectl logs with exec switched off: %v", err)
	}

	setPolicyName(t, c, t1.Name, "")
	itest.Eventually(t, time.Minute, "kubectl exec allowed again", func(ctx context.Context) error {
		return execIn(ctx, t1, []string{"echo", "exec-ok"}, io.Discard, io.Discard)
	})
}

// testAttachPortForwardSwitchedOffByPolicy: a TenantPolicy with kubelet.allowAttach and
// allowPortForward false makes a tenant user's attach and port-forward fail (403 from the
// kubelet API, result policy_forbidden, nothing forwarded) while exec still works; both work
// again once the Tenant no longer names that policy.
func testAttachPortForwardSwitchedOffByPolicy(t *testing.T, c client.Client, super, t1 *localcluster.ControlPlane) {
	ctx := context.Background()
	pol := &tenancyv1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "no-attach-port-forward"},
		Spec: tenancyv1alpha1.TenantPolicySpec{Kubelet: &tenancyv1alpha1.KubeletPolicy{AllowAttach: new(false), AllowPortForward: new(false)}}}
	if err := c.Create(ctx, pol); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), pol) })
	setPolicyName(t, c, t1.Name, pol.Name)
	try := func(ctx context.Context, e string) error {
		if e == "portForward" {
			return echoThroughPortForward(ctx, portForwardDialers(t, t1)["spdy"], 1)
		}
		return attachSees(ctx, attachExecutors(t, t1)["spdy"], super, "attach-refused")
	}
	endpoints := []string{"portForward", "attach"}
	for _, e := range endpoints {
		refused := metrics.KubeletRequests(t1.Name, e, "policy_forbidden")
		itest.Eventually(t, time.Minute, e+" refused by the tenant's policy", func(ctx context.Context) error {
			err := try(ctx, e)
			if err == nil {
				return itest.Errorf("%s succeeded with the endpoint switched off", e)
			}
			if metrics.KubeletRequests(t1.Name, e, "policy_forbidden") == refused {
				return itest.Errorf("%s failed (%v) but not by the policy", e, err)
			}
			t.Logf("%s switched off: %v", e, err)
			return nil
		})
	}
	// The syncer sees the policy change asynchronously, so a request before the first refusal
	// may still be forwarded; once both are refused, none goes through.
	for _, e := range endpoints {
		refused := metrics.KubeletRequests(t1.Name, e, "policy_forbidden")
		forwarded := metrics.KubeletRequests(t1.Name, e, "forwarded")
		rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
		if err := try(rctx, e); err == nil {
			t.Errorf("%s succeeded after a refusal by the policy", e)
		}
		rcancel()
		if d := metrics.KubeletRequests(t1.Name, e, "policy_forbidden") - refused; d < 1 {
			t.Errorf("%v %s requests refused by the policy for one more try, want at least 1", d, e)
		}
		if d := metrics.KubeletRequests(t1.Name, e, "forwarded") - forwarded; d != 0 {
			t.Errorf("%v %s requests forwarded while the policy switches it off", d, e)
		}
	}
	ectx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := execIn(ectx, t1, []string{"echo", "exec-ok"}, io.Discard, io.Discard); err != nil {
		t.Errorf("kubectl exec with attach and port-forward switched off: %v", err)
	}

	setPolicyName(t, c, t1.Name, "")
	itest.Eventually(t, time.Minute, "port-forward allowed again", func(ctx context.Context) error {
		return echoThroughPortForward(ctx, portForwardDialers(t, t1)["spdy"], 1)
	})
	waitClosed(t, t1.Name)
}
