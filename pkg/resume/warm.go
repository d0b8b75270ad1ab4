package resume

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
)

// warmState is the state of the warm-up every replica runs (Warmup).
type warmState struct {
	once    sync.Once
	err     error
	resumed time.Time // TakenAt of the checkpoint the warm-up resumed from; zero if none

	// begun is set when the warm-up starts; restored (made by New) is closed once it has
	// restored the checkpoint's state (or found none), before the super informers sync. The
	// warm-up runs once, so it is closed once.
	begun    atomic.Bool
	restored chan struct{}
}

// restoreWait bounds how long a tenant's Cluster waits for the warm-up to restore the
// checkpoint before it counts its objects and starts its informers (AwaitRestore).
const restoreWait = 2 * time.Minute

// AwaitRestore waits, when the syncer checkpoints and its warm-up has begun, until the
// checkpoint's state is restored (at most restoreWait): a tenant whose Cluster connects while
// a large checkpoint is still being read must not count its objects with LISTs and start its
// informers cold. The tenant controller and the warm-up start together, so a Cluster can reach
// this first (a 31 MB checkpoint of 30 tenants took half a second to read, and 3 of them
// started cold).
func (st *State) AwaitRestore() {
	if st.ckpt == nil || !st.warmth.begun.Load() {
		return
	}
	select {
	case <-st.warmth.restored:
	case <-time.After(restoreWait):
		ctrl.Log.WithName("checkpoint").Info("The checkpoint was not restored in time; a tenant starts without it", "waited", restoreWait)
	}
}

// Warmup returns a Runnable that every replica runs, leader or standby (controller-runtime runs
// Runnables whose NeedLeaderElection is false before and without the election): it resumes the
// super-cluster caches from the latest checkpoint and starts and syncs them, so that a standby
// that wins the election starts its workers at once instead of listing the super cluster then.
// It writes nothing (only the leader writes checkpoints).
func (st *State) Warmup() manager.Runnable { return warmup{st} }

type warmup struct{ st *State }

func (w warmup) NeedLeaderElection() bool { return false }

func (w warmup) Start(ctx context.Context) error {
	if err := w.st.Warm(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// Warm resumes from the latest checkpoint (queues parked per tenant, extra state, source
// positions), checks the super cluster's identity, then starts the super informers and waits
// for them to sync (Config.StartSuper). It runs once; concurrent and later callers wait for it
// and get its error. The informers live as long as the first caller's ctx.
func (st *State) Warm(ctx context.Context) error {
	st.warmth.begun.Store(true)
	st.warmth.once.Do(func() { st.warmth.err = st.doWarm(ctx) })
	return st.warmth.err
}

func (st *State) doWarm(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("syncer")
	if st.ckpt != nil {
		if cp := st.ckpt.Load(ctx); cp != nil {
			if err := st.RestoreQueues(cp.Queues); err != nil {
				log.Error(err, "Cannot restore the checkpointed queues; every tenant is re-listed")
			} else {
				st.SetColdTenants(cp.LeftOut)
				st.ckpt.Restore(ctx, cp)
				st.seedScope(ctx, cp)
				st.warmth.resumed = cp.TakenAt
			}
		}
	}
	close(st.warmth.restored) // tenants waiting in AwaitRestore go on
	st.checkSuperIdentity(ctx)
	return st.cfg.StartSuper(ctx)
}

// ResumeLeader runs when this replica starts leading. If a newer checkpoint than the one the
// warm-up resumed from exists (a standby that waited while the old leader kept writing, and
// wrote its final checkpoint before releasing the lease), its tenant state is taken instead:
// tenant sources (not started yet: tenants connect only under the leader), the super sources'
// ack maps (their caches are live already), the queues and the extra state.
func (st *State) ResumeLeader(ctx context.Context) {
	if st.ckpt == nil || !st.cfg.Options.ReloadOnLead {
		return // no other replica can have written a newer checkpoint
	}
	cp := st.ckpt.Load(ctx)
	if cp == nil || !cp.TakenAt.After(st.warmth.resumed) {
		return
	}
	var tenants, super []source.State
	for _, s := range cp.Sources {
		if strings.HasPrefix(s.ID, TenantPrefix) {
			tenants = append(tenants, s)
		} else {
			super = append(super, s)
		}
	}
	st.parkMu.Lock()
	st.parked = map[string]*parkedWork{}
	st.parkMu.Unlock()
	if err := st.RestoreQueues(cp.Queues); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Cannot restore the checkpointed queues; every tenant is re-listed")
		return
	}
	st.SetColdTenants(cp.LeftOut)
	st.ckpt.RestoreExtras(ctx, cp)
	st.sources.Restore(tenants)
	st.sources.RestoreAcks(super)
	ctrl.LoggerFrom(ctx).WithName("checkpoint").Info("Leading: resumed the tenants from the latest checkpoint", "takenAt", cp.TakenAt, "warmFrom", st.warmth.resumed)
}

// ResumedFrom returns when the checkpoint the warm-up resumed from was taken; zero if it
// resumed from none (or has not run). Call it after Warm returned.
func (st *State) ResumedFrom() time.Time { return st.warmth.resumed }
