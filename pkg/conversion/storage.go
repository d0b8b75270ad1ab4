package conversion

import (
	"crypto/sha256"
	"encoding/hex"
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
