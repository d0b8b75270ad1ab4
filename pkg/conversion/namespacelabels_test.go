package conversion

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestSuperNamespaceLabelKey(t *testing.T) {
	long := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 40)
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"name", "ns.tenancy.vcsyncer.io/name", true},
		{"istio-injection", "ns.tenancy.vcsyncer.io/istio-injection", true},
		{"example.com/team", "example.com.ns.tenancy.vcsyncer.io/team", true},
		{"pod-security.kubernetes.io/enforce", "pod-security.kubernetes.io.ns.tenancy.vcsyncer.io/enforce", true},
		{"ns.tenancy.vcsyncer.io/x", "ns.tenancy.vcsyncer.io.ns.tenancy.vcsyncer.io/x", true},
		{long + "/x", "", false},
	} {
		got, ok := SuperNamespaceLabelKey(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("SuperNamespaceLabelKey(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
		if ok {
			if errs := validation.IsQualifiedName(got); len(errs) > 0 {
				t.Errorf("SuperNamespaceLabelKey(%q) = %q is not a valid label key: %v", tc.in, got, errs)
			}
			if !IsSuperNamespaceLabelKey(got) {
				t.Errorf("IsSuperNamespaceLabelKey(%q) = false", got)
			}
		}
	}
	for _, k := range []string{"name", "example.com/team", "tenancy.vcsyncer.io/tenant-uid", "xns.tenancy.vcsyncer.io/a"} {
		if IsSuperNamespaceLabelKey(k) {
			t.Errorf("IsSuperNamespaceLabelKey(%q) = true", k)
		}
	}
	// Distinct tenant keys never share a super key.
	seen := map[string]string{}
	for _, k := range []string{"a", "a/a", "ns.tenancy.vcsyncer.io/a", "x.ns.tenancy.vcsyncer.io/a", "x/a"} {
		m, _ := SuperNamespaceLabelKey(k)
		if o, dup := seen[m]; dup {
			t.Errorf("%q and %q both map to %q", o, k, m)
		}
		seen[m] = k
	}
	if errs := validation.IsQualifiedName(LabelUnmappedNamespaceKey); len(errs) > 0 {
		t.Errorf("LabelUnmappedNamespaceKey: %v", errs)
	}
}
