package event

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/vcsyncer/syncer/pkg/resources"
)

// Event types (corev1.EventTypeNormal, corev1.EventTypeWarning) as the queue's classes.
const (
	TypeNormal  = "Normal"
	TypeWarning = "Warning"
)

// Reasons a queued Event copy is dropped (label values of the drop counter).
const (
	// DropQueueFull: the tenant's queue held QueueOptions.MaxPending copies; a Warning takes
	// the place of the oldest Normal, a Normal (or a Warning when no Normal is left) is
	// dropped.
	DropQueueFull = "queueFull"
	// DropFailed: the write failed QueueOptions.MaxRetries+1 times.
	DropFailed = "failed"
)

// QueueOptions configures a Queue.
type QueueOptions struct {
	// QPS is the sustained rate of Event writes into one tenant (per second). Defaults to 10.
	QPS float64
	// Burst is the number of Event writes into one tenant allowed at once. Defaults to 50.
	Burst int
	// MaxPending is the number of Event copies that may wait per tenant. Defaults to 1000.
	MaxPending int
	// MaxRetries is how often a failed write is retried (with backoff) before it is dropped.
	// Defaults to 3.
	MaxRetries int
	// RetryBase is the first retry's delay, doubled per further retry. Defaults to 1s.
	RetryBase time.Duration
	// Busy, when set, reports whether other work of the syncer (its Pod pipelines) is waiting.
	// While it is, Normals wait (Warnings do not), each at most NormalMaxDelay.
	Busy func() bool
	// NormalMaxDelay bounds how long Busy holds a Normal back. Defaults to 30s.
	NormalMaxDelay time.Duration
	// BusyPoll is how often a worker waiting only for Busy to end asks it again. Defaults to
	// 200ms.
	BusyPoll time.Duration
	// OnDrop, when set, is called (without the queue's lock) for every dropped copy with its
	// tenant, Event type and reason (DropQueueFull, DropFailed).
	OnDrop func(tenant, eventType, reason string)
	// Now returns the current time (tests). Defaults to time.Now.
	Now func() time.Time
}

// Queue holds the super Events waiting to be copied into their tenants: per tenant, Warnings
// before Normals, each in arrival order; Normals held back while the syncer's other work waits
// (QueueOptions.Busy), so a burst of Pods is not slowed by its own Scheduled Events; tenants served round-robin; each tenant's writes paced
// by its own token bucket (QPS, Burst), so a tenant whose Pods produce a storm of Events waits
// for its own tokens and never delays another tenant's Events. A request is held at most once
// (a super Event that changes while its copy waits is written once, from the latest cached
// version: repeats coalesce) and handed to one worker at a time (workqueue semantics: a
// request added while being processed is held until Done). When a tenant's queue is full,
// Normals are dropped first: a Warning takes the place of the oldest waiting Normal. Create it
// with NewQueue.
type Queue struct {
	opts QueueOptions
	wake chan struct{} // one token: an item may be ready
	stop chan struct{} // closed by ShutDown

	mu       sync.Mutex
	tenants  map[string]*tenantQueue
	ring     []string // tenants in round-robin order
	next     int      // ring index served next
	shutdown bool
}

// tenantQueue is one tenant's waiting Event requests.
type tenantQueue struct {
	warnings, normals []resources.Request
	// waiting maps a request to its class while it is in warnings or normals.
	waiting map[resources.Request]string
	// since is when each waiting Normal was queued (kept when a change coalesces with it).
	since map[resources.Request]time.Time
	// processing holds requests handed to a worker; dirty holds those added meanwhile (with
	// their class), re-queued on Done.
	processing map[resources.Request]bool
	dirty      map[resources.Request]string
	failures   map[resources.Request]int
	limiter    *rate.Limiter
}

// NewQueue returns an empty Queue with o's defaults filled in.
func NewQueue(o QueueOptions) *Queue {
	if o.QPS <= 0 {
		o.QPS = 10
	}
	if o.Burst <= 0 {
		o.Burst = 50
	}
	if o.MaxPending <= 0 {
		o.MaxPending = 1000
	}
	if o.MaxRetries < 0 {
		o.MaxRetries = 0
	} else if o.MaxRetries == 0 {
		o.MaxRetries = 3
	}
	if o.RetryBase <= 0 {
		o.RetryBase = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NormalMaxDelay <= 0 {
		o.NormalMaxDelay = 30 * time.Second
	}
	if o.BusyPoll <= 0 {
		o.BusyPoll = 200 * time.Millisecond
	}
	return &Queue{opts: o, wake: make(chan struct{}, 1), stop: make(chan struct{}), tenants: map[string]*tenantQueue{}}
}

func (q *Queue) tenant(name string) *tenantQueue {
	t, ok := q.tenants[name]
	if !ok {
		t = &tenantQueue{
			waiting: map[resources.Request]string{}, since: map[resources.Request]time.Time{}, processing: map[resources.Request]bool{},
			dirty: map[resources.Request]string{}, failures: map[resources.Request]int{},
			limiter: rate.NewLimiter(rate.Limit(q.opts.QPS), q.opts.Burst),
		}
		q.tenants[name] = t
		q.ring = append(q.ring, name)
	}
	return t
}

func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Class returns the queue class of an Event type: TypeWarning for "Warning", TypeNormal for
// anything else (the apiserver accepts only these two; a custom type is treated as Normal).
func Class(eventType string) string {
	if eventType == TypeWarning {
		return TypeWarning
	}
	return TypeNormal
}

// Add queues req (an Event request, req.Tenant its tenant) of eventType (TypeWarning; any
// other value counts as TypeNormal). A request already waiting is not added again (a Warning
// moves a waiting Normal of the same name up); one being processed is queued again on Done.
// It reports whether req is waiting (or will be) afterwards; false means it was dropped
// (OnDrop was called).
func (q *Queue) Add(req resources.Request, eventType string) bool {
	class := Class(eventType)
	q.mu.Lock()
	if q.shutdown {
		q.mu.Unlock()
		return false
	}
	t := q.tenant(req.Tenant)
	if t.processing[req] {
		if t.dirty[req] != TypeWarning {
			t.dirty[req] = class
		}
		q.mu.Unlock()
		return true
	}
	dropped, ok := q.push(t, req, class)
	q.mu.Unlock()
	q.signal()
	q.dropped(req.Tenant, dropped)
	return ok
}

// push adds req of class to t under q.mu. It returns the classes of the requests dropped to
// make room (or req's own when it is dropped) and whether req is waiting.
func (q *Queue) push(t *tenantQueue, req resources.Request, class string) ([]string, bool) {
	if have, ok := t.waiting[req]; ok {
		if have == TypeNormal && class == TypeWarning {
			t.normals = remove(t.normals, req)
			delete(t.since, req)
			t.warnings = append(t.warnings, req)
			t.waiting[req] = TypeWarning
		}
		return nil, true
	}
	var dropped []string
	if len(t.waiting) >= q.opts.MaxPending {
		if class != TypeWarning || len(t.normals) == 0 {
			delete(t.failures, req)
			return []string{class}, false
		}
		oldest := t.normals[0]
		t.normals = t.normals[1:]
		delete(t.waiting, oldest)
		delete(t.since, oldest)
		delete(t.failures, oldest)
		dropped = append(dropped, TypeNormal)
	}
	if class == TypeWarning {
		t.warnings = append(t.warnings, req)
	} else {
		t.normals = append(t.normals, req)
		t.since[req] = q.opts.Now()
	}
	t.waiting[req] = class
	return dropped, true
}

func (q *Queue) dropped(tenant string, classes []string) {
	if q.opts.OnDrop == nil {
		return
	}
	for _, c := range classes {
		q.opts.OnDrop(tenant, c, DropQueueFull)
	}
}

func remove(rs []resources.Request, r resources.Request) []resources.Request {
	for i, x := range rs {
		if x == r {
			return append(rs[:i], rs[i+1:]...)
		}
	}
	return rs
}

// Get blocks until a request may be written (its tenant has one waiting and a token in its
// bucket), marks it as processing and returns it with its Event type. ok is false once ctx is
// done or the queue is shut down. Every request returned must be passed to Done.
func (q *Queue) Get(ctx context.Context) (req resources.Request, eventType string, ok bool) {
	for {
		req, class, wait, got, shut := q.tryGet()
		if got {
			q.signal() // another item may be ready for another worker
			return req, class, true
		}
		if shut {
			return resources.Request{}, "", false
		}
		var timer *time.Timer
		var fire <-chan time.Time
		if wait > 0 {
			timer = time.NewTimer(wait)
			fire = timer.C
		}
		select {
		case <-ctx.Done():
		case <-q.stop:
		case <-q.wake:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return resources.Request{}, "", false
		}
	}
}

// tryGet pops the next request whose tenant has a token, round-robin over tenants, Warnings
// first. While other tenants have requests waiting, a tenant with a write in flight is
// skipped: a tenant whose apiserver answers slowly holds at most one worker, never all of
// them. Without a request it returns how long until the first tenant with requests has a
// token (0: none waiting).
func (q *Queue) tryGet() (req resources.Request, class string, wait time.Duration, ok, shut bool) {
	busy := q.opts.Busy != nil && q.opts.Busy()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return req, "", 0, false, true
	}
	now := q.opts.Now()
	n := len(q.ring)
	waitingTenants := 0
	for _, name := range q.ring {
		if len(q.tenants[name].waiting) > 0 {
			waitingTenants++
		}
	}
	for i := range n {
		idx := (q.next + i) % n
		t := q.tenants[q.ring[idx]]
		if len(t.waiting) == 0 || len(t.processing) > 0 && waitingTenants > 1 {
			continue
		}
		if len(t.warnings) == 0 && busy {
			// Only Normals: they wait for the Pod pipelines, up to NormalMaxDelay.
			if left := q.opts.NormalMaxDelay - now.Sub(t.since[t.normals[0]]); left > 0 {
				if d := min(left, q.opts.BusyPoll); wait == 0 || d < wait {
					wait = d
				}
				continue
			}
		}
		r := t.limiter.ReserveN(now, 1)
		if d := r.DelayFrom(now); d > 0 {
			r.CancelAt(now)
			if wait == 0 || d < wait {
				wait = d
			}
			continue
		}
		if len(t.warnings) > 0 {
			req, t.warnings, class = t.warnings[0], t.warnings[1:], TypeWarning
		} else {
			req, t.normals, class = t.normals[0], t.normals[1:], TypeNormal
		}
		delete(t.waiting, req)
		delete(t.since, req)
		t.processing[req] = true
		q.next = (idx + 1) % n
		return req, class, 0, true, false
	}
	return req, "", wait, false, false
}

// Done marks req, returned by Get, as finished. failed reports a write that failed: the
// request is retried after RetryBase·2^(n-1) for its n-th failure, up to MaxRetries times,
// then dropped (OnDrop with DropFailed). A request added while it was processed is queued
// again at once.
func (q *Queue) Done(req resources.Request, eventType string, failed bool) {
	q.mu.Lock()
	t, ok := q.tenants[req.Tenant]
	if !ok { // forgotten while processing
		q.mu.Unlock()
		return
	}
	delete(t.processing, req)
	class, readd := t.dirty[req]
	delete(t.dirty, req)
	var retryIn time.Duration
	var drop []string
	switch {
	case readd:
		delete(t.failures, req)
		drop, _ = q.push(t, req, class)
	case failed:
		t.failures[req]++
		if n := t.failures[req]; n > q.opts.MaxRetries {
			delete(t.failures, req)
			q.mu.Unlock()
			if q.opts.OnDrop != nil {
				q.opts.OnDrop(req.Tenant, eventType, DropFailed)
			}
			return
		} else {
			retryIn = q.opts.RetryBase << (n - 1)
		}
	default:
		delete(t.failures, req)
	}
	q.mu.Unlock()
	q.dropped(req.Tenant, drop)
	if readd {
		q.signal()
	}
	if retryIn > 0 {
		time.AfterFunc(retryIn, func() { q.retry(req, eventType) })
	}
}

// retry queues a failed request again unless it was queued meanwhile, keeping its failure
// count.
func (q *Queue) retry(req resources.Request, eventType string) {
	q.mu.Lock()
	t, ok := q.tenants[req.Tenant]
	if !ok || q.shutdown || t.failures[req] == 0 {
		q.mu.Unlock()
		return
	}
	if t.processing[req] {
		if t.dirty[req] != TypeWarning {
			t.dirty[req] = eventType
		}
		q.mu.Unlock()
		return
	}
	drop, _ := q.push(t, req, Class(eventType))
	q.mu.Unlock()
	q.dropped(req.Tenant, drop)
	q.signal()
}

// Forget drops every request and the token bucket of tenant (a removed tenant).
func (q *Queue) Forget(tenant string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.tenants[tenant]; !ok {
		return
	}
	delete(q.tenants, tenant)
	for i, n := range q.ring {
		if n == tenant {
			q.ring = append(q.ring[:i], q.ring[i+1:]...)
			break
		}
	}
	if q.next >= len(q.ring) {
		q.next = 0
	}
}

// Len returns the number of requests waiting for tenant.
func (q *Queue) Len(tenant string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if t, ok := q.tenants[tenant]; ok {
		return len(t.waiting)
	}
	return 0
}

// Pending returns, per tenant with a queue, the number of requests waiting.
func (q *Queue) Pending() map[string]int {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make(map[string]int, len(q.tenants))
	for name, t := range q.tenants {
		out[name] = len(t.waiting)
	}
	return out
}

// ShutDown makes every Get return ok=false; later Adds are ignored.
func (q *Queue) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.shutdown {
		q.shutdown = true
		close(q.stop)
	}
}
