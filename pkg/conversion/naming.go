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
// tenantName with UID tenantUID: SuperNamespacePrefix + ns when that fits in 63 characters,
// otherwise its first 54 characters (trailing '-' and '.' dropped), "-" and the first 8 hex
// digits of sha256 of the uncut name. The result is a valid namespace name of at most 63
// characters provided tenantName and ns are valid DNS labels.
//
// The mapping cannot be injective within one tenant: there are more namespace names than
// names of at most 63 characters that start with the tenant's prefix. Two tenant namespaces of
// one tenant meet when a cut name equals another namespace's uncut name (that namespace's name
// is the tail of the cut form, so it ends in "-" and 8 hex digits and its uncut name is 63
// characters or less) or when two cut names share their first 54 characters and their hash
// (32 bits, which a tenant can search for). The reconcilers detect this with
// HoldsOtherNamespace: the super namespace records the tenant namespace it holds, the first
// one keeps it and the other is refused.
//
// Between tenants, a name starts with the tenant's whole prefix whenever len(tenantName) <= 47
// (the cut at 54 keeps "<tenant>-<6 hex>"): two tenants meet only when one tenant's name is
// "<other tenant>-<6 hex of the other's UID>" or starts with "<other tenant>-<6 hex>-". Longer
// tenant names lose (part of) the tenant hash in cut forms and are then apart only by the
// 32-bit hash. Super objects record the Tenant UID (OwnedByTenant), so a meeting of two tenants
// is refused as not owned; it never mixes their objects.
func SuperNamespace(tenantName, tenantUID, ns string) string {
	full := SuperNamespacePrefix(tenantName, tenantUID) + ns
	if len(full) <= MaxNamespaceLength {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	cut := strings.TrimRight(full[:cutLength], "-.")
	return cut + "-" + hex.EncodeToString(sum[:])[:8]
}
