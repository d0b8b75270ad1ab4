package policy

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

func TestCheckObjectBytes(t *testing.T) {
	l := Default().Limits() // 512Ki
	cases := map[string]struct {
		size int64
		deny bool
	}{
		"empty":          {0, false},
		"at the cap":     {512 * 1024, false},
		"one byte over":  {512*1024 + 1, true},
		"far over (1Mi)": {1 << 20, true},
	}
	for name, tc := range cases {
		d := CheckObjectBytes(l, "ConfigMap app/big", tc.size)
		if (d != nil) != tc.deny {
			t.Errorf("%s: CheckObjectBytes(%d) = %v, want denial %v", name, tc.size, d, tc.deny)
			continue
		}
		if d != nil && (d.Rule != RuleObjectSize || !strings.Contains(d.Message, "limits.maxObjectBytes") || !strings.Contains(d.Message, "ConfigMap app/big")) {
			t.Errorf("%s: denial %q lacks the rule, the object or the remedy", name, d.Error())
		}
	}
	q := resource.MustParse("1")
	if d := CheckObjectBytes(&tenancyv1alpha1.LimitsPolicy{MaxObjectBytes: &q}, "x", 2); d == nil {
		t.Error("a 1-byte cap must refuse 2 bytes")
	}
}
