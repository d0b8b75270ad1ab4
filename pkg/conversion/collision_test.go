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

// superNamespaceAs returns the super Namespace the syncer writes for tenant namespace ns (the
// stamps of resources.DesiredNamespace).
func superNamespaceAs(tenantName, tenantUID, ns string) *metaObj {
	var m metaObj
	m.Name = SuperNamespace(tenantName, tenantUID, ns)
	Stamp(&m.ObjectMeta, Owner{Tenant: tenantName, TenantUID: tenantUID, Namespace: ns, Name: ns, UID: "uid-of-" + ns})
	return &m
}

// A 63-character tenant namespace is cut to "<first 54>-<8 hex>"; the tenant namespace named
// after the tail of that cut form maps, uncut, to the same super namespace. No mapping into 63
// characters can avoid this for every pair (there are more namespace names than super names
// with the tenant's prefix), so the collision must be detected: the super namespace written for
// one of them tells the reconcile of the other that it is held by another namespace.
func TestTwoNamespacesOfOneTenantMeet(t *testing.T) {
	const tenantName, uid = "team-a", "0b5f9d1e-3c55-4a36-9b58-5d2f0a0d6c11"
	long := strings.Repeat("x", 63)
	twin, ok := twinOf(tenantName, uid, long)
	if !ok {
		t.Fatalf("no twin for %q", long)
	}
	a, b := SuperNamespace(tenantName, uid, long), SuperNamespace(tenantName, uid, twin)
	if a != b {
		t.Fatalf("%q -> %q and %q -> %q: the pair no longer collides; update the test", long, a, twin, b)
	}
	for _, pair := range [][2]string{{long, twin}, {twin, long}} {
		holder, other := pair[0], pair[1]
		sns := superNamespaceAs(tenantName, uid, holder)
		if !HoldsOtherNamespace(sns, uid, other) {
			t.Errorf("super namespace of %q: HoldsOtherNamespace(%q) = false; the collision goes undetected", holder, other)
		}
		if HoldsOtherNamespace(sns, uid, holder) {
			t.Errorf("super namespace of %q: HoldsOtherNamespace(%q) = true for its own namespace", holder, holder)
		}
		if HoldsOtherNamespace(sns, "uid-of-another-tenant", other) {
			t.Errorf("HoldsOtherNamespace is true for another tenant (OwnedByTenant decides there)")
		}
	}
}

func TestHeldNamespace(t *testing.T) {
	sns := superNamespaceAs("t", "u", "shop")
	if uid, ns, ok := HeldNamespace(sns); !ok || uid != "u" || ns != "shop" {
		t.Errorf("HeldNamespace = %q, %q, %v; want u, shop, true", uid, ns, ok)
	}
	// A super Namespace stamped without AnnotationNamespace: its AnnotationName names it.
	delete(sns.Annotations, AnnotationNamespace)
	if _, ns, ok := HeldNamespace(sns); !ok || ns != "shop" {
		t.Errorf("HeldNamespace without the namespace stamp = %q, %v; want shop", ns, ok)
	}
	// An object in a super namespace: the namespace stamp only, never its name.
	var obj metaObj
	obj.Namespace = sns.Name
	Stamp(&obj.ObjectMeta, Owner{Tenant: "t", TenantUID: "u", Namespace: "shop", Name: "cfg", UID: "x"})
	if _, ns, _ := HeldNamespace(&obj); ns != "shop" {
		t.Errorf("HeldNamespace of a namespaced object = %q, want shop", ns)
	}
	if HoldsOtherNamespace(&obj, "u", "shop") || !HoldsOtherNamespace(&obj, "u", "other") {
		t.Error("HoldsOtherNamespace of a namespaced object is wrong")
	}
	var foreign metaObj
	if _, _, ok := HeldNamespace(&foreign); ok || HoldsOtherNamespace(&foreign, "u", "shop") {
		t.Error("an object not managed by the syncer holds a namespace")
	}
}

// Two tenants meet only when the super cluster's admins name one Tenant
// "<other>-<6 hex of the other's UID>[-...]": then the first tenant's namespace
// "<6 hex of the second's UID>-<x>" maps where the second's namespace "<x>" does. The super
// namespace written for either is not the other's (OwnedByTenant), so the reconcilers refuse it.
func TestTwoTenantsMeetOnlyByAdminNaming(t *testing.T) {
	const uidA, uidB = "uid-a", "uid-b"
	tenantB := "a-" + TenantHash(uidA)
	a := SuperNamespace("a", uidA, TenantHash(uidB)+"-c")
	b := SuperNamespace(tenantB, uidB, "c")
	if a != b {
		t.Fatalf("%q and %q: the documented meeting of tenants a and %s does not happen; update naming.go", a, b, tenantB)
	}
	if OwnedByTenant(superNamespaceAs("a", uidA, TenantHash(uidB)+"-c"), uidB) {
		t.Fatalf("tenant a's super namespace %q counts as tenant %s's", a, tenantB)
	}
	// Any other name for tenant B keeps them apart, e.g. the hash of another UID.
	if SuperNamespace("a", uidA, TenantHash(uidB)+"-c") == SuperNamespace("a-"+TenantHash("uid-c"), uidB, "c") {
		t.Fatal("tenants meet without the name relation")
	}
}
