package syncer

import (
	"sync"
	"time"
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
	pending map[string]podEcho // super namespace/name
	sweepAt int
	now     func() time.Time
}

type podEcho struct {
	tenantUID string
	at        time.Time
	answered  time.Time // when the create succeeded (zero: not yet)
}

func newPodEchoes() *podEchoes {
	return &podEchoes{pending: map[string]podEcho{}, sweepAt: 1024, now: time.Now}
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
	e.pending[namespace+"/"+name] = podEcho{tenantUID: tenantUID, at: now}
}

// Forget withdraws Expect for a super Pod whose create failed.
func (e *podEchoes) Forget(namespace, name string) {
	e.mu.Lock()
	delete(e.pending, namespace+"/"+name)
	e.mu.Unlock()
}

// Answered records that the announced create of super Pod namespace/name succeeded, now.
func (e *podEchoes) Answered(namespace, name string) {
	key := namespace + "/" + name
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.pending[key]; ok {
		p.answered = e.now()
		e.pending[key] = p
	}
}

// take reports whether the Add of super Pod namespace/name, stamped with tenant Pod UID
// tenantUID, is the echo of a create announced by Expect (same tenant Pod, not expired), and
// forgets the announcement either way. For an echo, delivered is how long after the create's
// answer (Answered) the Add came: 0 when it came first.
func (e *podEchoes) take(namespace, name, tenantUID string) (echo bool, delivered time.Duration) {
	key := namespace + "/" + name
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.pending[key]
	if !ok {
		return false, 0
	}
	delete(e.pending, key)
	now := e.now()
	if p.tenantUID != tenantUID || now.Sub(p.at) > echoExpiry {
		return false, 0
	}
	if !p.answered.IsZero() {
		delivered = max(0, now.Sub(p.answered))
	}
	return true, delivered
}
