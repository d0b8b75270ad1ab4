package tenant

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// Sharding tells the Tenant controller which syncer replica (shard) should sync which Tenant;
// pkg/sharding.Membership implements it.
type Sharding interface {
	// ID is this shard's id.
	ID() string
	// Owner returns the shard that should sync tenant, and false while this shard cannot tell
	// (it has not joined the ring, or its own Lease is not renewed in time).
	Owner(tenant string) (shard string, known bool)
	// Live reports whether shard holds a live Lease.
	Live(shard string) bool
}

// Handover moves a tenant's state between shards; the syncer implements it.
type Handover interface {
	// SetClaimed records whether this shard holds tenant (its status.shard names this shard).
	// The syncer writes for a tenant only while it is claimed and the ring gives it to this
	// shard; the Tenant controller sets it after a claim and clears it before anything else
	// when the tenant is not, or no longer, this shard's.
	SetClaimed(tenant string, claimed bool)
	// Drain waits until no reconcile of tenant runs (none starts once it is not claimed) and,
	// with save, writes the tenant's hand-over checkpoint. The Tenant controller then
	// unregisters the tenant.
	Drain(ctx context.Context, tenant string, save bool) error
	// Adopt loads tenant's state (UID uid), before the tenant is registered here, from the
	// checkpoints of shard from: the one that released it (expired false), or the one that held
	// it until its Lease expired (expired true). A tenant it finds no state for starts cold.
	Adopt(ctx context.Context, tenant, uid, from string, expired bool)
}

// Event reasons of the hand-over.
const (
	ReasonShardAssigned = "ShardAssigned"
	ReasonShardReleased = "ShardReleased"
)

// drainRetry is how soon a drain that failed (reconciles still running, the checkpoint not
// written) is tried again; the tenant stays fenced and claimed meanwhile, so no other shard
// starts it.
const drainRetry = 5 * time.Second

// shardRetry is how soon a Tenant is looked at again while this shard cannot tell who owns it
// or waits for another shard to release it (the ring's changes and the Tenant's status
// updates also bring it back at once).
const shardRetry = 2 * time.Second

// shard decides, with sharding on, whether this replica syncs Tenant t now. It returns
// proceed=false (with the result to return) when it does not: another shard should sync t
// (a Cluster running here is drained, unregistered and t released), this shard cannot tell
// yet, or t is still held by another live shard. When this shard should sync t and t is
// free (status.shard empty, naming this shard, or naming a shard whose Lease has expired), it
// claims t by writing status.shard with t's resourceVersion as precondition (a conflict means
// another shard wrote first: retried), then adopts t's state from the checkpoint of the shard
// that synced it last.
//
// The rule that no two shards sync one tenant rests on that precondition and on the order of
// the release: status.shard is emptied only after Drain returned and the Cluster stopped.
func (r *Reconciler) shard(ctx context.Context, t *tenancyv1alpha1.Tenant) (proceed bool, res reconcile.Result, err error) {
	me := r.Sharding.ID()
	owner, known := r.Sharding.Owner(t.Name)
	if !known {
		return false, reconcile.Result{RequeueAfter: shardRetry}, nil // the fence holds every tenant meanwhile
	}
	holder := t.Status.Shard
	_, running := r.Registry.Get(t.Name)
	if owner != me || holder != me {
		r.Handover.SetClaimed(t.Name, false) // the fence first: nothing more is written for it
	}
	if owner != me {
		if running {
			// Only the holder writes the hand-over checkpoint (a shard that lost the tenant while
			// its Lease was stale must not overwrite the holder's).
			if err := r.Handover.Drain(ctx, t.Name, holder == me); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "Cannot drain the tenant yet; it stays here, fenced, and is tried again", "retryIn", drainRetry)
				return false, reconcile.Result{RequeueAfter: drainRetry}, nil
			}
			r.Registry.remove(t.Name)
		}
		if holder == me {
			orig := t.DeepCopy()
			t.Status.Shard, t.Status.LastShard = "", me
			if err := r.Client.Status().Patch(ctx, t, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
				if apierrors.IsConflict(err) {
					return false, reconcile.Result{RequeueAfter: time.Second}, nil // a stale copy: released on the next look
				}
				return false, reconcile.Result{}, client.IgnoreNotFound(err)
			}
			ctrl.LoggerFrom(ctx).Info("Released the tenant to another shard", "shard", owner)
			r.Recorder.Eventf(t, corev1.EventTypeNormal, ReasonShardReleased, "shard %s released the tenant for shard %s", me, owner)
		}
		return false, reconcile.Result{}, nil
	}
	if holder == me {
		r.Handover.SetClaimed(t.Name, true)
		return true, reconcile.Result{}, nil
	}
	if running {
		// Registered here while another shard holds it (this shard's Lease went stale and the
		// tenant was taken): stop it here, without a checkpoint, before claiming it again.
		if err := r.Handover.Drain(ctx, t.Name, false); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Cannot stop the tenant yet; it stays fenced and is tried again", "retryIn", drainRetry)
			return false, reconcile.Result{RequeueAfter: drainRetry}, nil
		}
		r.Registry.remove(t.Name)
	}
	if holder != "" && r.Sharding.Live(holder) {
		return false, reconcile.Result{RequeueAfter: shardRetry}, nil // being drained by holder
	}
	from := holder // a shard whose Lease expired: its last periodic checkpoint
	if from == "" {
		from = t.Status.LastShard
	}
	orig := t.DeepCopy()
	t.Status.Shard = me
	if err := r.Client.Status().Patch(ctx, t, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return false, reconcile.Result{RequeueAfter: time.Second}, nil
		}
		return false, reconcile.Result{}, client.IgnoreNotFound(err)
	}
	r.Handover.SetClaimed(t.Name, true)
	if from != "" && from != me {
		r.Handover.Adopt(ctx, t.Name, string(t.UID), from, holder != "")
	}
	msg := fmt.Sprintf("synced by shard %s", me)
	switch {
	case holder != "":
		msg += fmt.Sprintf(", taken over from shard %s after its Lease expired", holder)
	case from != "":
		msg += fmt.Sprintf(", handed over by shard %s", from)
	}
	ctrl.LoggerFrom(ctx).Info("Took the tenant", "from", from, "expired", holder != "")
	r.Recorder.Event(t, corev1.EventTypeNormal, ReasonShardAssigned, msg)
	return true, reconcile.Result{}, nil
}

// NotifyAll asks the controller to look at every Tenant again (the shard ring changed). It
// lists the Tenants from the cache and blocks until each is queued or ctx is done.
func (r *Reconciler) NotifyAll(ctx context.Context) {
	if r.events == nil {
		return
	}
	var list tenancyv1alpha1.TenantList
	if err := r.Client.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Cannot list Tenants after a shard ring change; the periodic requeue catches up")
		return
	}
	for i := range list.Items {
		t := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: list.Items[i].Name}}
		select {
		case r.events <- event.TypedGenericEvent[*tenancyv1alpha1.Tenant]{Object: t}:
		case <-ctx.Done():
			return
		}
	}
}

// ReleaseShard empties status.shard (and sets status.lastShard) of every Tenant that names
// shard, so the other shards take them at once instead of after the shard's Lease expires.
// Call it on shutdown, after the final checkpoint. c should be an uncached client (the
// manager's cache has stopped by then). It returns the errors of the Tenants it could not
// release.
func ReleaseShard(ctx context.Context, c client.Client, shard string) (released int, err error) {
	var list tenancyv1alpha1.TenantList
	if err := c.List(ctx, &list); err != nil {
		return 0, fmt.Errorf("listing Tenants: %w", err)
	}
	var errs []error
	for i := range list.Items {
		t := &list.Items[i]
		if t.Status.Shard != shard {
			continue
		}
		orig := t.DeepCopy()
		t.Status.Shard, t.Status.LastShard = "", shard
		if err := c.Status().Patch(ctx, t, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("releasing Tenant %s: %w", t.Name, err))
			continue
		}
		released++
	}
	return released, errors.Join(errs...)
}
