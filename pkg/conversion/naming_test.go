package conversion

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestSuperNamespace(t *testing.T) {
	const uid = "0b5f9d1e-3c55-4a36-9b58-5d2f0a0d6c11"
	h := TenantHash(uid)
	cases := map[string]struct {
		tenant, ns string
		want       string // "" means: only check validity and length
	}{
		"short":                {tenant: "a", ns: "default", want: "a-" + h + "-default"},
		"exactly 63":           {tenant: "t", ns: strings.Repeat("n", 63-len("t-"+h+"-")), want: "t-" + h + "-" + strings.Repeat("n", 63-len("t-"+h+"-"))},
		"62":                   {tenant: "t", ns: strings.Repeat("n", 62-len("t-"+h+"-")), want: "t-" + h + "-" + strings.Repeat("n", 62-len("t-"+h+"-"))},
		"64 is cut":            {tenant: "t", ns: strings.Repeat("n", 64-len("t-"+h+"-"))},
		"max lengths":          {tenant: strings.Repeat("t", 40), ns: strings.Repeat("n", 63)},
		"dash at the cut":      {tenant: "tenant", ns: strings.Repeat("a", 54-len("tenant-"+h+"-")-1) + "-" + strings.Repeat("b", 20)},
		"dots would be cut":    {tenant: "tenant", ns: strings.Repeat("a", 54-len("tenant-"+h+"-")-1) + "--" + strings.Repeat("b", 20)},
		"ends with dash at 54": {tenant: "x", ns: strings.Repeat("a", 54-len("x-"+h+"-")-1) + "-" + strings.Repeat("c", 30)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := SuperNamespace(tc.tenant, uid, tc.ns)
			if tc.want != "" && got != tc.want {
				t.Errorf("SuperNamespace(%q, %q) = %q, want %q", tc.tenant, tc.ns, got, tc.want)
			}
			if len(got) > MaxNamespaceLength {
				t.Errorf("len(%q) = %d > %d", got, len(got), MaxNamespaceLength)
			}
			if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
				t.Errorf("%q is not a valid namespace name: %v", got, errs)
			}
		})
	}
}

func TestSuperNamespaceInjective(t *testing.T) {
	// tenant "a" namespace "b-c" vs tenant "a-b" namespace "c".
	x := SuperNamespace("a", "uid-of-a", "b-c")
	y := SuperNamespace("a-b", "uid-of-a-b", "c")
	if x == y {
		t.Fatalf("collision: %q", x)
	}
	// Same names, different tenant UIDs (a Tenant deleted and recreated) must differ.
	if SuperNamespace("a", "uid-1", "ns") == SuperNamespace("a", "uid-2", "ns") {
		t.Fatal("different tenant UIDs map to the same namespace")
	}
	// Long names that differ only after the cut stay distinct.
	long := strings.Repeat("n", 60)
	if SuperNamespace("t", "u", long+"1") == SuperNamespace("t", "u", long+"2") {
		t.Fatal("long names differing after the cut collide")
	}
	// Many tenants × namespaces: no collisions.
	seen := map[string]string{}
	for _, tn := range []string{"a", "a-b", "a-b-c", "ab", "b"} {
		for _, ns := range []string{"c", "b-c", "c-d", "default", "kube-system", strings.Repeat("z", 63)} {
			got := SuperNamespace(tn, "uid-"+tn, ns)
			if prev, ok := seen[got]; ok {
				t.Fatalf("%s/%s and %s map to %q", tn, ns, prev, got)
			}
			seen[got] = tn + "/" + ns
		}
	}
}

func TestOwnerRoundTrip(t *testing.T) {
	var m metaObj
	o := Owner{Tenant: "t1", TenantUID: "uid-t1", Namespace: "ns", Name: "p", UID: "uid-p"}
	Stamp(&m.ObjectMeta, o)
	got, ok := OwnerOf(&m)
	if !ok || got != o {
		t.Fatalf("OwnerOf = %+v, %v; want %+v", got, ok, o)
	}
	if !OwnedByTenant(&m, "uid-t1") || OwnedByTenant(&m, "uid-t2") {
		t.Fatal("OwnedByTenant is wrong")
	}
	// An object whose label and annotation disagree (tampered) is not owned.
	m.Labels[LabelTenantUID] = "uid-t2"
	if _, ok := OwnerOf(&m); ok {
		t.Fatal("object with mismatching tenant-uid label and annotation counted as owned")
	}
	// An object without the managed-by label is never owned.
	var foreign metaObj
	foreign.Annotations = map[string]string{AnnotationTenant: "t1", AnnotationTenantUID: "uid-t1", AnnotationName: "p"}
	if _, ok := OwnerOf(&foreign); ok {
		t.Fatal("unlabelled object counted as owned")
	}
}
