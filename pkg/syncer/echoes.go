package syncer

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
)

// echoExpiry is how long a super Pod announced by podEchoes.Expect waits for its Add before it
// is forgotten (the Add was dropped before the handler looked: not ready, acked, tenant gone).
const echoExpiry = time.Minute

// podEchoes are the super Pods the Pod reconciler is creating, so that the super watch's Add of
// each, the reconciler's own write coming back, does not queue its tenant Pod downward again:
// that reconcile would read both Pods and find nothing to do. A later change of the super Pod
// by anyone else is an Update and still queues it (unless a relist folds it into the Add; the
// next change or remediation scan repairs it then). The super Pod handler skips an Add only
// while the tenant Pod is still the one created for (Syncer.tenantPodAsCreated). Safe for
// concurrent use; it holds one entry per create in flight or whose Add is not seen yet: an
// entry older than echoExpiry no longer matches and is swept once the set has grown to sweepAt.
type podEchoes struct {
	mu      sync.Mutex
	pending map[echoKey]podEcho
	sweepAt int
	now     func() time.Time
}

// echoKey is a super Pod's namespace and name.
type echoKey struct{ namespace, name string }

type podEcho struct {
	tenantUID string
	at        time.Time
	answered  time.Time // when the create succeeded (zero: not yet)
	arrived   time.Time // when the super informer first received the super Pod (zero: not yet)
}

// echoDelivery is how the Add of a created super Pod reached the syncer's handler: watch,
// from the create's answer until the super informer received the Pod (the super apiserver's
// watch delivery, the connection and the decoding); informer, from then until the handler
// ran (the informer's queue, transform and cache update, and the handler's backlog). Both are
// 0 for an Add that came before the answer; informer is 0 when the arrival was not seen.
type echoDelivery struct {
	watch, informer time.Duration
}

func newPodEchoes() *podEchoes {
	return &podEchoes{pending: map[echoKey]podEcho{}, sweepAt: 1024, now: time.Now}
}

// Expect records that super Pod namespace/name is about to be created for the tenant Pod whose
// UID is tenantUID (resources.PodEchoes). Call it before the create, so that an Add that
// arrives before the create's answer is recognised.
func (e *podEchoes) Expect(namespace, name, tenantUID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	if len(e.pending) >= e.sweepAt {
		for k, p := range e.pending {
			if now.Sub(p.at) > echoExpiry {
				delete(e.pending, k)
			}
		}
		e.sweepAt = max(1024, 2*len(e.pending))
	}
	e.pending[echoKey{namespace, name}] = podEcho{tenantUID: tenantUID, at: now}
}

// Forget withdraws Expect for a super Pod whose create failed.
func (e *podEchoes) Forget(namespace, name string) {
	e.mu.Lock()
	delete(e.pending, echoKey{namespace, name})
	e.mu.Unlock()
}

// Answered records that the announced create of super Pod namespace/name succeeded, now.
func (e *podEchoes) Answered(namespace, name string) {
	key := echoKey{namespace, name}
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.pending[key]; ok {
		p.answered = e.now()
		e.pending[key] = p
	}
}

// arrivals returns transform (the super informers' transform) preceded by a record of the
// moment each announced super Pod first reaches the informer: a transform runs as the
// informer's reflector queues an object, before the informer's cache and handlers see it.
// Only a super Pod stamped with the announced tenant Pod's UID counts (not an older super Pod
// of the same name whose update or deletion arrives meanwhile).
func (e *podEchoes) arrivals(transform func(any) (any, error)) func(any) (any, error) {
	return func(obj any) (any, error) {
		if p, ok := obj.(*corev1.Pod); ok {
			if o, owned := conversion.OwnerOf(p); owned {
				e.arrived(p.Namespace, p.Name, o.UID)
			}
		}
		return transform(obj)
	}
}

// arrived records, for an announced super Pod namespace/name of tenant Pod tenantUID not seen
// yet, that the super informer received it now.
func (e *podEchoes) arrived(namespace, name, tenantUID string) {
	key := echoKey{namespace, name}
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.pending[key]; ok && p.arrived.IsZero() && p.tenantUID == tenantUID {
		p.arrived = e.now()
		e.pending[key] = p
	}
}

// take reports whether the Add of super Pod namespace/name, stamped with tenant Pod UID
// tenantUID, is the echo of a create announced by Expect (same tenant Pod, not expired), and
// forgets the announcement either way. For an echo, d splits the time from the create's
// answer (Answered) until now, the handler's moment (echoDelivery).
func (e *podEchoes) take(namespace, name, tenantUID string) (echo bool, d echoDelivery) {
	key := echoKey{namespace, name}
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.pending[key]
	if !ok {
		return false, d
	}
	delete(e.pending, key)
	now := e.now()
	if p.tenantUID != tenantUID || now.Sub(p.at) > echoExpiry {
		return false, d
	}
	switch {
	case p.answered.IsZero():
	case p.arrived.IsZero():
		d.watch = max(0, now.Sub(p.answered))
	default:
		d.watch = max(0, p.arrived.Sub(p.answered))
		d.informer = now.Sub(p.arrived)
		if p.arrived.Before(p.answered) {
			d.informer = max(0, now.Sub(p.answered))
		}
	}
	return true, d
}
