package syncer

import (
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/vcsyncer/syncer/pkg/checkpoint/trackingqueue"
	"github.com/vcsyncer/syncer/pkg/fairqueue"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/retry"
)

// pipelineQueue is one pipeline's rate-limiting workqueue with, when fair queuing is on, the
// per-tenant fair ordering underneath (pkg/fairqueue).
type pipelineQueue struct {
	// Queue tracks every unfinished item for checkpoints (Snapshot, Size, Seed).
	*trackingqueue.Queue[resources.Request]
	fair *fairqueue.Queue[resources.Request] // nil with --fair-queuing=false
	// retries records the requests whose last reconciles failed (retries.go).
	retries *retry.Book
}

// queueShare is how a pipeline's fair queue shares its workers: workers is the number of
// workers draining it (a tenant holds at most its weighted share of them while other tenants
// have requests queued: fairqueue.Options.Workers), reserve how many of them no tenant may take
// beyond its share (fairqueue.Options.Reserve), limiter (may be nil) what holds a tenant's
// requests back (the super write share: fairqueue.Options.Limiter), slowAfter the mean time a
// tenant's requests hold a worker from which it is held to its share among the active tenants
// (fairqueue.Options.SlowAfter; 0: off).
type queueShare struct {
	workers, reserve int
	limiter          fairqueue.Limiter
	slowAfter        time.Duration
}

// newPipelineQueue builds the queue stack rate limiting → delaying → tracking → client-go Typed
// queue → ordering (fair or FIFO) (pkg/checkpoint/trackingqueue). share configures the fair
// queue's worker cap, reserve and limiter. weight returns a tenant's fair-queue weight; observe
// (may be nil) receives each popped item's tenant and time in queue.
func newPipelineQueue(name string, fair bool, share queueShare, weight func(string) int, observe func(string, time.Duration)) *pipelineQueue {
	return newPipelineQueueWith(name, fair, share, weight, observe, 100*time.Millisecond)
}

// newPipelineQueueWith is newPipelineQueue with the first retry's backoff base (tests shorten it).
func newPipelineQueueWith(name string, fair bool, share queueShare, weight func(string) int, observe func(string, time.Duration), base time.Duration) *pipelineQueue {
	// Per-item exponential backoff from 100ms to 60s, and a 200 qps / 500 burst bucket per
	// tenant (retry.TenantBuckets), as client-go's default controller rate limiter but with a
	// shorter ceiling so a failed object is retried within a minute once its cause is fixed.
	book := retry.NewBook(time.Now)
	rl := retry.NewBackoff(workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[resources.Request](base, 60*time.Second),
		retry.NewTenantBuckets(),
	), book)
	pq := &pipelineQueue{retries: book}
	var ordering workqueue.Queue[resources.Request]
	if fair {
		pq.fair = fairqueue.New(fairqueue.Options[resources.Request]{
			TenantOf:  func(r resources.Request) string { return r.Tenant },
			Weight:    weight,
			Observe:   observe,
			Workers:   share.workers,
			Reserve:   share.reserve,
			Limiter:   share.limiter,
			SlowAfter: share.slowAfter,
			Delayed:   writeShareDelayed,
		})
		ordering = pq.fair
	} else {
		ordering = workqueue.DefaultQueue[resources.Request]()
	}
	pq.Queue = trackingqueue.New(trackingqueue.Config[resources.Request]{Name: name, RateLimiter: rl, Storage: ordering})
	return pq
}

// Get waits, with fair queuing, until the fair queue has a request this worker may take (its
// tenant under its cap, not held back for its write share: fairqueue.Queue.Wait), then takes
// the next request. It reports shutdown once ShutDown was called.
func (q *pipelineQueue) Get() (resources.Request, bool) {
	if q.fair != nil && !q.fair.Wait() {
		return resources.Request{}, true
	}
	return q.Queue.Get()
}

// ShutDown releases the workers waiting in Get and shuts the queue down.
func (q *pipelineQueue) ShutDown() {
	if q.fair != nil {
		q.fair.Close()
	}
	q.Queue.ShutDown()
}

// Done marks r as finished by its worker: it frees the worker slot counted against r's tenant
// in the fair queue, then calls the tracking queue's Done (which re-queues r if it was added
// while processing). Every Get is followed by exactly one Done, as client-go requires.
func (q *pipelineQueue) Done(r resources.Request) {
	if q.fair != nil {
		q.fair.Done(r)
	}
	q.Queue.Done(r)
}

// addHigh enqueues a live event (high priority within its tenant).
func (q *pipelineQueue) addHigh(r resources.Request) {
	if q.fair != nil {
		q.fair.MarkHigh(r)
	}
	q.Add(r)
}

// addLow enqueues bulk work (initial list, resync) at low priority within its tenant.
func (q *pipelineQueue) addLow(r resources.Request) {
	if q.fair != nil {
		q.fair.MarkLow(r)
	}
	q.Add(r)
}

// stats returns per-tenant depth and oldest-item age (empty without fair queuing).
func (q *pipelineQueue) stats() map[string]fairqueue.TenantStats {
	if q.fair == nil {
		return nil
	}
	return q.fair.Stats()
}
