package latency

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/resources"
)

// lagKey is one request in one direction.
type lagKey struct {
	dir string
	req resources.Request
}

// podKey names one tenant Pod.
type podKey struct{ tenant, namespace, name string }

// podTimes are the phase boundaries of one tenant Pod's creation, on the syncer's clock:
// t0 its Add event reached the syncer, t1 a downward worker first took it, t2 its super Pod's
// Add event reached the syncer, t3 the super Pod's update with spec.nodeName (scheduled)
// reached the syncer, t4 an upward worker first took it after t3, and the phase ends when the
// tenant Pod's update with spec.nodeName (the syncer's binding) reaches the syncer.
type podTimes struct{ t0, t1, t2, t3, t4 time.Time }

// maxTrackedPodsPerTenant bounds the Pod-creation tracker per tenant (Pods whose creation has
// not finished, e.g. unschedulable ones); a tenant's new Pods beyond it are not tracked, so a
// tenant with many pending Pods never stops the measurement of another tenant's (memory: about
// 150 bytes per tracked Pod). podTrackTTL drops Pods whose creation has not finished after
// that long.
const (
	maxTrackedPodsPerTenant = 2000
	podTrackTTL             = 15 * time.Minute
)

// Tracker measures end-to-end lag and the Pod-creation phases.
//
// Where the clock starts: the time a change's event reached the syncer's handler (recorded
// with the request when it is enqueued as a live event), on this process's monotonic clock.
// Object metadata timestamps are not used: creationTimestamp and deletionTimestamp have
// one-second resolution and exist only for creates and deletes, managedFields times are
// stripped by the tenant and super cache transforms (and are also whole seconds), and all of
// them come from another host's clock (the tenant's or super apiserver's), so clock skew
// between hosts would show up as lag. The cost of this choice: the lag leaves out the watch
// delivery from the apiserver to the syncer's informer (normally milliseconds), and changes
// found by the initial list of a tenant (ClusterSynced) or by remediation scans carry no
// event time and are not measured.
//
// A request enqueued again while it waits keeps its first arrival time, so the lag is that of
// the oldest change not yet synced; a failed reconcile keeps the clock running until a
// reconcile of the request succeeds.
//
// The zero value is ready to use.
type Tracker struct {
	mu        sync.Mutex
	arrived   map[lagKey]time.Time
	pods      map[podKey]*podTimes
	perTenant map[string]int       // tracked Pods per tenant (absent when 0)
	swept     map[string]time.Time // last sweep of a tenant at its cap for expired Pods
}

// dropPodLocked stops tracking k (if tracked).
func (t *Tracker) dropPodLocked(k podKey) {
	if _, ok := t.pods[k]; !ok {
		return
	}
	delete(t.pods, k)
	if t.perTenant[k.tenant] <= 1 {
		delete(t.perTenant, k.tenant)
	} else {
		t.perTenant[k.tenant]--
	}
}

// Arrival records that a live change for req reached the syncer at now, unless an earlier
// change of req is still waiting.
func (t *Tracker) Arrival(dir string, req resources.Request, live bool, now time.Time) {
	if !live {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.arrived == nil {
		t.arrived = map[lagKey]time.Time{}
	}
	k := lagKey{dir, req}
	if _, ok := t.arrived[k]; !ok {
		t.arrived[k] = now
	}
}

// Popped is called when a worker takes req at now: it returns (and forgets) the arrival time
// of the oldest change the reconcile will handle (zero if none was recorded), and ends the
// Pod-creation queue phases.
func (t *Tracker) Popped(dir string, req resources.Request, now time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := lagKey{dir, req}
	at := t.arrived[k]
	delete(t.arrived, k)
	if req.Kind == resources.KindPod {
		if p := t.pods[podKey{req.Tenant, req.Namespace, req.Name}]; p != nil {
			switch {
			case dir == metrics.Downward && p.t1.IsZero():
				p.t1 = now
				metrics.PodPhase(req.Tenant, metrics.PhaseDownwardQueue, p.t1.Sub(p.t0))
			case dir == metrics.Upward && !p.t3.IsZero() && p.t4.IsZero():
				p.t4 = now
				metrics.PodPhase(req.Tenant, metrics.PhaseUpwardQueue, p.t4.Sub(p.t3))
			}
		}
	}
	return at
}

// Requeued puts back the arrival time of a change whose reconcile failed (keeping an earlier one).
func (t *Tracker) Requeued(dir string, req resources.Request, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.arrived == nil {
		t.arrived = map[lagKey]time.Time{}
	}
	k := lagKey{dir, req}
	if cur, ok := t.arrived[k]; !ok || at.Before(cur) {
		t.arrived[k] = at
	}
}

// Forget drops a removed tenant's pending clocks.
func (t *Tracker) Forget(tenant string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.arrived {
		if k.req.Tenant == tenant {
			delete(t.arrived, k)
		}
	}
	for k := range t.pods {
		if k.tenant == tenant {
			delete(t.pods, k)
		}
	}
	delete(t.perTenant, tenant)
	delete(t.swept, tenant)
}

// podAdded starts tracking a new tenant Pod (t0), unless it is already bound or terminating.
func (t *Tracker) podAdded(tenant string, p metav1.Object, nodeName string, now time.Time) {
	if nodeName != "" || p.GetDeletionTimestamp() != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pods == nil {
		t.pods, t.perTenant = map[podKey]*podTimes{}, map[string]int{}
	}
	k := podKey{tenant, p.GetNamespace(), p.GetName()}
	if _, ok := t.pods[k]; ok {
		return
	}
	if t.perTenant[tenant] >= maxTrackedPodsPerTenant {
		// Drop the tenant's expired Pods: O(tracked Pods), at most once a minute per tenant.
		if now.Sub(t.swept[tenant]) >= time.Minute {
			if t.swept == nil {
				t.swept = map[string]time.Time{}
			}
			t.swept[tenant] = now
			for pk, pt := range t.pods {
				if pk.tenant == tenant && now.Sub(pt.t0) > podTrackTTL {
					t.dropPodLocked(pk)
				}
			}
		}
		if t.perTenant[tenant] >= maxTrackedPodsPerTenant {
			return
		}
	}
	t.pods[k] = &podTimes{t0: now}
	t.perTenant[tenant]++
}

// podBound ends a tracked tenant Pod's creation when the syncer's binding reached the syncer.
// A queue phase whose worker took the request before the tracker saw the event that opened
// the phase (handlers run concurrently) is recorded as 0.
func (t *Tracker) podBound(k podKey, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.pods[k]
	if p == nil {
		return
	}
	t.dropPodLocked(k)
	if p.t3.IsZero() {
		return // bound without a super scheduling the tracker saw (e.g. preset nodeName): not a full creation
	}
	if p.t4.IsZero() {
		p.t4 = p.t3
		metrics.PodPhase(k.tenant, metrics.PhaseUpwardQueue, 0)
	}
	metrics.PodPhase(k.tenant, metrics.PhaseUpwardProcess, now.Sub(p.t4))
	metrics.PodCreated(k.tenant, now.Sub(p.t0))
	// Inside the syncer: everything but the super scheduling (t2 → t3).
	metrics.PodHeld(k.tenant, now.Sub(p.t0)-p.t3.Sub(p.t2))
}

// podGone stops tracking a deleted tenant Pod.
func (t *Tracker) podGone(k podKey) {
	t.mu.Lock()
	t.dropPodLocked(k)
	t.mu.Unlock()
}

// superPodCreated marks t2 (and t3 when the super Pod was created already scheduled).
func (t *Tracker) superPodCreated(k podKey, scheduled bool, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.pods[k]
	if p == nil || !p.t2.IsZero() {
		return
	}
	if p.t1.IsZero() {
		p.t1 = p.t0
		metrics.PodPhase(k.tenant, metrics.PhaseDownwardQueue, 0)
	}
	p.t2 = now
	metrics.PodPhase(k.tenant, metrics.PhaseDownwardProcess, p.t2.Sub(p.t1))
	if scheduled {
		p.t3 = now
		metrics.PodPhase(k.tenant, metrics.PhaseSuperScheduling, 0)
	}
}

// superPodScheduled marks t3.
func (t *Tracker) superPodScheduled(k podKey, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.pods[k]
	if p == nil || p.t2.IsZero() || !p.t3.IsZero() {
		return
	}
	p.t3 = now
	metrics.PodPhase(k.tenant, metrics.PhaseSuperScheduling, p.t3.Sub(p.t2))
}

// TenantPodHandler feeds the tracker from tenant's Pod informer (register it when the
// tenant's informers start; events before synced reports true are the initial list, not new
// Pods). The tracker's handlers read a Pod's metadata and spec.nodeName only
// (podcache.NodeNameOf): they run for every Pod event, where decoding a cached Pod whole would
// cost a spec and a status decode each time.
func (t *Tracker) TenantPodHandler(tenant string, synced func() bool) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			m, ok := podcache.MetaOf(obj)
			if ok && synced() {
				node, _ := podcache.NodeNameOf(obj)
				t.podAdded(tenant, m, node, time.Now())
			}
		},
		UpdateFunc: func(o, n any) {
			if bound(o, n) {
				if m, ok := podcache.MetaOf(n); ok {
					t.podBound(podKey{tenant, m.Namespace, m.Name}, time.Now())
				}
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if m, ok := podcache.MetaOf(obj); ok {
				t.podGone(podKey{tenant, m.Namespace, m.Name})
			}
		},
	}
}

// bound reports whether a Pod's update event (old and new object, cached or plain Pods) set
// its spec.nodeName.
func bound(o, n any) bool {
	on, ok1 := podcache.NodeNameOf(o)
	nn, ok2 := podcache.NodeNameOf(n)
	return ok1 && ok2 && on == "" && nn != ""
}

// SuperPodHandler feeds the tracker from the super Pod informer (super Pods the syncer owns).
func (t *Tracker) SuperPodHandler() cache.ResourceEventHandler {
	key := func(obj any) (podKey, bool) {
		m, ok := podcache.MetaOf(obj)
		if !ok {
			return podKey{}, false
		}
		o, owned := conversion.OwnerOf(m)
		if !owned {
			return podKey{}, false
		}
		return podKey{o.Tenant, o.Namespace, o.Name}, true
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if k, ok := key(obj); ok {
				node, _ := podcache.NodeNameOf(obj)
				t.superPodCreated(k, node != "", time.Now())
			}
		},
		UpdateFunc: func(o, n any) {
			if k, ok := key(n); ok && bound(o, n) {
				t.superPodScheduled(k, time.Now())
			}
		},
	}
}
