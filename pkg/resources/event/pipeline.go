package event

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/eventcache"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// PipelineOptions configures the Event pipeline, which copies super Events about synced
// objects into the tenants.
type PipelineOptions struct {
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

// Tenants is how the Pipeline sees the syncer's tenants.
type Tenants struct {
	// Synced returns the registered tenant Clusters whose caches have synced.
	Synced func() []*tenant.Cluster
	// Get returns the registered tenant Cluster named name.
	Get func(name string) (*tenant.Cluster, bool)
}

// Pipeline is the Event kind's own queue and workers: Event copies never take an upward
// worker from Pod statuses, Normal ones wait while the Pod pipelines have work waiting, and
// each tenant's are paced, prioritised and bounded by Queue.
type Pipeline struct {
	r       Copier
	env     *resources.Env
	tenants Tenants
	q       *Queue
	workers int
}

// NewPipeline returns the pipeline for Event resource r. busy reports whether the Pod
// pipelines have requests waiting: Normal Events then wait (QueueOptions.Busy).
func NewPipeline(r Copier, env *resources.Env, tenants Tenants, o PipelineOptions, busy func() bool) *Pipeline {
	if o.Workers <= 0 {
		o.Workers = 2
	}
	return &Pipeline{r: r, env: env, tenants: tenants, workers: o.Workers, q: NewQueue(QueueOptions{
		QPS: o.QPS, Burst: o.Burst, MaxPending: o.MaxPending, NormalMaxDelay: o.NormalMaxDelay,
		Busy: busy, OnDrop: metrics.EventDropped,
	})}
}

// Pending returns the Event copies waiting, per tenant (for metrics.RegisterEventStats).
func (p *Pipeline) Pending() map[string]int { return p.q.Pending() }

// Handler queues the copies of a super Event's changes for the synced tenants it is about
// (in their super namespaces, about an object synced for them, not yet shown by their copy).
// Deleted super Events are not followed: tenant copies expire with the tenant's --event-ttl.
func (p *Pipeline) Handler() cache.ResourceEventHandler {
	queue := func(obj any) {
		e, ok := eventcache.From(obj)
		if !ok {
			return
		}
		p.queue(e, p.tenants.Synced())
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

// sameVersion reports whether an update event carries the object version it had (a resync).
func sameVersion(oldObj, newObj any) bool {
	o, ok1 := oldObj.(metav1.Object)
	n, ok2 := newObj.(metav1.Object)
	return ok1 && ok2 && o.GetUID() == n.GetUID() && o.GetResourceVersion() == n.GetResourceVersion()
}

// queue queues the copy of super Event e into those of clusters it maps to, when the caches
// say a write may be needed (Copier.NeedsWrite).
func (p *Pipeline) queue(e *corev1.Event, clusters []*tenant.Cluster) {
	if len(clusters) == 0 {
		return
	}
	for _, req := range p.r.MapSuper(p.env, e, clusters) {
		for _, c := range clusters {
			if c.Name == req.Tenant && p.r.NeedsWrite(p.env, c, e, req.Namespace) {
				typ := Class(e.Type)
				metrics.EventQueued(req.Tenant, typ)
				p.q.Add(req, typ)
			}
		}
	}
}

// QueueTenant queues, for tenant c that has just synced, the copies of the super Events
// about its objects that its copies do not show yet.
func (p *Pipeline) QueueTenant(c *tenant.Cluster) {
	for _, obj := range p.r.SuperInformer(p.env).GetStore().List() {
		if e, ok := eventcache.From(obj); ok {
			p.queue(e, []*tenant.Cluster{c})
		}
	}
}

// Run runs the pipeline's workers in wg until ctx is done, then shuts its queue down.
func (p *Pipeline) Run(ctx context.Context, wg *sync.WaitGroup) {
	for range p.workers {
		wg.Go(func() { p.work(ctx) })
	}
	wg.Go(func() {
		<-ctx.Done()
		p.q.ShutDown()
	})
}

// work writes Event copies taken from the pipeline's queue until it shuts down. A failed
// write is retried by the queue with backoff, a few times, then dropped and counted.
func (p *Pipeline) work(ctx context.Context) {
	for {
		req, typ, ok := p.q.Get(ctx)
		if !ok {
			return
		}
		err := p.write(ctx, req)
		if err != nil && ctx.Err() == nil {
			ctrl.LoggerFrom(ctx).V(1).Info("Retrying Event copy", "request", req.String(), "reason", err.Error())
		}
		p.q.Done(req, typ, err != nil && ctx.Err() == nil)
	}
}

// write runs the Event resource's Upward for req, recovering from a panic as the syncer's
// workers do.
func (p *Pipeline) write(ctx context.Context, req resources.Request) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic while syncing %s: %v", req, r)
			ctrl.LoggerFrom(ctx).Error(err, "Recovered from a panic in a reconcile", "stack", string(debug.Stack()))
		}
	}()
	c, ok := p.tenants.Get(req.Tenant)
	if !ok || !c.Synced() {
		return nil // removed, or re-queued by QueueTenant once it syncs again
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	err = p.r.Upward(ctx, p.env, c, req.Namespace, req.Name)
	metrics.SyncDone(req.Tenant, string(req.Kind), metrics.Upward, time.Since(start), err)
	return err
}

// writeTimeout bounds one Event copy's writes into a tenant, below --tenant-request-timeout:
// an Event is worth less than a worker held for 30 s. A write past it fails and is retried
// (Queue's retries).
const writeTimeout = 5 * time.Second

// Forget drops removed tenant name's waiting Event copies and token bucket.
func (p *Pipeline) Forget(name string) { p.q.Forget(name) }
