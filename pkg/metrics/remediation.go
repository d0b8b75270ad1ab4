package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Remediation metrics (pkg/remediation). Labels: tenant (one per registered Tenant), kind (a
// synced kind), reason (resources.Mismatch values, or a skip reason). All bounded.
var (
	remediationMismatches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "remediation", Name: "mismatches_total",
		Help: "Confirmed mismatches between a tenant object and its super copy found by remediation scans (each re-enqueued at low priority), by tenant, kind and reason.",
	}, []string{"tenant", "kind", "reason"})
	remediationFixes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "remediation", Name: "fixes_total",
		Help: "Mismatches re-enqueued by remediation and found repaired by a later scan, by tenant, kind and reason.",
	}, []string{"tenant", "kind", "reason"})
	remediationSkips = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "remediation", Name: "skips_total",
		Help: "Tenants (or one kind of a tenant) left out of a remediation scan because their caches could not be trusted, by tenant and reason (tenant_not_synced, tenant_disconnected, cache_not_synced).",
	}, []string{"tenant", "reason"})
	remediationScanDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "remediation", Name: "scan_duration_seconds",
		Help:    "Wall-clock duration of one remediation scan over every tenant and kind, in seconds.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15), // 1ms .. ~16s
	})
)

func remediationCollectors() []prometheus.Collector {
	return []prometheus.Collector{remediationMismatches, remediationFixes, remediationSkips, remediationScanDuration}
}

// RemediationMismatch counts one confirmed mismatch of a tenant's object of kind, by reason.
func RemediationMismatch(tenant, kind, reason string) {
	remediationMismatches.WithLabelValues(tenant, kind, reason).Inc()
}

// RemediationFix counts one re-enqueued mismatch that a later scan found repaired.
func RemediationFix(tenant, kind, reason string) {
	remediationFixes.WithLabelValues(tenant, kind, reason).Inc()
}

// RemediationSkip counts one scan that left a tenant (or one of its kinds) out, by reason.
func RemediationSkip(tenant, reason string) { remediationSkips.WithLabelValues(tenant, reason).Inc() }

// RemediationScan records the duration of one remediation scan.
func RemediationScan(d time.Duration) { remediationScanDuration.Observe(d.Seconds()) }

// ForgetRemediationTenant deletes a removed tenant's remediation series (ForgetTenant does
// this too, with every other series of the tenant).
func ForgetRemediationTenant(tenant string) { forgetRemediation(prometheus.Labels{"tenant": tenant}) }

func forgetRemediation(l prometheus.Labels) {
	remediationMismatches.DeletePartialMatch(l)
	remediationFixes.DeletePartialMatch(l)
	remediationSkips.DeletePartialMatch(l)
}
