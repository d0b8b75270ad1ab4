package metrics

import (
	"sync"

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

// SuperCacheStats reports the super-cluster informer caches: the objects cached per kind, and
// with sharding the number of tenants whose super objects they hold (scoped true).
type SuperCacheStats func() (objects map[string]int, scopeTenants int, scoped bool)

var (
	superCacheObjectsDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "super_cache", "objects"),
		"Objects in this replica's super-cluster informer cache of each kind (with sharding: only the super objects of the tenants this shard syncs).", []string{"kind"}, nil)
	superCacheScopeDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "super_cache", "scope_tenants"),
		"With sharding: the tenants whose super objects this replica's super-cluster informers cache.", nil, nil)
	superCacheSrc scrapeSource[SuperCacheStats]
	superCacheReg sync.Once
)

// RegisterSuperCacheStats makes src the source of vcsyncer_super_cache_objects{kind} and
// vcsyncer_super_cache_scope_tenants, read at every scrape. The last call's src wins.
func RegisterSuperCacheStats(src SuperCacheStats) {
	superCacheSrc.Set(src)
	superCacheReg.Do(func() {
		ctrlmetrics.Registry.MustRegister(scrapeCollector[SuperCacheStats]{
			descs: []*prometheus.Desc{superCacheObjectsDesc, superCacheScopeDesc},
			src:   &superCacheSrc,
			collect: func(src SuperCacheStats, ch chan<- prometheus.Metric) {
				objects, tenants, scoped := src()
				for kind, n := range objects {
					ch <- gauge(superCacheObjectsDesc, float64(n), kind)
				}
				if scoped {
					ch <- gauge(superCacheScopeDesc, float64(tenants))
				}
			},
		})
	})
}
