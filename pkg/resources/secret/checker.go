package secret

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

var _ resources.Checker = Resource{}

// Check implements resources.Checker with the downward reconciler's own Desired and Equal, so
// it reports exactly the differences a reconcile would write. Service-account token Secrets
// are never synced (Skip).
func (Resource) Check(_ *resources.Env, c *tenant.Cluster, t, s metav1.Object) resources.Mismatch {
	if tc, ok := t.(*corev1.Secret); !ok || Skip(tc) {
		return resources.InSync
	}
	return resources.CheckWith(t, s, func(t, s *corev1.Secret) *corev1.Secret {
		return Desired(c, t, s.Namespace, s, true)
	}, Equal)
}
