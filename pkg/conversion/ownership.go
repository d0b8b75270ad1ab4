package conversion

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Labels and annotations the syncer writes on every super-cluster object it owns.
const (
	// Domain prefixes every label and annotation key the syncer writes ("<Domain>/<name>").
	// Tenant-supplied keys in this domain are never copied to super objects.
	Domain = "tenancy.vcsyncer.io"
	// LabelManagedBy marks super objects created by the syncer; informers on the super
	// cluster select on it so the syncer never caches (or touches) objects it does not own.
	LabelManagedBy = "tenancy.vcsyncer.io/managed-by"
	// ManagedByValue is the value of LabelManagedBy.
	ManagedByValue = "vc-syncer"
	// LabelTenantUID holds the owning Tenant's UID (bounded: 36 characters).
	LabelTenantUID = "tenancy.vcsyncer.io/tenant-uid"

	// AnnotationTenant holds the owning Tenant's name.
	AnnotationTenant = "tenancy.vcsyncer.io/tenant"
	// AnnotationTenantUID holds the owning Tenant's UID.
	AnnotationTenantUID = "tenancy.vcsyncer.io/tenant-uid"
	// AnnotationNamespace holds the tenant namespace of the object (for a super Namespace:
	// the tenant namespace it maps).
	AnnotationNamespace = "tenancy.vcsyncer.io/namespace"
	// AnnotationName holds the tenant object's name.
	AnnotationName = "tenancy.vcsyncer.io/name"
	// AnnotationUID holds the tenant object's UID.
	AnnotationUID = "tenancy.vcsyncer.io/uid"
)

// Owner identifies the tenant object a super object was created from.
type Owner struct {
	Tenant    string // Tenant name
	TenantUID string // Tenant UID
	Namespace string // tenant namespace ("" for cluster-scoped)
	Name      string // tenant object name
	UID       string // tenant object UID
}

// Stamp writes the ownership labels and annotations of o onto meta, keeping its other labels
// and annotations.
func Stamp(meta *metav1.ObjectMeta, o Owner) {
	if meta.Labels == nil {
		meta.Labels = map[string]string{}
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Labels[LabelManagedBy] = ManagedByValue
	meta.Labels[LabelTenantUID] = o.TenantUID
	meta.Annotations[AnnotationTenant] = o.Tenant
	meta.Annotations[AnnotationTenantUID] = o.TenantUID
	meta.Annotations[AnnotationNamespace] = o.Namespace
	meta.Annotations[AnnotationName] = o.Name
	meta.Annotations[AnnotationUID] = o.UID
}

// OwnerOf reads the ownership annotations of a super object. ok is false when the object is
// not managed by the syncer (label missing) or its annotations are incomplete.
func OwnerOf(meta metav1.Object) (o Owner, ok bool) {
	if meta.GetLabels()[LabelManagedBy] != ManagedByValue {
		return Owner{}, false
	}
	a := meta.GetAnnotations()
	o = Owner{
		Tenant:    a[AnnotationTenant],
		TenantUID: a[AnnotationTenantUID],
		Namespace: a[AnnotationNamespace],
		Name:      a[AnnotationName],
		UID:       a[AnnotationUID],
	}
	if o.Tenant == "" || o.TenantUID == "" || o.Name == "" || meta.GetLabels()[LabelTenantUID] != o.TenantUID {
		return Owner{}, false
	}
	return o, true
}

// OwnedByTenant reports whether the super object is managed by the syncer for the tenant
// with the given UID. Writers call it before updating or deleting an existing super object.
func OwnedByTenant(meta metav1.Object, tenantUID string) bool {
	o, ok := OwnerOf(meta)
	return ok && o.TenantUID == tenantUID
}

// IsOwnKey reports whether a label or annotation key is one the syncer writes for ownership.
func IsOwnKey(k string) bool {
	switch k {
	case LabelManagedBy, LabelTenantUID, AnnotationTenant, AnnotationNamespace, AnnotationName, AnnotationUID:
		return true
	}
	return false
}

// HeldNamespace returns the tenant namespace that super object obj belongs to, from its
// ownership stamps: AnnotationNamespace, or for a super Namespace stamped without it, its
// AnnotationName (both name the tenant namespace it maps). ok is false when obj is not managed
// by the syncer (OwnerOf).
func HeldNamespace(obj metav1.Object) (tenantUID, ns string, ok bool) {
	o, ok := OwnerOf(obj)
	if !ok {
		return "", "", false
	}
	ns = o.Namespace
	if ns == "" && obj.GetNamespace() == "" {
		ns = o.Name
	}
	return o.TenantUID, ns, true
}

// HoldsOtherNamespace reports whether super object obj (a super Namespace, or an object in a
// super namespace) at the place tenant namespace ns maps to belongs to the tenant with UID
// tenantUID but to another of its tenant namespaces: two tenant namespaces whose
// SuperNamespace names collide. Objects of ns must then neither be synced there nor delete
// what is there. An object of another tenant or not the syncer's gives false (OwnedByTenant
// decides about those).
func HoldsOtherNamespace(obj metav1.Object, tenantUID, ns string) bool {
	uid, held, ok := HeldNamespace(obj)
	return ok && uid == tenantUID && held != ns
}

// LabelRefused is the label the syncer sets on a tenant Service that has no super copy because
// it was refused (by the tenant's policy, the super cluster, or its quota); its value is the
// reason of the Service's tenancy.vcsyncer.io/Synced=False condition. The syncer removes it
// once the Service has a super copy. It is written in the tenant (never on super objects), so
// that the tenant's DNS can leave refused Services unanswered: CoreDNS's kubernetes plugin with
// `labels !tenancy.vcsyncer.io/refused` neither answers such a Service's name nor serves its
// EndpointSlices (the EndpointSlice controller copies a Service's labels to its slices).
const LabelRefused = Domain + "/refused"
