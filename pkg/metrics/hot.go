package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// HotCount is the number of requests of one (tenant, kind, direction, reason) that are hot:
// retried more than the syncer's hot-request threshold in a row.
type HotCount struct {
	Tenant, Kind, Direction, Reason string
	// Requests is how many requests are hot; LongBackoff how many of them are held at the
	// long retry interval.
	Requests, LongBackoff int
}

// HotStats returns the current hot-request counts (computed at scrape time).
type HotStats func() []HotCount

var (
	hotDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "sync", "hot_requests"),
		"Requests whose reconcile failed more than 10 times in a row (and has not succeeded since), by tenant, kind, direction and the reason of the last failure. Such a request is listed on the status page.",
		[]string{"tenant", "kind", "direction", "reason"}, nil)
	longBackoffDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "sync", "long_backoff_requests"),
		"Hot requests that failed at least 30 times without a change of their object and are retried only every 5 minutes until it changes, by tenant, kind, direction and reason.",
		[]string{"tenant", "kind", "direction", "reason"}, nil)
	tenantLagWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "tenant", Name: "lag_writes_total",
		Help: "Writes of a Tenant's status.lagSeconds (and the per-direction lags), by tenant: at most one per 10 s, and only when the lag changed by at least 5 s and a quarter.",
	}, []string{"tenant"})
	hotSource scrapeSource[HotStats]
)

// RegisterHotStats sets the source of vcsyncer_sync_hot_requests and
// vcsyncer_sync_long_backoff_requests (the last call wins).
func RegisterHotStats(src HotStats) {
	Register()
	hotSource.Set(src)
}

var hotCollector = scrapeCollector[HotStats]{
	descs: []*prometheus.Desc{hotDesc, longBackoffDesc},
	src:   &hotSource,
	collect: func(src HotStats, ch chan<- prometheus.Metric) {
		for _, h := range src() {
			ch <- gauge(hotDesc, float64(h.Requests), h.Tenant, h.Kind, h.Direction, h.Reason)
			ch <- gauge(longBackoffDesc, float64(h.LongBackoff), h.Tenant, h.Kind, h.Direction, h.Reason)
		}
	},
}

// TenantLagWrite counts one write of tenant's lag into its Tenant status.
func TenantLagWrite(tenant string) { tenantLagWrites.WithLabelValues(tenant).Inc() }

// TenantLagWrites returns the number of lag writes counted for tenant.
func TenantLagWrites(tenant string) float64 {
	m := &dto.Metric{}
	if err := tenantLagWrites.WithLabelValues(tenant).Write(m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}
