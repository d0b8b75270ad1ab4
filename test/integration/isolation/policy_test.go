package isolation

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// setPolicyName sets Tenant name's spec.policyName.
func (s *suite) setPolicyName(t *testing.T, name, policyName string) {
	t.Helper()
	itest.Eventually(t, maxWait, "Tenant "+name+" spec.policyName="+policyName, func(ctx context.Context) error {
		tn := &tenancyv1alpha1.Tenant{}
		if err := s.c.Get(ctx, client.ObjectKey{Name: name}, tn); err != nil {
			return err
		}
		tn.Spec.PolicyName = policyName
		return s.c.Update(ctx, tn)
	})
}

// checkTenantOptsIn: the allowlists are per tenant. Tenant B gets a TenantPolicy that also
// allows inline nfs volumes: B's nfs Pod runs in the super cluster with its volume, while A's
// nfs Pod (attack inline-nfs-volume, built-in defaults) stays refused.
func (s *suite) checkTenantOptsIn(t *testing.T) {
	ctx := context.Background()
	builtin := policy.Builtin()
	tp := &tenancyv1alpha1.TenantPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant-b-nfs"},
		Spec: tenancyv1alpha1.TenantPolicySpec{Pods: &tenancyv1alpha1.PodPolicy{
			AllowedVolumeTypes: append(slices.Clone(builtin.Pods.AllowedVolumeTypes), "nfs"),
		}},
	}
	if err := s.c.Create(ctx, tp); err != nil {
		t.Fatal(err)
	}
	s.setPolicyName(t, s.b.Name, tp.Name)
	const name = "nfs-allowed"
	p := basePod(name)
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: inlineVolume("nfs")}}
	defer func() {
		// Leave B as it was for the subtests that follow: Pod gone, built-in policy.
		_ = s.b.Client.CoreV1().Pods(bNS).Delete(ctx, name, metav1.DeleteOptions{})
		itest.Eventually(t, time.Minute, "B's nfs Pod gone", func(ctx context.Context) error {
			if _, err := s.b.Client.CoreV1().Pods(bNS).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("still there (err %v)", err)
			}
			return nil
		})
		s.setPolicyName(t, s.b.Name, "")
		_ = s.c.Delete(ctx, tp)
	}()
	itest.Eventually(t, maxWait, "Tenant B's PolicyValid=True", func(ctx context.Context) error {
		tn := &tenancyv1alpha1.Tenant{}
		if err := s.c.Get(ctx, client.ObjectKey{Name: s.b.Name}, tn); err != nil {
			return err
		}
		for _, c := range tn.Status.Conditions {
			if c.Type == tenancyv1alpha1.ConditionPolicyValid && c.Status == metav1.ConditionTrue {
				return nil
			}
		}
		return itest.Errorf("conditions %+v", tn.Status.Conditions)
	})
	if _, err := s.b.Client.CoreV1().Pods(bNS).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	itest.Eventually(t, maxWait, "B's nfs Pod in the super cluster with its volume", func(ctx context.Context) error {
		sp, err := s.super.CoreV1().Pods(s.bSuperNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return itest.Errorf("%v (B's Events: %s)", err, eventSummary(ctx, s.b.Client, name))
		}
		for _, v := range sp.Spec.Volumes {
			if v.NFS != nil {
				return nil
			}
		}
		return itest.Errorf("super Pod has no nfs volume: %+v", sp.Spec.Volumes)
	})
	// A's nfs Pod of the inline-nfs-volume attack is still refused.
	if sp, err := s.superPod(ctx, s.aSuperNS, "inline-nfs"); err == nil && sp != nil {
		for _, v := range sp.Spec.Volumes {
			if v.NFS != nil {
				t.Errorf("ATTACK ESCAPED: A's Pod %s/%s mounts nfs (A has the built-in policy; only B allows nfs)", sp.Namespace, sp.Name)
			}
		}
	}
}
