package syncer

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/retry"
)

// retryFailed records a failed reconcile of req that is about to be retried with backoff: it
// counts it in vcsyncer_sync_queue_retries_total and vcsyncer_sync_retries_total{reason} (for a
// registered tenant), records it in q's retry book, and logs "Retrying sync" at the default
// level for the first failure of each (tenant, kind, direction, reason) and then at most once
// a minute with the number of retries not logged since (the others at V(1)). A request that
// reaches retry.LongBackoffRetries failures without a change of its object is logged once as
// retried every retry.LongBackoffInterval from then on.
func (s *Syncer) retryFailed(ctx context.Context, q *pipelineQueue, req resources.Request, down bool, err error) {
	dir := directionUpward
	if down {
		dir = directionDownward
	}
	reason := retry.Reason(err)
	e := q.retries.Failed(req, reason, err.Error())
	metrics.QueueRetry(req.Tenant, dir)
	if s.registry == nil {
		metrics.SyncRetry(req.Tenant, string(req.Kind), dir, reason)
	} else if _, ok := s.registry.Get(req.Tenant); ok {
		metrics.SyncRetry(req.Tenant, string(req.Kind), dir, reason)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("tenant", req.Tenant, "kind", string(req.Kind), "direction", dir, "reason", reason)
	msg := conversion.Truncate(err.Error(), 1024)
	if ok, suppressed := s.retryLog.Allow(retry.LogKey{Tenant: req.Tenant, Kind: req.Kind, Direction: dir, Reason: reason}); ok {
		log.Info("Retrying sync", "request", req.String(), "retries", e.Retries, "error", msg,
			"suppressedSinceLastLine", suppressed)
	} else {
		log.V(1).Info("Retrying sync", "request", req.String(), "retries", e.Retries, "error", msg)
	}
	if e.SinceChange == retry.LongBackoffRetries {
		if ok, suppressed := s.retryLog.Allow(retry.LogKey{Tenant: req.Tenant, Kind: req.Kind, Direction: dir, Reason: "long:" + reason}); ok {
			log.Info("Retrying only every "+retry.LongBackoffInterval.String()+" until the object changes", "request", req.String(),
				"retries", e.Retries, "failingSince", e.Since, "error", msg, "suppressedSinceLastLine", suppressed)
		}
	}
}

// hotStats reports the hot requests of both pipelines for vcsyncer_sync_hot_requests and
// vcsyncer_sync_long_backoff_requests, for registered tenants only.
func (s *Syncer) hotStats() []metrics.HotCount {
	var out []metrics.HotCount
	for dir, q := range map[string]*pipelineQueue{directionDownward: s.down, directionUpward: s.up} {
		for k, c := range q.retries.HotCountsFull() {
			if s.registry != nil {
				if _, ok := s.registry.Get(k.Tenant); !ok {
					continue
				}
			}
			out = append(out, metrics.HotCount{Tenant: k.Tenant, Kind: string(k.Kind), Direction: dir, Reason: k.Reason,
				Requests: c.Requests, LongBackoff: c.LongBackoff})
		}
	}
	return out
}
