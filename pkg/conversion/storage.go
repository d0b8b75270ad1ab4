package conversion

import (
	"crypto/sha256"
	"encoding/hex"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"strings"
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

// ConfineStaticBinding restricts a super claim spec whose storage class is "" (a claim that binds
// existing PersistentVolumes only, never a provisioned one) to PersistentVolumes
// labelled LabelTenantUID=tenantUID, by adding that label to spec.selector.matchLabels (the
// tenant's own selector is kept; a tenant value for the key is overwritten). Without it, such a
// claim binds any Available super PV without a class — including one an admin made for another
// tenant. Claims with a class are left alone: a selector would stop dynamic provisioning, and
// the PVs of a class are that class's shared pool. Super-cluster admins give static PVs meant
// for a tenant that label (a preset spec.volumeName is confined by SuperVolumeName instead).
func ConfineStaticBinding(spec *corev1.PersistentVolumeClaimSpec, tenantUID string) {
	// An unset class is left alone too: the super cluster's default class (admission, or the
	// PV controller's retroactive assignment) makes it a provisioned claim, and a selector would
	// stop provisioning.
	if spec.StorageClassName == nil || *spec.StorageClassName != "" {
		return
	}
	if spec.Selector == nil {
		spec.Selector = &metav1.LabelSelector{}
	}
	if spec.Selector.MatchLabels == nil {
		spec.Selector.MatchLabels = map[string]string{}
	}
	spec.Selector.MatchLabels[LabelTenantUID] = tenantUID
}
