package syncer

import (
	"errors"
	"net/http"
	"sync/atomic"
)

// ErrNotReady is returned by ReadyCheck until the Syncer is ready.
var ErrNotReady = errors.New("the syncer's super-cluster caches have not synced yet")

// readiness is the Syncer's readiness for /readyz.
type readiness struct{ ready atomic.Bool }

// markReady makes ReadyCheck pass. Start calls it once the super caches (every super
// informer, the storage and opt-in kinds' informers) have synced, just before the workers
// start. It is the one place to gate readiness on more start-up work (e.g. a checkpoint
// resume): call it after that work instead.
func (s *Syncer) markReady() { s.ready.ready.Store(true) }

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
