package options

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestOptInKindsFlag(t *testing.T) {
	cases := map[string]struct {
		args    []string
		want    string
		wantErr string
	}{
		"default none":   {want: ""},
		"list":           {args: []string{"--opt-in-kinds=Ingress,NetworkPolicy,PodDisruptionBudget"}, want: "Ingress,NetworkPolicy,PodDisruptionBudget"},
		"blanks trimmed": {args: []string{"--opt-in-kinds=Ingress, NetworkPolicy,"}, want: "Ingress,NetworkPolicy"},
		"unknown kind":   {args: []string{"--opt-in-kinds=Ingress,Networkpolicy"}, wantErr: `--opt-in-kinds: unknown opt-in kind "Networkpolicy" (known: Ingress, NetworkPolicy, PodDisruptionBudget, Event)`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := o.Validate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Validate() = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, k := range o.OptInKindList() {
				got = append(got, string(k))
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("kinds %v, want %s", got, tc.want)
			}
		})
	}
}
