package resources

import (
	"reflect"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
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
// cluster over a key); the tenant's labels and annotations that tenant c's metadata allowlist
// passes (see AllowedMeta), plus the keys alsoAllowed names (keys a kind's translation needs
// whatever the allowlist says); the AnnotationSynced* records; and the ownership stamps. Owner
// references, finalizers and managed fields are never copied: tenant UIDs mean nothing in the
// super cluster. Callers report the keys left out with ReportDroppedMeta.
//
// A super object written before the AnnotationSyncedLabels record existed is treated as
// having all its labels from the tenant (the syncer used to own every label) and none of its
// annotations (it used to keep every annotation).
func DesiredMeta(c *tenant.Cluster, tObj metav1.Object, superNS string, existing metav1.Object, alsoAllowed ...string) metav1.ObjectMeta {
	var exLabels, exAnn map[string]string
	if !isNil(existing) {
		exLabels, exAnn = existing.GetLabels(), existing.GetAnnotations()
	}
	m := metav1.ObjectMeta{Name: tObj.GetName(), Namespace: superNS}
	labels, ann := AllowedMeta(c.Policy(), tObj.GetLabels(), tObj.GetAnnotations(), alsoAllowed...)
	m.Labels, m.Annotations = MergeSynced(exLabels, exAnn, labels, ann)
	conversion.Stamp(&m, Owner(c, tObj))
	return m
}

// AllowedMeta returns the tenant labels and annotations (new maps, nil when empty) that may be
// copied to a super object under policy pol: keys pol.Metadata() allows (policy.KeyAllowed)
// and keys in alsoAllowed, never silently dropped keys (IsSilentKey). The inputs are not
// modified.
func AllowedMeta(pol *policy.Effective, labels, annotations map[string]string, alsoAllowed ...string) (map[string]string, map[string]string) {
	md := pol.Metadata()
	keep := func(m map[string]string, prefixes []string) map[string]string {
		var out map[string]string
		for k, v := range m {
			if IsSilentKey(k) || (!policy.KeyAllowed(prefixes, k) && !slices.Contains(alsoAllowed, k)) {
				continue
			}
			if out == nil {
				out = make(map[string]string, len(m))
			}
			out[k] = v
		}
		return out
	}
	return keep(labels, md.AllowedLabelPrefixes), keep(annotations, md.AllowedAnnotationPrefixes)
}

// IsSilentKey reports label and annotation keys that are never copied to a super object and
// never reported as refused, because they are not the tenant's to pass on: every key in the
// syncer's own domain (tenancy.vcsyncer.io/, written on super objects by the syncer only, so a
// tenant can neither forge ownership nor fight the syncer over them), kubectl's
// last-applied-configuration (it describes the tenant object, can be large, and would make a
// super object's own `kubectl apply` diff lie), and kubernetes.io/metadata.name (each
// apiserver sets its own on every namespace).
func IsSilentKey(k string) bool {
	return conversion.IsOwnKey(k) || strings.HasPrefix(k, conversion.Domain+"/") ||
		k == "kubectl.kubernetes.io/last-applied-configuration" || k == corev1.LabelMetadataName
}

// DroppedMetaKeys returns, sorted, the label and annotation keys of tenant object tObj ("label
// <key>", "annotation <key>") that policy pol's metadata allowlist kept out of its super copy
// desired. A key desired carries anyway (set by the kind's own translation, such as an
// EndpointSlice's kubernetes.io/service-name) and silent keys (IsSilentKey) are not listed.
// For a Namespace, a label is kept when desired has it under its mapped key
// (NamespaceLabels), and only labels without one are listed.
func DroppedMetaKeys(pol *policy.Effective, tObj, desired metav1.Object) []string {
	md := pol.Metadata()
	_, isNS := tObj.(*corev1.Namespace)
	var out []string
	collect := func(what string, m, have map[string]string, prefixes []string) {
		for k := range m {
			if _, ok := have[k]; ok || IsSilentKey(k) || (!isNS || what != "label") && policy.KeyAllowed(prefixes, k) {
				continue
			}
			if isNS && what == "label" {
				if mk, ok := conversion.SuperNamespaceLabelKey(k); ok {
					if _, kept := have[mk]; kept {
						continue
					}
				}
			}
			out = append(out, what+" "+k)
		}
	}
	collect("annotation", tObj.GetAnnotations(), desired.GetAnnotations(), md.AllowedAnnotationPrefixes)
	collect("label", tObj.GetLabels(), desired.GetLabels(), md.AllowedLabelPrefixes)
	sort.Strings(out)
	return out
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
