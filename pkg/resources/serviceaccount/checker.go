package serviceaccount

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

var _ resources.Checker = Resource{}

// Check implements resources.Checker with the downward reconciler's own Desired and Equal, so
// it reports exactly the differences a reconcile would write. The default ServiceAccount is never synced.
func (Resource) Check(_ *resources.Env, c *tenant.Cluster, t, s metav1.Object) resources.Mismatch {
	if tc, ok := t.(*corev1.ServiceAccount); !ok || tc.Name == DefaultServiceAccount {
		return resources.InSync
	}
	return resources.CheckWith(t, s, func(t, s *corev1.ServiceAccount) *corev1.ServiceAccount {
		return Desired(c, t, s.Namespace, s, true)
	}, Equal)
}
