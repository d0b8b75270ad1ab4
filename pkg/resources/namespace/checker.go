package namespace

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

var _ resources.Checker = Resource

// Check implements resources.Checker for presence and identity only (resources.CheckPresence):
// every tenant namespace has a super namespace recorded with its UID. A super namespace that is
// terminating while the tenant namespace is not is left alone, as the reconciler does (it is
// recreated once gone, through its deletion event). Labels and annotations are not compared:
// super-cluster admins own the ones the tenant does not set. The super namespace's ResourceQuota
// and LimitRange are (admit.BoundsInSync): missing or edited ones are MismatchContentDiffers.
func (resourceKind) Check(env *resources.Env, c *tenant.Cluster, t, s metav1.Object) resources.Mismatch {
	if s != nil && t.GetDeletionTimestamp() == nil && s.GetDeletionTimestamp() != nil {
		return resources.InSync
	}
	if tenant.IsHeldOut(t) {
		return resources.InSync // a stub: its super namespace, if any, is left as it was
	}
	if m := resources.CheckPresence(t, s); m != resources.InSync || t.GetDeletionTimestamp() != nil {
		return m
	}
	if sns, ok := s.(*corev1.Namespace); ok && !admit.BoundsInSync(env, c, sns) {
		return resources.MismatchContentDiffers
	}
	return resources.InSync
}
