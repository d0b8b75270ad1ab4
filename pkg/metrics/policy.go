package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// policyDenials counts refusals by tenant policy (pkg/policy). Labels: tenant, kind (a synced
// kind), rule (policy.Rule values). All bounded.
var policyDenials = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: Namespace, Subsystem: "policy", Name: "denials_total",
	Help: "Tenant objects (or parts of them) refused by the tenant's policy, by tenant, kind and rule; counted once per object version and policy change, not per retry.",
}, []string{"tenant", "kind", "rule"})

func policyCollectors() []prometheus.Collector { return []prometheus.Collector{policyDenials} }

// PolicyDenied counts one refusal of a tenant's object of kind by rule.
func PolicyDenied(tenant, kind, rule string) { policyDenials.WithLabelValues(tenant, kind, rule).Inc() }

// PolicyDenials returns the current count of refusals of (tenant, kind, rule).
func PolicyDenials(tenant, kind, rule string) float64 {
	var m dto.Metric
	if err := policyDenials.WithLabelValues(tenant, kind, rule).Write(&m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

// PolicyDenialCounts returns the current count of every (kind, rule) series of tenant's
// refusals, keyed by kind and rule; kinds and rules never refused are absent. Tests take it
// before they act and compare differences (the counter is process-wide).
func PolicyDenialCounts(tenant string) map[[2]string]float64 {
	ch := make(chan prometheus.Metric)
	go func() { policyDenials.Collect(ch); close(ch) }()
	out := map[[2]string]float64{}
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			continue
		}
		l := map[string]string{}
		for _, p := range d.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["tenant"] == tenant {
			out[[2]string{l["kind"], l["rule"]}] = d.GetCounter().GetValue()
		}
	}
	return out
}

func forgetPolicy(l prometheus.Labels) { policyDenials.DeletePartialMatch(l) }
