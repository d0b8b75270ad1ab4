package conversion

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxNamespaceLength is the longest valid namespace name (an RFC 1123 DNS label).
const MaxNamespaceLength = 63

// cutLength is where an over-long super namespace is cut before its hash suffix is added:
// 54 + len("-") + 8 hex = 63.
const cutLength = 54

// TenantHash returns the first 6 hex digits of sha256(tenantUID).
func TenantHash(tenantUID string) string {
	sum := sha256.Sum256([]byte(tenantUID))
	return hex.EncodeToString(sum[:])[:6]
}

// SuperNamespacePrefix returns "<tenant>-<TenantHash(uid)>-", the prefix of every super
// namespace of the tenant (before any cut of over-long names).
func SuperNamespacePrefix(tenantName, tenantUID string) string {
	return tenantName + "-" + TenantHash(tenantUID) + "-"
}

// SuperNamespace returns the super-cluster namespace for namespace ns of the tenant named
// tenantName with UID tenantUID. The result is a valid namespace name of at most 63
// characters provided tenantName and ns are valid DNS labels.
func SuperNamespace(tenantName, tenantUID, ns string) string {
	full := SuperNamespacePrefix(tenantName, tenantUID) + ns
	if len(full) <= MaxNamespaceLength {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	cut := strings.TrimRight(full[:cutLength], "-.")
	return cut + "-" + hex.EncodeToString(sum[:])[:8]
}
