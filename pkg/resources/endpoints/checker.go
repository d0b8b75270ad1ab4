package endpoints

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

var _ resources.Checker = Resource

// Check implements resources.Checker with the downward reconciler's own Desired and Equal, for
// the Endpoints of tenant Services without a selector only (the others are never synced).
func (resourceKind) Check(_ *resources.Env, c *tenant.Cluster, t, s metav1.Object) resources.Mismatch {
	svc, err := c.Informers.Core().V1().Services().Lister().Services(t.GetNamespace()).Get(t.GetName())
	if err != nil || !Synced(svc) {
		return resources.InSync
	}
	return resources.CheckWith(t, s, func(t, s *corev1.Endpoints) *corev1.Endpoints {
		return Desired(c, t, s.Namespace, s, true)
	}, Equal)
}
