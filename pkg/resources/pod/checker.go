package pod

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

var _ resources.StableChecker = Resource

// StableVerdicts implements resources.StableChecker: with a super Pod present, Check reads
// only the two Pods and the tenant's identity and policy (the super Nodes matter only when
// there is no super Pod).
func (resourceKind) StableVerdicts() {}

// Check implements resources.Checker. It follows the two reconcilers step by step:
//
//   - no super Pod: expected (InSync) for a tenant Pod that already ran and finished (markLost
//     has nothing to do) and for a Pod whose preset spec.nodeName is not one of the tenant's
//     vNodes (it never runs); otherwise MismatchMissingInSuper (created, or marked lost);
//   - super Pod recorded with another tenant UID, or still live while the tenant Pod is being
//     deleted: MismatchStaleInSuper;
//   - labels, annotations or container images differ (NeedsUpdate on Desired, as the downward
//     reconcile decides), or the readiness-gate conditions differ (TenantConditionsPatch):
//     MismatchContentDiffers;
//   - super Pod bound and the tenant Pod not, or the tenant status differs from DesiredStatus
//     (as the upward reconcile decides): MismatchStatusDiffers.
func (resourceKind) Check(env *resources.Env, c *tenant.Cluster, t, s metav1.Object) resources.Mismatch {
	tp, ok := podcache.From(t)
	if !ok || tenant.IsHeldOut(tp) {
		return resources.InSync // a stub: refused, its super Pod (if any) left as it was
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
	sp, ok := podcache.From(s)
	if !ok {
		return resources.InSync
	}
	if !contentInSync(c, tp, sp) || !tenantConditionsInSync(tp, sp) {
		return resources.MismatchContentDiffers
	}
	if sp.Spec.NodeName != "" && tp.Spec.NodeName == "" {
		return resources.MismatchStatusDiffers // not bound to its vNode yet
	}
	if !statusInSync(tp, sp) {
		return resources.MismatchStatusDiffers
	}
	return resources.InSync
}

// contentInSync reports what !NeedsUpdate(Desired(c, t, s.Namespace, s), s) reports, building
// only the desired metadata (NeedsUpdate compares labels and annotations; the tenant images
// are among the annotations as AnnotationSyncedImages), not the desired spec
// (TestContentInSyncMatchesNeedsUpdate keeps the two in step).
func contentInSync(c *tenant.Cluster, t, s *corev1.Pod) bool {
	want := &corev1.Pod{ObjectMeta: desiredMeta(c, t, s.Namespace, s)}
	return !NeedsUpdate(want, s)
}

// statusInSync reports what equality.Semantic.DeepEqual(DesiredStatus(t, s), &t.Status)
// reports. It builds the desired status as a shallow copy (building its conditions only when
// a condition's observedGeneration must change or either Pod has a tenant-owned condition)
// and tries reflect.DeepEqual first, which implies semantic equality and is several times
// cheaper; only when that fails is the semantic comparison (nil equals empty, times compared
// as instants) run.
func statusInSync(t, s *corev1.Pod) bool {
	want := s.Status
	want.QOSClass = t.Status.QOSClass
	want.ObservedGeneration = t.Status.ObservedGeneration
	want.NominatedNodeName = ""
	if conditionsNeedBuilding(t, s) {
		want.Conditions = desiredConditions(t, s)
	}
	if want.Phase != t.Status.Phase || want.PodIP != t.Status.PodIP || len(want.Conditions) != len(t.Status.Conditions) {
		return false
	}
	if reflect.DeepEqual(&want, &t.Status) {
		return true
	}
	return equality.Semantic.DeepEqual(&want, &t.Status)
}

// conditionsNeedBuilding reports whether the desired conditions of t given s differ from s's
// own list: a tenant-owned condition in either, or a condition whose observedGeneration must
// be t's.
func conditionsNeedBuilding(t, s *corev1.Pod) bool {
	for _, tc := range t.Status.Conditions {
		if TenantOwned(tc.Type) {
			return true
		}
	}
	for _, sc := range s.Status.Conditions {
		if TenantOwned(sc.Type) {
			return true
		}
		var og int64
		if tc := findCondition(t.Status.Conditions, sc.Type); tc != nil {
			og = tc.ObservedGeneration
		}
		if sc.ObservedGeneration != og {
			return true
		}
	}
	return false
}
