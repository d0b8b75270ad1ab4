package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Namespace is the Prometheus namespace of every vc-syncer metric.
const Namespace = "vcsyncer"

// Directions (label values of "direction").
const (
	Downward = "downward"
	Upward   = "upward"
)

var (
	queueAdds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "queue", Name: "adds_total",
		Help: "Requests added to a pipeline queue, by tenant and direction.",
	}, []string{"tenant", "direction"})
	queueRetries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "queue", Name: "retries_total",
		Help: "Requests re-queued with backoff after a failed sync, by tenant and direction.",
	}, []string{"tenant", "direction"})
	queueWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "queue", Name: "wait_duration_seconds",
		Help:    "Time a request waited in a pipeline queue before a worker took it, in seconds.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16), // 1ms .. ~33s
	}, []string{"tenant", "direction"})
	depthDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "queue", "depth"),
		"Requests waiting in a pipeline queue, by tenant and direction.", []string{"tenant", "direction"}, nil)
	oldestDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "queue", "oldest_item_age_seconds"),
		"Age of the oldest request waiting in a pipeline queue, in seconds (the tenant's queue lag).", []string{"tenant", "direction"}, nil)
	inFlightDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "queue", "in_flight"),
		"Requests a pipeline's workers are processing, by tenant and direction. While other tenants have requests waiting, a tenant holds at most its weighted share of the pipeline's workers (0 with --fair-queuing=false).", []string{"tenant", "direction"}, nil)
	holdDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "queue", "worker_hold_seconds"),
		"Moving average of the time a tenant's requests hold a worker of a pipeline, in seconds, by tenant and direction (0 before the first, or with --slow-tenant-threshold=0 or --fair-queuing=false).", []string{"tenant", "direction"}, nil)
	slowDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "queue", "slow_tenant"),
		"1 while a tenant's requests hold a pipeline's workers for --slow-tenant-threshold or longer on average, so that it leaves each tenant active in the last second the workers that tenant used lately plus one (within its weighted share); else 0.", []string{"tenant", "direction"}, nil)
)

// QueueStat is one tenant's queue state in one direction.
type QueueStat struct {
	Depth    int
	Oldest   time.Duration
	InFlight int // requests being processed by a worker
	// Hold is the moving average of the time the tenant's requests hold a worker; Slow reports
	// that it is at or above --slow-tenant-threshold.
	Hold time.Duration
	Slow bool
}

// QueueStats returns, per direction, per tenant, the queue state; tenants lists every
// registered tenant (reported with 0 when their queue is empty).
type QueueStats func() (tenants []string, stats map[string]map[string]QueueStat)

var (
	registerOnce sync.Once
	statsSource  scrapeSource[QueueStats]
)

var queueStatsCollector = scrapeCollector[QueueStats]{
	descs: []*prometheus.Desc{depthDesc, oldestDesc, inFlightDesc, holdDesc, slowDesc},
	src:   &statsSource,
	collect: func(src QueueStats, ch chan<- prometheus.Metric) {
		tenants, stats := src()
		for _, dir := range []string{Downward, Upward} {
			for _, t := range tenants {
				st := stats[dir][t]
				ch <- gauge(depthDesc, float64(st.Depth), t, dir)
				ch <- gauge(oldestDesc, st.Oldest.Seconds(), t, dir)
				ch <- gauge(inFlightDesc, float64(st.InFlight), t, dir)
				ch <- gauge(holdDesc, st.Hold.Seconds(), t, dir)
				slow := 0.0
				if st.Slow {
					slow = 1
				}
				ch <- gauge(slowDesc, slow, t, dir)
			}
		}
	},
}

// Register registers the collectors in controller-runtime's registry. Safe to call more than once.
func Register() {
	registerOnce.Do(func() {
		ctrlmetrics.Registry.MustRegister(queueAdds, queueRetries, queueWait, queueStatsCollector)
		ctrlmetrics.Registry.MustRegister(remediationCollectors()...)
		ctrlmetrics.Registry.MustRegister(policyCollectors()...)
		ctrlmetrics.Registry.MustRegister(eventCollectors()...)
		ctrlmetrics.Registry.MustRegister(kubeletCollectors()...)
		registerSyncMetrics()
	})
}

// RegisterQueueStats sets the source of the depth and oldest-age gauges (the last call wins).
func RegisterQueueStats(src QueueStats) {
	Register()
	statsSource.Set(src)
}

// QueueAdd counts one request added to a queue.
func QueueAdd(tenant, direction string) { queueAdds.WithLabelValues(tenant, direction).Inc() }

// QueueRetry counts one request re-queued after a failed sync.
func QueueRetry(tenant, direction string) { queueRetries.WithLabelValues(tenant, direction).Inc() }

// QueueWait records how long a request waited before a worker took it.
func QueueWait(tenant, direction string, d time.Duration) {
	queueWait.WithLabelValues(tenant, direction).Observe(d.Seconds())
}

// ForgetTenant deletes every series of a removed tenant.
func ForgetTenant(tenant string) {
	l := prometheus.Labels{"tenant": tenant}
	queueAdds.DeletePartialMatch(l)
	queueRetries.DeletePartialMatch(l)
	queueWait.DeletePartialMatch(l)
	forgetRemediation(l)
	forgetPolicy(l)
	forgetEvents(l)
	forgetAdmission(l)
	forgetCheckpointTenant(tenant)
	forgetSync(l)
	forgetShare(l)
	forgetKubelet(l)
}

// VNodeStats returns, per tenant, the number of virtual Nodes the syncer keeps for it.
type VNodeStats func() map[string]int

var (
	vnodesDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "vnodes"),
		"Virtual Nodes the syncer keeps in a tenant (super Nodes hosting the tenant's Pods, plus idle vNodes within their GC grace period), by tenant.", []string{"tenant"}, nil)
	vnodeOnce   sync.Once
	vnodeSource scrapeSource[VNodeStats]
)

var vnodeCollector = scrapeCollector[VNodeStats]{
	descs: []*prometheus.Desc{vnodesDesc},
	src:   &vnodeSource,
	collect: func(src VNodeStats, ch chan<- prometheus.Metric) {
		for t, n := range src() {
			ch <- gauge(vnodesDesc, float64(n), t)
		}
	},
}

// RegisterVNodeStats registers vcsyncer_vnodes{tenant}, computed at scrape time from src (so a
// stopped tenant's series disappears with its bookkeeping). The last call's src wins.
func RegisterVNodeStats(src VNodeStats) {
	vnodeOnce.Do(func() { ctrlmetrics.Registry.MustRegister(vnodeCollector) })
	vnodeSource.Set(src)
}
