package syncer

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/eventcache"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/event"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// EventOptions configures the Event pipeline, which copies super Events about synced objects
// into the tenants (pkg/resources/event).
type EventOptions struct {
	// Workers is the number of goroutines writing Event copies into tenants, separate from the
	// upward workers. Defaults to 2.
	Workers int
	// QPS and Burst are each tenant's token bucket for Event writes (per second, and at once).
	// Default to 10 and 50.
	QPS   float64
	Burst int
	// MaxPending is the number of Event copies that may wait per tenant; past it Normals are
	// dropped first. Defaults to 1000.
	MaxPending int
	// NormalMaxDelay bounds how long a Normal Event waits while the downward or upward
	// pipeline has requests waiting (Warnings never wait for them). Defaults to 30s.
	NormalMaxDelay time.Duration
}

// eventPipeline is the Event kind's own queue and workers: Event copies never take an upward
// worker from Pod statuses, Normal ones wait while the Pod pipelines have work waiting, and
// each tenant's are paced, prioritised and bounded by event.Queue.
type eventPipeline struct {
	r       event.Copier
	q       *event.Queue
	workers int
}

// newEventPipeline returns the pipeline for Event resource r. busy reports whether the Pod
// pipelines have requests waiting: Normal Events then wait (event.QueueOptions.Busy).
func newEventPipeline(r event.Copier, o EventOptions, busy func() bool) *eventPipeline {
	if o.Workers <= 0 {
		o.Workers = 2
	}
	return &eventPipeline{r: r, workers: o.Workers, q: event.NewQueue(event.QueueOptions{
		QPS: o.QPS, Burst: o.Burst, MaxPending: o.MaxPending, NormalMaxDelay: o.NormalMaxDelay,
		Busy: busy, OnDrop: metrics.EventDropped,
	})}
}

// eventHandler queues the copies of a super Event's changes for the synced tenants it is about
// (in their super namespaces, about an object synced for them, not yet shown by their copy).
// Deleted super Events are not followed: tenant copies expire with the tenant's --event-ttl.
func (s *Syncer) eventHandler() cache.ResourceEventHandler {
	queue := func(obj any) {
		e, ok := eventcache.From(obj)
		if !ok || s.registry == nil {
			return
		}
		clusters := s.syncedClusters()
		s.queueEvent(e, clusters)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: queue,
		UpdateFunc: func(o, n any) {
			if !sameVersion(o, n) {
				queue(n)
			}
		},
	}
}

// queueEvent queues the copy of super Event e into those of clusters it maps to, when the
// caches say a write may be needed (event.Resource.NeedsWrite).
func (s *Syncer) queueEvent(e *corev1.Event, clusters []*tenant.Cluster) {
	for _, req := range s.events.r.MapSuper(s.env, e, clusters) {
		for _, c := range clusters {
			if c.Name == req.Tenant && s.events.r.NeedsWrite(s.env, c, e, req.Namespace) {
				typ := event.Class(e.Type)
				metrics.EventQueued(req.Tenant, typ)
				s.events.q.Add(req, typ)
			}
		}
	}
}

// queueTenantEvents queues, for tenant c that has just synced, the copies of the super Events
// about its objects that its copies do not show yet.
func (s *Syncer) queueTenantEvents(c *tenant.Cluster) {
	if s.events == nil {
		return
	}
	for _, obj := range s.events.r.SuperInformer(s.env).GetStore().List() {
		if e, ok := eventcache.From(obj); ok {
			s.queueEvent(e, []*tenant.Cluster{c})
		}
	}
}

// runEvents runs the Event pipeline's workers until ctx is done, then shuts its queue down.
func (s *Syncer) runEvents(ctx context.Context, wg *sync.WaitGroup) {
	if s.events == nil {
		return
	}
	for range s.events.workers {
		wg.Go(func() { s.eventWorker(ctx) })
	}
	wg.Go(func() {
		<-ctx.Done()
		s.events.q.ShutDown()
	})
}

// eventWorker writes Event copies taken from the pipeline's queue until it shuts down. A
// failed write is retried by the queue with backoff, a few times, then dropped and counted.
func (s *Syncer) eventWorker(ctx context.Context) {
	for {
		req, typ, ok := s.events.q.Get(ctx)
		if !ok {
			return
		}
		err := s.writeEvent(ctx, req)
		if err != nil && ctx.Err() == nil {
			ctrl.LoggerFrom(ctx).V(1).Info("Retrying Event copy", "request", req.String(), "reason", err.Error())
		}
		s.events.q.Done(req, typ, err != nil && ctx.Err() == nil)
	}
}

// writeEvent runs the Event resource's Upward for req, recovering from a panic as process does.
func (s *Syncer) writeEvent(ctx context.Context, req resources.Request) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic while syncing %s: %v", req, r)
			ctrl.LoggerFrom(ctx).Error(err, "Recovered from a panic in a reconcile", "stack", string(debug.Stack()))
		}
	}()
	c, ok := s.registry.Get(req.Tenant)
	if !ok || !c.Synced() {
		return nil // removed, or re-queued by queueTenantEvents once it syncs again
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, eventWriteTimeout)
	defer cancel()
	err = s.events.r.Upward(ctx, s.env, c, req.Namespace, req.Name)
	metrics.SyncDone(req.Tenant, string(req.Kind), metrics.Upward, time.Since(start), err)
	return err
}

// eventWriteTimeout bounds one Event copy's writes into a tenant, below --tenant-request-timeout:
// an Event is worth less than a worker held for 30 s. A write past it fails and is retried
// (event.Queue's retries).
const eventWriteTimeout = 5 * time.Second

// forgetEvents drops removed tenant name's waiting Event copies and token bucket.
func (s *Syncer) forgetEvents(name string) {
	if s.events != nil {
		s.events.q.Forget(name)
	}
}
