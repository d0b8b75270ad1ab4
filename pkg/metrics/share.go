package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// A tenant's share of the syncer's super writes (--super-write-qps). Labels: tenant only.
var (
	superWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "super_writes_total",
		Help: "Super-cluster writes (create, update, patch, delete) made by the syncer's reconciles, by tenant; charged to the tenant's share of --super-write-qps.",
	}, []string{"tenant"})
	writeShareDelay = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "write_share_delay_seconds_total",
		Help: "Time a tenant's queued downward requests were held back because the tenant had spent its share of --super-write-qps, by tenant (summed over the periods it was held back, not over requests).",
	}, []string{"tenant"})
	writeShareDelays = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "write_share_delays_total",
		Help: "Times a tenant's queued downward requests were held back because the tenant had spent its share of --super-write-qps, by tenant.",
	}, []string{"tenant"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(superWrites, writeShareDelay, writeShareDelays)
}

// SuperWrites counts n super writes of tenant's reconciles.
func SuperWrites(tenant string, n int) { superWrites.WithLabelValues(tenant).Add(float64(n)) }

// WriteShareDelayed records one period of d in which tenant's requests were held back for its
// write share.
func WriteShareDelayed(tenant string, d time.Duration) {
	writeShareDelay.WithLabelValues(tenant).Add(d.Seconds())
	writeShareDelays.WithLabelValues(tenant).Inc()
}

func forgetShare(l prometheus.Labels) {
	superWrites.DeletePartialMatch(l)
	writeShareDelay.DeletePartialMatch(l)
	writeShareDelays.DeletePartialMatch(l)
}
