package syncer

import (
	"errors"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// ErrNotReady is returned by ReadyCheck until the Syncer is ready.
var ErrNotReady = errors.New("the syncer's super-cluster caches have not synced yet")

// readiness is the Syncer's readiness for /readyz, and the work waiting for it.
type readiness struct {
	ready   atomic.Bool
	mu      sync.Mutex
	pending []func()
	// pendingKeys are the keys of the work afterReadyOnce deferred (nil once ready).
	pendingKeys map[any]bool
}

// markReady makes ReadyCheck pass and runs the work afterReady deferred, in order. Start calls
// it once the super caches (every super informer, the storage and opt-in kinds' informers)
// have synced, just before the workers start. It is the one place to gate readiness on more
// start-up work (e.g. a checkpoint resume): call it after that work instead.
func (s *Syncer) markReady() {
	s.ready.mu.Lock()
	s.ready.ready.Store(true)
	pending := s.ready.pending
	s.ready.pending = nil
	s.ready.pendingKeys = nil
	s.ready.mu.Unlock()
	for _, f := range pending {
		f()
	}
}

// afterReady runs f now if the super caches have synced, else when they have (markReady).
// Work that compares a tenant with the super caches (ClusterSynced's diff) must not run on
// caches still filling: every super object would look deleted.
func (s *Syncer) afterReady(f func()) {
	s.ready.mu.Lock()
	if !s.ready.ready.Load() {
		s.ready.pending = append(s.ready.pending, f)
		s.ready.mu.Unlock()
		return
	}
	s.ready.mu.Unlock()
	f()
}

// afterReadyOnce is afterReady for work asked for again and again while the super caches fill
// (one wake per super object added by their initial list): of the calls with the same key
// before markReady, only the first f is kept. Keys must be comparable.
func (s *Syncer) afterReadyOnce(key any, f func()) {
	s.ready.mu.Lock()
	if !s.ready.ready.Load() {
		if s.ready.pendingKeys == nil {
			s.ready.pendingKeys = map[any]bool{}
		}
		if !s.ready.pendingKeys[key] {
			s.ready.pendingKeys[key] = true
			s.ready.pending = append(s.ready.pending, f)
		}
		s.ready.mu.Unlock()
		return
	}
	s.ready.mu.Unlock()
	f()
}

// ReadyCheck is a controller-runtime healthz.Checker for /readyz: it returns ErrNotReady
// until Start has synced the super caches (see markReady), nil after. A Syncer that was
// never started, such as the one of a standby replica that has not won the leader election,
// is not ready; `vc-syncer run` therefore asks it only once the replica is the leader.
func (s *Syncer) ReadyCheck(*http.Request) error {
	if !s.ready.ready.Load() {
		return ErrNotReady
	}
	return nil
}

// wakeKey identifies the wakes deferred until the super caches have synced: those of tenant
// Cluster c for objects of kind in tenant namespace namespace.
type wakeKey struct {
	c         *tenant.Cluster
	kind      resources.Kind
	namespace string
}
