package conversion

import (
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Interning of the strings of cached objects.
//
// A decoded object owns a copy of every string in it, so the syncer's caches hold as many
// copies of "tenancy.vcsyncer.io/namespace", of a namespace's name or of "PodScheduled" as
// they hold Pods. The informer transforms replace the strings that repeat across objects
// with one canonical copy (the unique package: weak, so a string no cached object uses any
// more is collected). Strings that are unique per object (names, UIDs, resourceVersions,
// timestamps, IPs of Pods) are left alone: interning them would only add a table entry.

func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// internedAnnotationValues are the annotations whose values repeat across objects: the
// tenant's name and UID, the tenant namespace, and the syncer's records of synced keys and
// images.
var internedAnnotationValues = map[string]bool{
	AnnotationTenant: true, AnnotationTenantUID: true, AnnotationNamespace: true,
	Domain + "/synced-labels": true, Domain + "/synced-annotations": true, Domain + "/synced-images": true,
}

// InternMeta replaces, in place, the repeating strings of m with canonical copies: the
// namespace, generateName, label keys and values, annotation keys (and the values of the
// annotations in internedAnnotationValues), and owner references' API versions and kinds.
func InternMeta(m *metav1.ObjectMeta) {
	m.Namespace = intern(m.Namespace)
	m.GenerateName = intern(m.GenerateName)
	m.Labels = internMap(m.Labels, func(string) bool { return true })
	m.Annotations = internMap(m.Annotations, func(k string) bool { return internedAnnotationValues[k] })
	for i := range m.OwnerReferences {
		m.OwnerReferences[i].APIVersion = intern(m.OwnerReferences[i].APIVersion)
		m.OwnerReferences[i].Kind = intern(m.OwnerReferences[i].Kind)
	}
}

// internMap returns m with interned keys, and interned values where values(key) holds. The
// map is rebuilt at its exact size (a decoded map may have grown past it); nil stays nil.
func internMap(m map[string]string, values func(string) bool) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if values(k) {
			v = intern(v)
		}
		out[intern(k)] = v
	}
	return out
}

// InternObject interns the repeating strings of a cached object with standard metadata
// (InternMeta); others are left alone. Only metadata is interned: the rest of a cached Pod is
// kept encoded (podcache.Pod), and other kinds' specs hold few strings that repeat.
func InternObject(obj any) {
	if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
		if m, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
			InternMeta(m)
		}
	}
}
