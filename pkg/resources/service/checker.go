package service

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

var _ resources.Checker = Resource

// Check implements resources.Checker with the downward reconciler's own Desired and Equal
// (MismatchContentDiffers) and the upward reconciler's comparison of load-balancer status
// (MismatchStatusDiffers).
func (resourceKind) Check(_ *resources.Env, c *tenant.Cluster, t, s metav1.Object) resources.Mismatch {
	ts, ok := t.(*corev1.Service)
	if !ok || tenant.IsHeldOut(ts) {
		return resources.InSync // a stub: refused, its super copy (if any) left as it was
	}
	if m := resources.CheckPresence(t, s); m != resources.InSync || ts.DeletionTimestamp != nil {
		return m
	}
	ss, ok := s.(*corev1.Service)
	if !ok {
		return resources.InSync
	}
	if !Equal(Desired(c, ts, ss.Namespace, ss), ss) {
		return resources.MismatchContentDiffers
	}
	if !equality.Semantic.DeepEqual(ts.Status.LoadBalancer, ss.Status.LoadBalancer) {
		return resources.MismatchStatusDiffers
	}
	return resources.InSync
}
