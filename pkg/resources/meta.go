package resources

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// DesiredMeta returns the metadata of the super copy of tenant object tObj in superNS: same
// name, the tenant's labels (the syncer owns a super object's labels), the super object's
// existing annotations existingAnn (nil when creating) overlaid with the tenant's, and the
// ownership stamps.
// Owner references, finalizers and managed fields are never copied: tenant UIDs mean nothing
// in the super cluster.
func DesiredMeta(c *tenant.Cluster, tObj metav1.Object, superNS string, existingAnn map[string]string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{
		Name:        tObj.GetName(),
		Namespace:   superNS,
		Labels:      CopyLabels(tObj.GetLabels()),
		Annotations: MergeAnnotations(existingAnn, withoutLastApplied(tObj.GetAnnotations())),
	}
	conversion.Stamp(&m, Owner(c, tObj))
	return m
}

// MetaEqual reports whether existing has desired's labels exactly and desired's annotations
// (extra annotations on existing, added by super-cluster controllers, are allowed).
func MetaEqual(desired, existing metav1.Object) bool {
	return MapsEqual(desired.GetLabels(), existing.GetLabels()) &&
		SubsetEqual(desired.GetAnnotations(), existing.GetAnnotations())
}

// withoutLastApplied drops kubectl's last-applied-configuration annotation: it describes the
// tenant object, can be large, and would make a super object's own `kubectl apply` diff lie.
func withoutLastApplied(m map[string]string) map[string]string {
	if _, ok := m["kubectl.kubernetes.io/last-applied-configuration"]; !ok {
		return m
	}
	out := CopyMap(m)
	delete(out, "kubectl.kubernetes.io/last-applied-configuration")
	return out
}

// CopyResourceList returns a deep copy of a resource list (nil for an empty one).
func CopyResourceList(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 {
		return nil
	}
	out := make(corev1.ResourceList, len(l))
	for k, v := range l {
		out[k] = v.DeepCopy()
	}
	return out
}
