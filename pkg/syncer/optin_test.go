package syncer

import (
	"errors"
	"strings"
	"testing"

	"github.com/vcsyncer/syncer/pkg/resources"
)

func TestSelectOptIn(t *testing.T) {
	cases := map[string]struct {
		kinds   []resources.Kind
		want    []resources.Kind
		wantErr string
	}{
		"none":                       {},
		"all":                        {kinds: []resources.Kind{"Ingress", "NetworkPolicy", "PodDisruptionBudget"}, want: []resources.Kind{"Ingress", "NetworkPolicy", "PodDisruptionBudget"}},
		"one":                        {kinds: []resources.Kind{"NetworkPolicy"}, want: []resources.Kind{"NetworkPolicy"}},
		"unknown":                    {kinds: []resources.Kind{"Ingress", "Ingresses"}, wantErr: `"Ingresses"`},
		"default kind is not opt-in": {kinds: []resources.Kind{"Pod"}, wantErr: `"Pod"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := SelectOptIn(tc.kinds)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrUnknownOptInKind) || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "PodDisruptionBudget") {
					t.Fatalf("error = %v, want ErrUnknownOptInKind naming %s and the known kinds", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var kinds []resources.Kind
			for _, r := range got {
				kinds = append(kinds, r.Kind())
			}
			if len(kinds) != len(tc.want) || (len(kinds) > 0 && strings.Join(toStrings(kinds), ",") != strings.Join(toStrings(tc.want), ",")) {
				t.Errorf("kinds %v, want %v", kinds, tc.want)
			}
		})
	}
}

func toStrings(ks []resources.Kind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

// TestNoKindTwice guards the registration lists: a kind registered twice would replace the
// first Resource silently.
func TestNoKindTwice(t *testing.T) {
	seen := map[resources.Kind]bool{}
	for _, r := range append(DefaultResources(), OptInResources()...) {
		if seen[r.Kind()] {
			t.Errorf("kind %s registered twice", r.Kind())
		}
		seen[r.Kind()] = true
	}
}
