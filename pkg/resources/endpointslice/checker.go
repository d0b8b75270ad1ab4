package endpointslice

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

var _ resources.Checker = Resource

// Check implements resources.Checker with the downward reconciler's own Desired and Equal, for
// the slices the reconciler syncs only (slices of tenant Services without a selector, not
// managed by the tenant's EndpointSlice controller).
func (resourceKind) Check(_ *resources.Env, c *tenant.Cluster, t, s metav1.Object) resources.Mismatch {
	ts, ok := t.(*discoveryv1.EndpointSlice)
	if !ok || !Synced(ts, c.Informers.Core().V1().Services().Lister().Services(ts.Namespace)) {
		return resources.InSync
	}
	return resources.CheckWith(t, s, func(t, s *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
		return Desired(c, t, s.Namespace, s, true)
	}, Equal)
}
