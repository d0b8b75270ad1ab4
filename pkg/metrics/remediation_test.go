package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// series counts the series of the given collectors, by tenant label value.
func series(t *testing.T, cs ...prometheus.Collector) map[string]int {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(cs...)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "tenant" {
					out[l.GetValue()]++
				}
			}
		}
	}
	return out
}

func TestForgetTenantDeletesRemediationSeries(t *testing.T) {
	for _, tenant := range []string{"a", "b"} {
		RemediationMismatch(tenant, "Pod", "orphan_in_super")
		RemediationFix(tenant, "Pod", "orphan_in_super")
		RemediationSkip(tenant, "tenant_not_synced")
	}
	if got := series(t, remediationMismatches, remediationFixes, remediationSkips); got["a"] != 3 || got["b"] != 3 {
		t.Fatalf("series before = %v, want 3 per tenant", got)
	}
	ForgetTenant("a")
	if got := series(t, remediationMismatches, remediationFixes, remediationSkips); got["a"] != 0 || got["b"] != 3 {
		t.Errorf("series after ForgetTenant(a) = %v, want only b's 3", got)
	}
	ForgetRemediationTenant("b")
	if got := series(t, remediationMismatches, remediationFixes, remediationSkips); len(got) != 0 {
		t.Errorf("series left after forgetting both tenants: %v", got)
	}
}
