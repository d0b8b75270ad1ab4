package restart_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources/service"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// TestPolicyChangedWhileDownIsApplied (issue #37): a TenantPolicy tightened while the syncer
// is down applies, after the restart, to tenant objects that did not change. A resumed tenant's
// ClusterSynced enqueues only what changed since the checkpoint's acks, and a policy set before
// the tenant's Cluster starts is no PolicyChanged, so without the policy in the checkpoint the
// NodePort Service the new policy refuses kept its super copy for good (remediation is off
// here, as it would only repair it a scan interval or two later).
func TestPolicyChangedWhileDownIsApplied(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real control planes")
	}
	o := startOneTenantBin(t, nil, "1h", "") // the only checkpoints are the final ones of graceful stops
	env, tc, p, c := o.env, o.tc, o.p, o.c
	ctx := t.Context()
	itest.DefaultPolicy(t, c, tenancyv1alpha1.TenantPolicySpec{
		Services: &tenancyv1alpha1.ServicePolicy{AllowedTypes: []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort}},
		Limits: &tenancyv1alpha1.LimitsPolicy{Quota: corev1.ResourceList{ // the built-in quota has no node ports
			corev1.ResourceServices: resource.MustParse("20"), corev1.ResourceServicesNodePorts: resource.MustParse("5")}},
	})
	superNS := conversion.SuperNamespace(tc.Name, itest.TenantUID(t, c, tc.Name), "app")
	itest.MustCreateNS(t, tc.Client, "app")
	itest.Created(t)(tc.Client.CoreV1().Services("app").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "np"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": "np"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}, metav1.CreateOptions{}))
	itest.Eventually(t, time.Minute, "NodePort Service np synced", func(ctx context.Context) error {
		_, err := env.Super.Client.CoreV1().Services(superNS).Get(ctx, "np", metav1.GetOptions{})
		return err
	})

	p.Stop(t) // SIGTERM: the final checkpoint acks np
	pol := &tenancyv1alpha1.TenantPolicy{}
	if err := c.Get(ctx, client.ObjectKey{Name: tenancyv1alpha1.DefaultPolicyName}, pol); err != nil {
		t.Fatal(err)
	}
	pol.Spec.Services.AllowedTypes = []corev1.ServiceType{corev1.ServiceTypeClusterIP}
	if err := c.Update(ctx, pol); err != nil {
		t.Fatal(err)
	}
	p.Start(t)
	itest.WaitRunning(t, c, tc.Name)
	itest.Eventually(t, time.Minute, "np refused after the restart: no super copy, Synced=False "+policy.ReasonPolicyDenied, func(ctx context.Context) error {
		switch _, err := env.Super.Client.CoreV1().Services(superNS).Get(ctx, "np", metav1.GetOptions{}); {
		case err == nil:
			return errors.New("super copy of np still there")
		case !apierrors.IsNotFound(err):
			return err
		}
		svc, err := tc.Client.CoreV1().Services("app").Get(ctx, "np", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cond := meta.FindStatusCondition(svc.Status.Conditions, service.ConditionSynced); cond == nil ||
			cond.Status != metav1.ConditionFalse || cond.Reason != policy.ReasonPolicyDenied {
			return fmt.Errorf("condition %+v", cond)
		}
		return nil
	})
	if err := p.Exited(); err != nil {
		t.Fatal(err)
	}
}
