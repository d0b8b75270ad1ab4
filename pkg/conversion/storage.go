package conversion

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Storage labels and annotations.
const (
	// AnnotationSuperName on a tenant object the syncer created from a super object (a
	// tenant PersistentVolume) holds the super object's name.
	AnnotationSuperName = "tenancy.vcsyncer.io/super-name"
)

// MaxVolumeNameLength is the longest PersistentVolume name the syncer maps to (a DNS
// subdomain, RFC 1123).
const MaxVolumeNameLength = 253

// SuperVolumeName returns the super PersistentVolume that a tenant PersistentVolumeClaim
// naming volume (spec.volumeName, a PV the tenant does not have) is bound to:
// "<tenant>-<6 hex of sha256(tenant UID)>-<volume>", the same prefix as the tenant's super
// namespaces. PV names are cluster-wide in the super cluster, so a tenant can only ever
// ask for PVs in its own part of the name space, which super-cluster admins create for it;
// it cannot name another tenant's volume or an unrelated super PV. Results longer than 253
// characters are cut and suffixed with 8 hex digits of sha256 of the full name.
func SuperVolumeName(tenantName, tenantUID, volume string) string {
	full := SuperNamespacePrefix(tenantName, tenantUID) + volume
	if len(full) <= MaxVolumeNameLength {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	cut := strings.TrimRight(full[:MaxVolumeNameLength-9], "-.")
	return cut + "-" + hex.EncodeToString(sum[:])[:8]
}

// IsPublic reports whether a super object's labels mark it public (LabelPublic=true).
func IsPublic(labels map[string]string) bool { return labels[LabelPublic] == PublicValue }

// Claim class rules, read from k8s.io/component-helpers/storage/volume and kube-controller-manager's
// PV controller (pkg/controller/volume/persistentvolume).
const (
	// AnnotationBetaStorageClass is the legacy claim class annotation. When present (even
	// with value ""), it is the claim's class and spec.storageClassName is ignored
	// (GetPersistentVolumeClaimClass, used by the PV controller and the scheduler's volume
	// binder).
	AnnotationBetaStorageClass = corev1.BetaStorageClassAnnotation
	// NoProvisioner is the provisioner of StorageClasses that never provision (local and
	// other pre-created volumes): their claims bind existing PVs only.
	NoProvisioner = "kubernetes.io/no-provisioner"
)

// ClaimClass returns the StorageClass a claim with annotations and spec asks for, as the PV
// controller reads it: the AnnotationBetaStorageClass annotation if present (any value,
// "" included), else spec.storageClassName. set is false when the claim names neither
// (PersistentVolumeClaimHasClass is false): the DefaultStorageClass admission plugin, or
// the PV controller retroactively, gives it the cluster's default class if there is one,
// and until then it binds PVs without a class.
func ClaimClass(annotations map[string]string, spec *corev1.PersistentVolumeClaimSpec) (class string, set bool) {
	if v, ok := annotations[AnnotationBetaStorageClass]; ok {
		return v, true
	}
	if spec.StorageClassName != nil {
		return *spec.StorageClassName, true
	}
	return "", false
}

// SuperClasses is what claim conversion knows of the super cluster's StorageClasses (all of
// them, public or not).
type SuperClasses struct {
	// Default is the class the super cluster's DefaultStorageClass admission plugin gives a
	// claim without a class: of the classes annotated
	// storageclass.kubernetes.io/is-default-class=true (or the beta annotation), the newest,
	// then the first by name (GetDefaultClass). "" when the super cluster has none.
	Default string
	// Provisions reports whether a class exists in the super cluster and can provision
	// volumes (its provisioner is not NoProvisioner). nil means no class is known to
	// provision, so every claim is confined to the tenant's static PVs.
	Provisions func(class string) bool
	// Lookup reports whether a class exists in the super cluster and whether it is public
	// (labelled LabelPublic=true). nil means no class is known.
	Lookup func(class string) (exists, public bool)
}

// ClassFor returns the class the super copy of a claim with annotations and spec is created
// with: the class the claim asks for (ClaimClass), or, for a claim without a class, the
// super default class, or "" (bind existing PVs only) when the super cluster has none.
func (sc SuperClasses) ClassFor(annotations map[string]string, spec *corev1.PersistentVolumeClaimSpec) string {
	if class, ok := ClaimClass(annotations, spec); ok {
		return class
	}
	return sc.Default
}

// Confinement turns a copy of a tenant claim (or claim template) into its super form.
type Confinement struct {
	// TenantName and TenantUID name the tenant (its UID labels the static PVs made for it).
	TenantName, TenantUID string
	// Namespace is the tenant namespace of the claim (of the Pod, for a template).
	Namespace string
	// Classes describes the super cluster's StorageClasses.
	Classes SuperClasses
}

// Claim converts spec, a copy of the spec of a tenant claim whose (tenant) annotations are
// annotations, into the spec of its super copy:
//
//   - spec.storageClassName is set to SuperClasses.ClassFor, so the super claim states its
//     class in the field only (callers drop AnnotationBetaStorageClass from the super
//     metadata) and the super PV controller and this confinement read the same class; a claim
//     without a class is given the super default class explicitly, or "" when there is none
//     (it would bind PVs without a class, as a claim with "");
//   - a claim that binds existing PVs only (class "", a class the super cluster does not have,
//     or one whose provisioner is NoProvisioner) or that has a selector (a claim with a
//     selector is never provisioned) gets LabelTenantUID=TenantUID in
//     spec.selector.matchLabels (the tenant's own selector is kept; a tenant value for the key
//     is overwritten), so it binds only PVs super-cluster admins labelled for this tenant,
//     never another tenant's. A claim of a provisioning class without a selector is left
//     unconfined: a selector would stop its provisioning. Such a claim can still bind an
//     Available PV of its class that was made by hand, so static PVs for one tenant must not
//     carry a provisioning class;
//   - a spec.dataSourceRef naming the claim's own namespace loses the namespace (the super
//     claim's namespace is the mapped one; no namespace means the claim's own). Callers
//     refuse other data sources first (policy.ClaimDataSources).
func (cf Confinement) Claim(annotations map[string]string, spec *corev1.PersistentVolumeClaimSpec) {
	class := cf.Classes.ClassFor(annotations, spec)
	spec.StorageClassName = &class
	if r := spec.DataSourceRef; r != nil && r.Namespace != nil && *r.Namespace == cf.Namespace {
		r.Namespace = nil
	}
	provisions := class != "" && cf.Classes.Provisions != nil && cf.Classes.Provisions(class)
	if provisions && spec.Selector == nil {
		return
	}
	if spec.Selector == nil {
		spec.Selector = &metav1.LabelSelector{}
	}
	if spec.Selector.MatchLabels == nil {
		spec.Selector.MatchLabels = map[string]string{}
	}
	spec.Selector.MatchLabels[LabelTenantUID] = cf.TenantUID
}

// Template converts t, a copy of a generic ephemeral volume's claim template in a tenant Pod,
// into the template of the super Pod, from which the super cluster's ephemeral-volume
// controller creates the super claim (copying the template's labels and annotations onto it):
// a preset spec.volumeName is mapped into the tenant's part of the PV name space
// (SuperVolumeName); labels and annotations in the syncer's domain (Domain, the ownership
// stamps among them), claim binding annotations (IsClaimBindingAnnotation) and
// AnnotationBetaStorageClass are dropped; the spec is converted as by Claim.
func (cf Confinement) Template(t *corev1.PersistentVolumeClaimTemplate) {
	if t.Spec.VolumeName != "" {
		t.Spec.VolumeName = SuperVolumeName(cf.TenantName, cf.TenantUID, t.Spec.VolumeName)
	}
	cf.Claim(t.Annotations, &t.Spec)
	t.Labels = withoutKeys(t.Labels, func(k string) bool { return strings.HasPrefix(k, Domain+"/") })
	t.Annotations = withoutKeys(t.Annotations, func(k string) bool {
		return strings.HasPrefix(k, Domain+"/") || IsClaimBindingAnnotation(k) || k == AnnotationBetaStorageClass
	})
}

// IsClaimBindingAnnotation reports annotation keys that a cluster's PV controller, scheduler
// or provisioner writes on a claim to record binding and provisioning (pv.kubernetes.io/*,
// volume.kubernetes.io/*, volume.beta.kubernetes.io/storage-provisioner). They describe one
// cluster's binding and are never copied between tenant and super.
func IsClaimBindingAnnotation(k string) bool {
	return strings.HasPrefix(k, "pv.kubernetes.io/") || strings.HasPrefix(k, "volume.kubernetes.io/") ||
		k == "volume.beta.kubernetes.io/storage-provisioner"
}

// withoutKeys returns m without the keys drop reports: m itself when there are none, else a
// new map (nil when empty).
func withoutKeys(m map[string]string, drop func(string) bool) map[string]string {
	n := 0
	for k := range m {
		if drop(k) {
			n++
		}
	}
	if n == 0 {
		return m
	}
	if n == len(m) {
		return nil
	}
	out := make(map[string]string, len(m)-n)
	for k, v := range m {
		if !drop(k) {
			out[k] = v
		}
	}
	return out
}
