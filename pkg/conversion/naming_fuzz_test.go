package conversion

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// label turns fuzz input into a valid DNS label (RFC 1123) of at most 63 characters, so the
// fuzzer spends its time on names the apiserver accepts: every byte is mapped onto
// [a-z0-9-] (valid ones are kept), the first and last characters onto [a-z0-9].
func label(s string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-"
	if len(s) > 63 {
		s = s[:63]
	}
	if s == "" {
		return "a"
	}
	b := []byte(s)
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			b[i] = alphabet[int(c)%len(alphabet)]
		}
	}
	if b[0] == '-' {
		b[0] = 'a'
	}
	if b[len(b)-1] == '-' {
		b[len(b)-1] = '0'
	}
	return string(b)
}

// checkName fails unless name is a valid namespace name that starts with the tenant's whole
// prefix whenever the tenant name has at most 47 characters (the cut at 54 keeps it).
func checkName(t *testing.T, tenantName, uid, ns, name string) {
	t.Helper()
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		t.Fatalf("SuperNamespace(%q, %q, %q) = %q: not a valid namespace name: %v", tenantName, uid, ns, name, errs)
	}
	if prefix := SuperNamespacePrefix(tenantName, uid); len(tenantName) <= 47 && !strings.HasPrefix(name, prefix) {
		t.Fatalf("SuperNamespace(%q, %q, %q) = %q lost the tenant prefix %q", tenantName, uid, ns, name, prefix)
	}
}

// FuzzNamespacesOfOneTenant: within one tenant, two different namespaces either map to
// different super namespaces, or the collision is detected by the predicate the reconcilers use
// (HoldsOtherNamespace on the super namespace written for either one). twin replaces ns2 by the
// namespace whose uncut name is ns1's cut name, so collisions are tried on every run.
func FuzzNamespacesOfOneTenant(f *testing.F) {
	const uid = "0b5f9d1e-3c55-4a36-9b58-5d2f0a0d6c11"
	f.Add("team-a", uid, strings.Repeat("x", 63), "default", true)
	f.Add("team-a", uid, strings.Repeat("x", 63), strings.Repeat("x", 62)+"y", false)
	f.Add("t", "u", "default", "kube-system", false)
	f.Add(strings.Repeat("t", 47), uid, strings.Repeat("n", 20), "", true)
	f.Add(strings.Repeat("t", 48), uid, strings.Repeat("n", 20), "", true)
	f.Add(strings.Repeat("t", 55), uid, "a", "b", false)
	f.Add(strings.Repeat("t", 63), uid, "a", "b", true)
	f.Add("tenant", uid, strings.Repeat("a", 40)+"-"+strings.Repeat("b", 22), "", true)
	f.Fuzz(func(t *testing.T, tenantName, uid, ns1, ns2 string, twin bool) {
		tenantName, ns1, ns2 = label(tenantName), label(ns1), label(ns2)
		if uid == "" {
			uid = "u" // the apiserver gives every Tenant a UID; OwnerOf refuses an empty one
		}
		if twin {
			if tw, ok := twinOf(tenantName, uid, ns1); ok {
				ns2 = tw
			}
		}
		m1, m2 := SuperNamespace(tenantName, uid, ns1), SuperNamespace(tenantName, uid, ns2)
		checkName(t, tenantName, uid, ns1, m1)
		checkName(t, tenantName, uid, ns2, m2)
		if ns1 == ns2 {
			if m1 != m2 || HoldsOtherNamespace(superNamespaceAs(tenantName, uid, ns1), uid, ns2) {
				t.Fatalf("%q: mapped %q and %q, or counted as a collision with itself", ns1, m1, m2)
			}
			return
		}
		if m1 != m2 {
			return
		}
		if !HoldsOtherNamespace(superNamespaceAs(tenantName, uid, ns1), uid, ns2) ||
			!HoldsOtherNamespace(superNamespaceAs(tenantName, uid, ns2), uid, ns1) {
			t.Fatalf("tenant %q: %q and %q both map to %q and the collision is not detected", tenantName, ns1, ns2, m1)
		}
		prefix := SuperNamespacePrefix(tenantName, uid)
		if len(prefix+ns1) <= MaxNamespaceLength && len(prefix+ns2) <= MaxNamespaceLength {
			t.Fatalf("tenant %q: uncut names %q and %q collide", tenantName, ns1, ns2)
		}
	})
}

// FuzzNamespacesOfTwoTenants: two different tenants (different UIDs) never map two namespaces
// to the same super namespace, except in the cases naming.go documents: one tenant's name is
// "<other>-<other's 6 hex>" or starts with "<other>-<other's 6 hex>-" (a choice of the super
// cluster's admins, who name Tenants), or a tenant name is longer than 47 characters (the cut
// drops part of its hash). Even then the super namespace written for one is not owned by the
// other (OwnedByTenant), which the reconcilers refuse as ErrNotOwned. align builds the first
// case from the inputs: bit 0 names tenant B after A's prefix, bit 1 picks A's namespace that
// spells out the rest of B's prefix and B's namespace.
func FuzzNamespacesOfTwoTenants(f *testing.F) {
	f.Add("a", "uid-a", "b", "uid-b", "b-c", "c", uint8(0))
	f.Add("a", "uid-a", "", "uid-b", "", "c", uint8(1))
	f.Add("a", "uid-a", "", "uid-b", "", "c", uint8(3))
	f.Add("a", "uid-a", "x", "uid-b", "", "default", uint8(3))
	f.Add(strings.Repeat("t", 60)+"a", "uid-a", strings.Repeat("t", 60)+"b", "uid-b", "default", "default", uint8(0))
	f.Add(strings.Repeat("t", 47), "uid-a", strings.Repeat("t", 47), "uid-b", strings.Repeat("n", 63), strings.Repeat("n", 63), uint8(0))
	f.Add("same", "uid-1", "same", "uid-2", "ns", "ns", uint8(0))
	f.Fuzz(func(t *testing.T, tenantA, uidA, tenantB, uidB, nsA, nsB string, align uint8) {
		if uidA == "" {
			uidA = "a" // the apiserver gives every Tenant a UID; OwnerOf refuses an empty one
		}
		if uidB == "" {
			uidB = "b"
		}
		if uidA == uidB {
			return // one tenant (UIDs are unique)
		}
		tenantA, nsB = label(tenantA), label(nsB)
		if align&1 != 0 {
			p := tenantA + "-" + TenantHash(uidA)
			if tenantB != "" {
				p += "-" + label(tenantB)
			}
			tenantB = label(p)
		} else {
			tenantB = label(tenantB)
		}
		if pa, pb := SuperNamespacePrefix(tenantA, uidA), SuperNamespacePrefix(tenantB, uidB); align&2 != 0 && strings.HasPrefix(pb, pa) {
			nsA = label(strings.TrimPrefix(pb+nsB, pa)) // A's namespace spelling out B's prefix
		} else if align&2 != 0 {
			nsA = label(TenantHash(uidB) + "-" + nsB)
		} else {
			nsA = label(nsA)
		}
		mA, mB := SuperNamespace(tenantA, uidA, nsA), SuperNamespace(tenantB, uidB, nsB)
		checkName(t, tenantA, uidA, nsA, mA)
		checkName(t, tenantB, uidB, nsB, mB)
		if mA != mB {
			return
		}
		if OwnedByTenant(superNamespaceAs(tenantA, uidA, nsA), uidB) || HoldsOtherNamespace(superNamespaceAs(tenantA, uidA, nsA), uidB, nsB) {
			t.Fatalf("tenant %q's super namespace %q counts as tenant %q's", tenantA, mA, tenantB)
		}
		if len(tenantA) > 47 || len(tenantB) > 47 {
			return // documented: apart only by the 32-bit hash of the cut form
		}
		if !prefixedBy(tenantB, tenantA, uidA) && !prefixedBy(tenantA, tenantB, uidB) {
			t.Fatalf("tenants %q (%s) and %q (%s) meet at %q (%q, %q) without the documented name relation",
				tenantA, TenantHash(uidA), tenantB, TenantHash(uidB), mA, nsA, nsB)
		}
	})
}

// prefixedBy reports whether tenant name b is "<a>-<hash of a's UID>" or starts with
// "<a>-<hash>-".
func prefixedBy(b, a, uidA string) bool {
	p := a + "-" + TenantHash(uidA)
	return b == p || strings.HasPrefix(b, p+"-")
}
