package poddisruptionbudget

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

var _ resources.Checker = Resource{}

// Check implements resources.Checker with the downward reconciler's own Desired and Equal.
func (Resource) Check(env *resources.Env, c *tenant.Cluster, t, s metav1.Object) resources.Mismatch {
	return resources.CheckWith(t, s, func(t, s *policyv1.PodDisruptionBudget) *policyv1.PodDisruptionBudget {
		return Desired(env, c, t, s.Namespace, s, true)
	}, Equal)
}
