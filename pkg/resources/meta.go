package resources

import (
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Annotations recording which label and annotation keys of a super object came from its tenant
// object at the last sync (comma-separated, sorted). They tell the syncer's keys apart from
// keys other super-cluster controllers add (cloud load balancers, webhooks, admins): the
// syncer removes a key the tenant removed, and never touches a key it did not write — the
// same idea as kubectl's last-applied-configuration.
const (
	AnnotationSyncedLabels      = conversion.Domain + "/synced-labels"
	AnnotationSyncedAnnotations = conversion.Domain + "/synced-annotations"
)

// DesiredMeta returns the metadata of the super copy of tenant object tObj in superNS, given
// the current super object existing (nil, or a typed nil pointer, when creating): same name;
// the labels and annotations on existing that the syncer did not copy from the tenant (kept,
// and they win over a tenant key of the same name, so the syncer never fights the super
// cluster over a key); the tenant's other labels and annotations; the AnnotationSynced*
// records; and the ownership stamps. Tenant keys in the syncer's own domain and kubectl's last-applied
// annotation are never copied. Owner references, finalizers and managed fields are never
// copied: tenant UIDs mean nothing in the super cluster.
//
// A super object written before the AnnotationSyncedLabels record existed is treated as
// having all its labels from the tenant (the syncer used to own every label) and none of its
// annotations (it used to keep every annotation).
func DesiredMeta(c *tenant.Cluster, tObj metav1.Object, superNS string, existing metav1.Object) metav1.ObjectMeta {
	var exLabels, exAnn map[string]string
	if !isNil(existing) {
		exLabels, exAnn = existing.GetLabels(), existing.GetAnnotations()
	}
	m := metav1.ObjectMeta{Name: tObj.GetName(), Namespace: superNS}
	m.Labels, m.Annotations = MergeSynced(exLabels, exAnn, CopyLabels(tObj.GetLabels()), withoutLastApplied(tObj.GetAnnotations()))
	conversion.Stamp(&m, Owner(c, tObj))
	return m
}

// MergeSynced returns the labels and annotations of a super object whose current ones are
// exLabels and exAnn (nil when creating) and whose tenant object has tLabels and tAnn (already
// filtered): the keys on the super object that the AnnotationSynced* records (in exAnn) do not
// list are someone else's and kept, and win over a tenant key of the same name; the tenant's
// other keys are set; keys the records list and the tenant no longer has are dropped; the new
// records are added to the returned annotations. Ownership keys (conversion.IsOwnKey) on the
// super object are dropped, for conversion.Stamp to set. New maps; inputs are not modified.
// An object without a labels record is treated as having all its labels from the tenant (the
// syncer used to own every label).
func MergeSynced(exLabels, exAnn, tLabels, tAnn map[string]string) (labels, annotations map[string]string) {
	syncedLabels, recorded := exAnn[AnnotationSyncedLabels]
	prevLabels := keySet(syncedLabels)
	if !recorded {
		prevLabels = keySetOf(exLabels)
	}
	prevAnn := keySet(exAnn[AnnotationSyncedAnnotations])
	labels, annotations = map[string]string{}, map[string]string{}
	for k, v := range exLabels {
		if !prevLabels[k] && !conversion.IsOwnKey(k) {
			labels[k] = v
		}
	}
	syncedL := map[string]string{}
	for k, v := range tLabels {
		if _, taken := labels[k]; taken {
			continue // set in the super cluster by someone else first: theirs, never fought over
		}
		labels[k] = v
		syncedL[k] = v
	}
	for k, v := range exAnn {
		if !prevAnn[k] && !conversion.IsOwnKey(k) && k != AnnotationSyncedLabels && k != AnnotationSyncedAnnotations {
			annotations[k] = v
		}
	}
	syncedA := map[string]string{}
	for k, v := range tAnn {
		if _, taken := annotations[k]; taken {
			continue
		}
		annotations[k] = v
		syncedA[k] = v
	}
	annotations[AnnotationSyncedLabels] = joinKeys(syncedL)
	annotations[AnnotationSyncedAnnotations] = joinKeys(syncedA)
	return labels, annotations
}

// MetaEqual reports whether existing has exactly desired's labels and annotations (desired
// comes from DesiredMeta, which already keeps what other controllers added to existing).
func MetaEqual(desired, existing metav1.Object) bool {
	return MapsEqual(desired.GetLabels(), existing.GetLabels()) &&
		MapsEqual(desired.GetAnnotations(), existing.GetAnnotations())
}

func isNil(o metav1.Object) bool {
	if o == nil {
		return true
	}
	v := reflect.ValueOf(o)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

func keySet(joined string) map[string]bool {
	if joined == "" {
		return nil
	}
	out := map[string]bool{}
	for _, k := range strings.Split(joined, ",") {
		out[k] = true
	}
	return out
}

func keySetOf(m map[string]string) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func joinKeys(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

// DeniedAnnotationPrefixes are annotation key prefixes never copied from a tenant object to the
// super cluster, because super-cluster components act on them with the super cluster's
// authority: cloud workload identity on ServiceAccounts and Pods (a super webhook would give
// the Pod the super cluster's cloud credentials), and CNI plugins choosing networks or IPs.
var DeniedAnnotationPrefixes = []string{
	"eks.amazonaws.com/", "iam.gke.io/", "azure.workload.identity/", "iam.amazonaws.com/",
	"k8s.v1.cni.cncf.io/", "cni.projectcalico.org/", "v1.multus-cni.io/",
}

// withoutLastApplied drops kubectl's last-applied-configuration annotation (it describes the
// tenant object, can be large, and would make a super object's own `kubectl apply` diff lie),
// every annotation in the syncer's own domain (tenancy.vcsyncer.io/): those on a super object
// are written by the syncer only, so a tenant can neither forge ownership nor fight the syncer
// over them; and DeniedAnnotationPrefixes.
func withoutLastApplied(m map[string]string) map[string]string {
	drop := func(k string) bool {
		if k == "kubectl.kubernetes.io/last-applied-configuration" || strings.HasPrefix(k, conversion.Domain+"/") {
			return true
		}
		for _, p := range DeniedAnnotationPrefixes {
			if strings.HasPrefix(k, p) {
				return true
			}
		}
		return false
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
