package conversion

import "strings"

// NamespaceLabelDomain is the label domain under which a tenant namespace's labels reach its
// super namespace: a subdomain of Domain, so no super-cluster controller, NetworkPolicy or
// webhook that selects namespaces by a tenant's keys ("name", "istio-injection",
// "pod-security.kubernetes.io/enforce") acts on them.
const NamespaceLabelDomain = "ns." + Domain

// LabelUnmappedNamespaceKey is a label key no super namespace carries: a selector term on a
// tenant namespace label key that SuperNamespaceLabelKey cannot map is translated to a term on
// this key, which selects what a term on a key no namespace has selects (In and Exists
// nothing, NotIn and DoesNotExist everything).
const LabelUnmappedNamespaceKey = Domain + "/unmapped-namespace-label"

// maxLabelPrefix is the longest prefix of a label key (a DNS-1123 subdomain).
const maxLabelPrefix = 253

// SuperNamespaceLabelKey returns the key under which the tenant namespace label k is put on
// the super namespace: "ns.tenancy.vcsyncer.io/<name>" for a plain key <name>, and
// "<prefix>.ns.tenancy.vcsyncer.io/<name>" for "<prefix>/<name>" ("team" →
// "ns.tenancy.vcsyncer.io/team", "example.com/team" → "example.com.ns.tenancy.vcsyncer.io/team").
// The value is the tenant's. Distinct keys map to distinct keys. ok is false when the mapped
// prefix would be longer than a label key's prefix may be (a tenant prefix over 229
// characters): such a label does not reach the super namespace.
func SuperNamespaceLabelKey(k string) (key string, ok bool) {
	prefix, name, found := strings.Cut(k, "/")
	if !found {
		return NamespaceLabelDomain + "/" + k, true
	}
	p := prefix + "." + NamespaceLabelDomain
	if len(p) > maxLabelPrefix {
		return "", false
	}
	return p + "/" + name, true
}

// IsSuperNamespaceLabelKey reports whether k is in the form SuperNamespaceLabelKey returns
// (its prefix is NamespaceLabelDomain or ends in "."+NamespaceLabelDomain): such keys on a
// super namespace are the syncer's mapping of the tenant's labels.
func IsSuperNamespaceLabelKey(k string) bool {
	prefix, _, found := strings.Cut(k, "/")
	return found && (prefix == NamespaceLabelDomain || strings.HasSuffix(prefix, "."+NamespaceLabelDomain))
}
