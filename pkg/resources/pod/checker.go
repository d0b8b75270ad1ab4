package pod

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

var _ resources.Checker = Resource{}

// Check implements resources.Checker. It follows the two reconcilers step by step:
//
//   - no super Pod: expected (InSync) for a tenant Pod that already ran and finished (markLost
//     has nothing to do) and for a Pod whose preset spec.nodeName is not one of the tenant's
//     vNodes (it never runs); otherwise MismatchMissingInSuper (created, or marked lost);
//   - super Pod recorded with another tenant UID, or still live while the tenant Pod is being
//     deleted: MismatchStaleInSuper;
//   - labels, annotations or container images differ (NeedsUpdate on Desired, as the downward
//     reconcile decides): MismatchContentDiffers;
//   - super Pod bound and the tenant Pod not, or the tenant status differs from DesiredStatus
//     (as the upward reconcile decides): MismatchStatusDiffers.
func (Resource) Check(env *resources.Env, c *tenant.Cluster, t, s metav1.Object) resources.Mismatch {
	tp, ok := t.(*corev1.Pod)
	if !ok {
		return resources.InSync
	}
	if s == nil && tp.DeletionTimestamp == nil {
		if wasRunInSuper(tp) {
			if tp.Status.Phase == corev1.PodSucceeded || tp.Status.Phase == corev1.PodFailed {
				return resources.InSync
			}
			return resources.MismatchMissingInSuper
		}
		if tp.Spec.NodeName != "" && !presetNodeAllowed(env, c, tp.Spec.NodeName) {
			return resources.InSync
		}
	}
	if m := resources.CheckPresence(t, s); m != resources.InSync || tp.DeletionTimestamp != nil {
		return m
	}
	sp, ok := s.(*corev1.Pod)
	if !ok {
		return resources.InSync
	}
	if NeedsUpdate(Desired(c, tp, sp.Namespace, sp.Annotations), sp) {
		return resources.MismatchContentDiffers
	}
	if sp.Spec.NodeName != "" && tp.Spec.NodeName == "" {
		return resources.MismatchStatusDiffers // not bound to its vNode yet
	}
	if !equality.Semantic.DeepEqual(DesiredStatus(tp, sp), &tp.Status) {
		return resources.MismatchStatusDiffers
	}
	return resources.InSync
}
