package resources

import (
	"strings"

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

// withoutLastApplied drops kubectl's last-applied-configuration annotation (it describes the
// tenant object, can be large, and would make a super object's own `kubectl apply` diff lie)
// and every annotation in the syncer's own domain (tenancy.vcsyncer.io/): those on a super
// object are written by the syncer only, so a tenant can neither forge ownership nor fight the
// syncer over them.
func withoutLastApplied(m map[string]string) map[string]string {
	drop := func(k string) bool {
		return k == "kubectl.kubernetes.io/last-applied-configuration" || strings.HasPrefix(k, conversion.Domain+"/")
	}
	found := false
	for k := range m {
		found = found || drop(k)
	}
	if !found {
		return m
	}
	out := CopyMap(m)
	for k := range out {
		if drop(k) {
			delete(out, k)
		}
	}
	return out
}
