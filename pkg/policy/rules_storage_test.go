package policy

import (
	"strings"
	"testing"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

func TestClaimStorageClass(t *testing.T) {
	builtin := Default().Storage()
	gold := &tenancyv1alpha1.StoragePolicy{AllowedStorageClassNames: []string{"fast"}}
	for name, tc := range map[string]struct {
		p              *tenancyv1alpha1.StoragePolicy
		class          string
		exists, public bool
		denied         bool
	}{
		"empty class":                     {p: builtin, class: "", exists: true},
		"class the super cluster lacks":   {p: builtin, class: "tenant-own"},
		"public class":                    {p: builtin, class: "standard", exists: true, public: true},
		"hidden class, built-in policy":   {p: builtin, class: "fast", exists: true, denied: true},
		"hidden class, nil policy":        {p: nil, class: "fast", exists: true, denied: true},
		"hidden class, allowed by policy": {p: gold, class: "fast", exists: true},
		"other hidden class, gold policy": {p: gold, class: "b-only", exists: true, denied: true},
	} {
		d := ClaimStorageClass(tc.p, "storageClassName", tc.class, tc.exists, tc.public)
		if (d != nil) != tc.denied {
			t.Errorf("%s: ClaimStorageClass = %v, denied want %v", name, d, tc.denied)
			continue
		}
		if d != nil && (d.Rule != RuleStorageClass || !strings.Contains(d.Message, tc.class) || !strings.Contains(d.Message, "storage.allowedStorageClassNames")) {
			t.Errorf("%s: denial %v does not name the rule, the class and the policy field", name, d)
		}
	}
	if got := Default().Storage().AllowedStorageClassNames; got == nil || len(got) != 0 {
		t.Errorf("built-in storage.allowedStorageClassNames = %#v, want an empty list", got)
	}
}
