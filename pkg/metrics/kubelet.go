package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// kubeletRequests counts the requests of the syncer's kubelet API (pkg/kubeletproxy) that
// reached a tenant's Pod check. Labels: tenant, endpoint (containerLogs, exec, attach,
// portForward), result (forwarded, or the refusal reason). All bounded.
var kubeletRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: Namespace, Subsystem: "kubelet", Name: "requests_total",
	Help: "Requests of the syncer's kubelet API attributed to a tenant, by tenant, endpoint and result (forwarded, or why it was refused).",
}, []string{"tenant", "endpoint", "result"})

// kubeletUnauthenticated counts the requests of the kubelet API attributed to no tenant (401).
// Label reason: no_certificate, unknown_certificate, ambiguous_certificate. Bounded.
var kubeletUnauthenticated = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: Namespace, Subsystem: "kubelet", Name: "unauthenticated_total",
	Help: "Requests of the syncer's kubelet API refused with 401 because their TLS client certificate names no single tenant, by reason.",
}, []string{"reason"})

func kubeletCollectors() []prometheus.Collector {
	return []prometheus.Collector{kubeletRequests, kubeletUnauthenticated}
}

// KubeletRequest counts one request of tenant to endpoint with result.
func KubeletRequest(tenant, endpoint, result string) {
	kubeletRequests.WithLabelValues(tenant, endpoint, result).Inc()
}

// KubeletUnauthenticated counts one request refused with 401 for reason.
func KubeletUnauthenticated(reason string) { kubeletUnauthenticated.WithLabelValues(reason).Inc() }

// KubeletRequests returns the current count of (tenant, endpoint, result); tests compare
// differences.
func KubeletRequests(tenant, endpoint, result string) float64 {
	return counterValue(kubeletRequests.WithLabelValues(tenant, endpoint, result))
}

// KubeletUnauthenticatedCount returns the current count of 401s for reason.
func KubeletUnauthenticatedCount(reason string) float64 {
	return counterValue(kubeletUnauthenticated.WithLabelValues(reason))
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

func forgetKubelet(l prometheus.Labels) { kubeletRequests.DeletePartialMatch(l) }
