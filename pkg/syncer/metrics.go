package syncer

import (
	"time"

	"github.com/vcsyncer/syncer/pkg/metrics"
)

const (
	directionDownward = metrics.Downward
	directionUpward   = metrics.Upward
)

func observer(direction string) func(string, time.Duration) {
	return func(tenant string, d time.Duration) { metrics.QueueWait(tenant, direction, d) }
}

func forgetTenantMetrics(tenant string) { metrics.ForgetTenant(tenant) }

// queueStats reports per-tenant depth and oldest-item age of both pipelines for metrics.
func (s *Syncer) queueStats() ([]string, map[string]map[string]metrics.QueueStat) {
	var tenants []string
	if s.registry != nil {
		tenants = s.registry.Names()
	}
	out := map[string]map[string]metrics.QueueStat{}
	for dir, q := range map[string]*pipelineQueue{directionDownward: s.down, directionUpward: s.up} {
		m := map[string]metrics.QueueStat{}
		for t, st := range q.stats() {
			m[t] = metrics.QueueStat{Depth: st.Depth, Oldest: st.Oldest}
		}
		out[dir] = m
	}
	return tenants, out
}
