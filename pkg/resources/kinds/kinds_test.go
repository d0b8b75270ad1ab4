package kinds

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
		"Event, synced by default":   {kinds: []resources.Kind{"Event", "Ingress"}, want: []resources.Kind{"Ingress"}},
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
			kinds := kindNames(got)
			if kinds != strings.Join(toStrings(tc.want), ",") {
				t.Errorf("kinds %v, want %v", kinds, tc.want)
			}
		})
	}
}

// kindNames returns the kinds of rs, in order, joined by commas.
func kindNames(rs []resources.Resource) string {
	var out []string
	for _, r := range rs {
		out = append(out, string(r.Kind()))
	}
	return strings.Join(out, ",")
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
	for _, r := range append(append(Default(), OptIn()...), Optional()...) {
		if seen[r.Kind()] {
			t.Errorf("kind %s registered twice", r.Kind())
		}
		seen[r.Kind()] = true
	}
}

func TestSelectOptional(t *testing.T) {
	cases := map[string]struct {
		disabled, optIn []resources.Kind
		want            []resources.Kind
		wantErr         error
	}{
		"default: Event synced":      {want: []resources.Kind{"Event"}},
		"Event turned off":           {disabled: []resources.Kind{"Event"}},
		"opted in, still synced":     {optIn: []resources.Kind{"Event"}, want: []resources.Kind{"Event"}},
		"a kind that cannot go":      {disabled: []resources.Kind{"Pod"}, wantErr: ErrUnknownDisabledKind},
		"turned off and opted in":    {disabled: []resources.Kind{"Event"}, optIn: []resources.Kind{"Event"}, wantErr: errors.New("both")},
		"unknown name to turn off":   {disabled: []resources.Kind{"Events"}, wantErr: ErrUnknownDisabledKind},
		"opt-in kinds do not matter": {optIn: []resources.Kind{"Ingress"}, want: []resources.Kind{"Event"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := SelectOptional(tc.disabled, tc.optIn)
			if tc.wantErr != nil {
				if err == nil || (errors.Is(tc.wantErr, ErrUnknownDisabledKind) && !errors.Is(err, ErrUnknownDisabledKind)) ||
					(!errors.Is(tc.wantErr, ErrUnknownDisabledKind) && !strings.Contains(err.Error(), tc.wantErr.Error())) {
					t.Fatalf("error = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			kinds := kindNames(got)
			if kinds != strings.Join(toStrings(tc.want), ",") {
				t.Errorf("kinds %v, want %v", kinds, tc.want)
			}
		})
	}
}
