package syncer

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/checkpoint/trackingqueue"
	"github.com/vcsyncer/syncer/pkg/fairqueue"
	"github.com/vcsyncer/syncer/pkg/handover"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/retry"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Processed returns how many reconciles (downward and upward, successful or not) the syncer
// has run since it started.
func (s *Syncer) Processed() int64 { return s.processed.Load() }

// weight returns a tenant's fair-queue weight (Tenant.spec.weight), 1 for unknown tenants.
func (s *Syncer) weight(tenant string) int {
	if s.registry == nil {
		return 1
	}
	if c, ok := s.registry.Get(tenant); ok {
		return int(c.Weight())
	}
	return 1
}

// work is one worker of a pipeline: it reconciles requests of q (s.process) until q shuts down.
func (s *Syncer) work(ctx context.Context, q *pipelineQueue, down bool) {
	s.workWith(ctx, q, down, s.process)
}

// workWith is work with the reconcile passed in (tests pass a fake). A request whose reconcile
// succeeded is forgotten by the rate limiter; one that failed with resources.ErrRejected is
// forgotten too (counted in vcsyncer_sync_rejected_total); any other failure is recorded
// (retryFailed: log line, vcsyncer_sync_retries_total, the pipeline's retry book) and re-added
// with backoff. A reconcile cut by the shutdown (ctx done) leaves its request in the queue, for
// the final checkpoint, and ends the worker.
func (s *Syncer) workWith(ctx context.Context, q *pipelineQueue, down bool, process func(context.Context, resources.Request, bool) error) {
	for {
		req, shutdown := q.Get()
		if shutdown {
			return
		}
		s.shard.Begin(req.Tenant) // before the fence check: Drain waits for it
		if s.shard.Fenced(req.Tenant) {
			s.shard.End(req.Tenant)
			if down {
				metrics.ShardFenced(directionDownward)
			} else {
				metrics.ShardFenced(directionUpward)
			}
			q.AddAfter(req, handover.FenceDelay) // kept, and in checkpoints, until owned again or the tenant goes
			q.Done(req)
			continue
		}
		pctx, writes := fairqueue.WithWriteCounter(ctx)
		var again time.Duration
		err := s.observeSync(req, down, func() error {
			err := process(pctx, req, down)
			var ra resources.RequeueAfter
			if errors.As(err, &ra) {
				again = ra.After // a success that must run again later
				return nil
			}
			return err
		})
		s.chargeWrites(req.Tenant, writes.Count())
		switch {
		case err == nil:
			q.Forget(req)
			q.retries.Succeeded(req)
			s.recordSync(req.Tenant)
			if again > 0 {
				q.AddAfter(req, again)
			}
		case ctx.Err() != nil:
			// Cut by the shutdown (its writes failed with the cancelled context): added back,
			// not retried, so it stays in the queue for the final checkpoint (queued again by
			// Done, or kept as an orphan after ShutDown). Its object's change is acked in its
			// Source already, so a resume would not enqueue it again: forgotten here, it would
			// be lost for good (a super copy left at an old version of its tenant object). The
			// worker stops: whatever it took next would be cut the same way.
			q.Forget(req)
			q.Add(req)
			s.shard.End(req.Tenant)
			q.Done(req)
			return
		case errors.Is(err, resources.ErrRejected):
			// Refused by the super cluster for a reason a retry does not change (reported on
			// the tenant object by reconcile.Report): it waits for the object's next change, a
			// policy change or a remediation scan instead of a timer.
			ctrl.LoggerFrom(ctx).V(1).Info("Not retrying: refused by the super cluster", "request", req.String(), "reason", err.Error())
			metrics.SyncRejected(req.Tenant, string(req.Kind))
			q.Forget(req)
			q.retries.Succeeded(req)
		default:
			s.retryFailed(ctx, q, req, down, err)
			q.AddRateLimited(req)
		}
		s.shard.End(req.Tenant)
		q.Done(req)
	}
}

func (s *Syncer) process(ctx context.Context, req resources.Request, down bool) (err error) {
	// A panic in one reconcile (one tenant's odd object) must not stop the syncer for every
	// tenant: it becomes an error, logged with its stack, and the request is retried with backoff.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w while syncing %s: %v", retry.ErrPanic, req, r)
			ctrl.LoggerFrom(ctx).Error(err, "Recovered from a panic in a reconcile", "stack", string(debug.Stack()))
		}
	}()
	s.processed.Add(1)
	if down && req.Kind == resources.KindPod && s.admission != nil {
		// A slot granted to this Pod and not taken in this run goes back to the window.
		defer s.admission.Settle(req.Tenant, req)
	}
	c, ok := s.registry.Get(req.Tenant)
	if !ok {
		return nil // tenant removed
	}
	if !c.Synced() {
		// Not connected or not synced yet: kept until it syncs (ClusterSynced drains it),
		// and in checkpoints meanwhile.
		s.resume.Park(req, down, trackingqueue.DelayWindow{}, c)
		return nil
	}
	r, ok := s.resources[req.Kind]
	if !ok {
		return nil
	}
	if down {
		if skip, err := s.gate.SkipRefused(ctx, c, r, req); skip {
			return err // over limits.maxObjects: reported once; synced when promoted
		}
		return admit.IgnoreNamespaceRefused(s.downward(ctx, r, c, req))
	}
	return r.Upward(ctx, s.env, c, req.Namespace, req.Name)
}

// downward runs r's downward reconcile of req. A refusal for a namespace collision
// (admit.ErrNamespaceCollision, already reported on the tenant Namespace) is final and
// returns nil, so the request is not retried: it comes back when the super namespace is deleted
// (admit.Gate.EnqueueNamespaceColliders), when the object changes, or when the policy changes.
func (s *Syncer) downward(ctx context.Context, r resources.Resource, c *tenant.Cluster, req resources.Request) error {
	err := r.Downward(ctx, s.env, c, req.Namespace, req.Name)
	if errors.Is(err, admit.ErrNamespaceCollision) {
		ctrl.LoggerFrom(ctx).V(1).Info("Not syncing: the super namespace holds another namespace of the tenant",
			"request", req.String(), "reason", err.Error())
		return nil
	}
	return err
}
