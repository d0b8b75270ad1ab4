package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// kubeletRequests counts the requests of the syncer's kubelet API (pkg/kubeletproxy)
// attributed to a tenant. Labels: tenant, endpoint (containerLogs, exec, attach,
// portForward, statsSummary, metricsResource, other), result (forwarded, or the refusal
// reason). All bounded.
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

// kubeletOpenStreams is the number of requests the kubelet API is forwarding for a tenant
// right now (logs, exec, attach and port-forward streams); a tenant's series is deleted when
// it has none open.
var kubeletOpenStreams = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Namespace: Namespace, Subsystem: "kubelet", Name: "open_streams",
	Help: "Requests and streams (logs, exec, attach, port-forward) the syncer's kubelet API is forwarding for a tenant now, by tenant.",
}, []string{"tenant"})

// kubeletStreamsRevoked counts the open streams the kubelet API closed because their client
// certificate no longer names their tenant. Label reason: tenant_removed (no Tenant of that
// name and UID any more), credentials_changed (spec.kubeletClientCA changed so that it no
// longer verifies the certificate, or another Tenant's CA verifies it too). Bounded.
var kubeletStreamsRevoked = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: Namespace, Subsystem: "kubelet", Name: "streams_revoked_total",
	Help: "Open streams of the syncer's kubelet API closed because their client certificate no longer names their tenant, by reason (tenant_removed, credentials_changed).",
}, []string{"reason"})

// kubeletBytes counts the bytes of forwarded kubelet API requests by tenant, endpoint and
// direction: to_tenant (responses and stream data the tenant apiserver receives: logs, exec
// output, port-forward data from the Pod), from_tenant (stream data it sends: exec and attach
// stdin, port-forward data to the Pod). HTTP headers are not counted. Bounded.
var kubeletBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: Namespace, Subsystem: "kubelet", Name: "bytes_total",
	Help: "Bytes of the syncer's kubelet API streams by tenant, endpoint and direction (to_tenant: logs, output and port-forward data toward the tenant apiserver; from_tenant: stdin and port-forward data from it).",
}, []string{"tenant", "endpoint", "direction"})

// Directions of vcsyncer_kubelet_bytes_total.
const (
	KubeletToTenant   = "to_tenant"
	KubeletFromTenant = "from_tenant"
)

func kubeletCollectors() []prometheus.Collector {
	return []prometheus.Collector{kubeletRequests, kubeletUnauthenticated, kubeletOpenStreams, kubeletStreamsRevoked, kubeletBytes}
}

// KubeletBytes returns the adder of vcsyncer_kubelet_bytes_total for (tenant, endpoint,
// direction): resolve it once per stream, call it per write.
func KubeletBytes(tenant, endpoint, direction string) func(n int) {
	c := kubeletBytes.WithLabelValues(tenant, endpoint, direction)
	return func(n int) {
		if n > 0 {
			c.Add(float64(n))
		}
	}
}

// KubeletBytesCount returns the current count of (tenant, endpoint, direction); tests compare
// differences.
func KubeletBytesCount(tenant, endpoint, direction string) float64 {
	return counterValue(kubeletBytes.WithLabelValues(tenant, endpoint, direction))
}

// KubeletOpenStreams sets the number of streams open for tenant (0 deletes its series).
func KubeletOpenStreams(tenant string, n int) {
	if n == 0 {
		kubeletOpenStreams.DeleteLabelValues(tenant)
		return
	}
	kubeletOpenStreams.WithLabelValues(tenant).Set(float64(n))
}

// KubeletOpenStreamsCount returns the number of streams open for tenant now.
func KubeletOpenStreamsCount(tenant string) float64 {
	var m dto.Metric
	if err := kubeletOpenStreams.WithLabelValues(tenant).Write(&m); err != nil {
		return 0
	}
	return m.GetGauge().GetValue()
}

// KubeletStreamRevoked counts one open stream closed for reason.
func KubeletStreamRevoked(reason string) { kubeletStreamsRevoked.WithLabelValues(reason).Inc() }

// KubeletStreamsRevokedCount returns the current count of streams closed for reason; tests
// compare differences.
func KubeletStreamsRevokedCount(reason string) float64 {
	return counterValue(kubeletStreamsRevoked.WithLabelValues(reason))
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

func forgetKubelet(l prometheus.Labels) {
	kubeletRequests.DeletePartialMatch(l)
	kubeletBytes.DeletePartialMatch(l)
	kubeletOpenStreams.DeletePartialMatch(l)
}
