package conversion

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// twinOf returns the literal tenant namespace whose uncut super name equals the cut super name
// of ns (ok false when there is none: ns is not cut, or the tenant prefix does not fit).
func twinOf(tenantName, tenantUID, ns string) (string, bool) {
	mapped := SuperNamespace(tenantName, tenantUID, ns)
	prefix := SuperNamespacePrefix(tenantName, tenantUID)
	if mapped == prefix+ns || !strings.HasPrefix(mapped, prefix) || len(mapped) == len(prefix) {
		return "", false
	}
	twin := mapped[len(prefix):]
	if len(validation.IsDNS1123Label(twin)) > 0 {
		return "", false
	}
	return twin, true
}

// A 63-character tenant namespace is cut to "<first 54>-<8 hex>"; the tenant namespace named
// after the tail of that cut form maps, uncut, to the same super namespace.
func TestTwoNamespacesOfOneTenantMeet(t *testing.T) {
	const tenantName, uid = "team-a", "0b5f9d1e-3c55-4a36-9b58-5d2f0a0d6c11"
	long := strings.Repeat("x", 63)
	twin, ok := twinOf(tenantName, uid, long)
	if !ok {
		t.Fatalf("no twin for %q", long)
	}
	a, b := SuperNamespace(tenantName, uid, long), SuperNamespace(tenantName, uid, twin)
	t.Logf("%q -> %q; %q -> %q", long, a, twin, b)
	if a == b {
		t.Fatalf("tenant namespaces %q and %q both map to %q", long, twin, a)
	}
}
