package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Sharding metrics (pkg/sharding, the syncer's hand-over). Labels: result (drained, adopted,
// cold), direction (downward, upward). Bounded.
var (
	shardHandovers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "shard", Name: "handovers_total",
		Help: "Tenant hand-overs between shards, by result: drained (this shard stopped a tenant and checkpointed it), adopted (this shard took a tenant's state from the previous shard's checkpoint), cold (it found none: every object of the tenant is reconciled once).",
	}, []string{"result"})
	shardFenced = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "shard", Name: "fenced_requests_total",
		Help: "Requests held back because this shard may not write for their tenant (the ring gives it to another shard, or this shard's Lease is not renewed in time), by direction.",
	}, []string{"direction"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(shardHandovers, shardFenced)
}

// ShardHandover counts one tenant hand-over with result (drained, adopted, cold).
func ShardHandover(result string) { shardHandovers.WithLabelValues(result).Inc() }

// ShardFenced counts one request held back by the shard fence, by direction.
func ShardFenced(direction string) { shardFenced.WithLabelValues(direction).Inc() }
