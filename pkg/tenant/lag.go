package tenant

import (
	"context"
	"encoding/json"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/metrics"
)

// Lag is one tenant's lag in both pipelines: how long its oldest unfinished request has waited.
type Lag struct{ Downward, Upward time.Duration }

// LagSource returns the lag of every tenant the syncer runs, by Tenant name (the syncer's
// TenantLags).
type LagSource func() map[string]Lag

// Lag write bounds: the status is written at most every DefaultLagInterval per Tenant (one
// patch per tick), lags under lagFloor are written as 0, and a written value is replaced only
// when the new one differs by at least lagFloor and by at least a quarter of the written value
// (a lag of 40 s is rewritten at 30 s or 50 s, not at 48 s). Under a steady load a Tenant's
// status therefore changes a few times, not every tick.
const (
	DefaultLagInterval = 10 * time.Second
	lagFloor           = 5 * time.Second
)

// LagWriter writes each Tenant's lag into its status (status.lagSeconds,
// status.downwardLagSeconds, status.upwardLagSeconds; `kubectl get tenants` shows the first
// as LAG) every Interval, through a JSON merge patch of the status subresource that names only
// those fields, so it never conflicts with the Tenant controller's status writes. A Tenant the
// Source does not list (not run by the syncer: Pending, Paused, Terminating) has its lag
// fields removed. Each patch is counted in vcsyncer_tenant_lag_writes_total. It runs on the
// leader only, or, with sharding, on every replica for the Tenants whose status.shard names
// it (Shard).
type LagWriter struct {
	// Client reads Tenants (the manager's cached client) and patches their status.
	Client client.Client
	// Source gives the current lags.
	Source LagSource
	// Interval between ticks; DefaultLagInterval when 0.
	Interval time.Duration
	// Shard, with sharding, is this replica's shard id: only Tenants whose status.shard is it
	// are written (another replica, or none while a tenant moves, owns the others' lag).
	// Empty: every Tenant.
	Shard string
}

var (
	_ manager.Runnable               = (*LagWriter)(nil)
	_ manager.LeaderElectionRunnable = (*LagWriter)(nil)
)

// NeedLeaderElection implements manager.LeaderElectionRunnable: only the leader writes.
func (w *LagWriter) NeedLeaderElection() bool { return true }

// Start ticks until ctx is done. It implements manager.Runnable.
func (w *LagWriter) Start(ctx context.Context) error {
	iv := w.Interval
	if iv <= 0 {
		iv = DefaultLagInterval
	}
	wait.UntilWithContext(ctx, w.tick, iv)
	return nil
}

// tick patches the status of every Tenant whose lag changed meaningfully (writeLag).
func (w *LagWriter) tick(ctx context.Context) {
	var list tenancyv1alpha1.TenantList
	if err := w.Client.List(ctx, &list); err != nil {
		return
	}
	lags := w.Source()
	for i := range list.Items {
		t := &list.Items[i]
		if w.Shard != "" && t.Status.Shard != w.Shard {
			continue
		}
		l, run := lags[t.Name]
		var patch map[string]any
		if !run || !t.DeletionTimestamp.IsZero() {
			if t.Status.LagSeconds == nil && t.Status.DownwardLagSeconds == nil && t.Status.UpwardLagSeconds == nil {
				continue
			}
			patch = map[string]any{"lagSeconds": nil, "downwardLagSeconds": nil, "upwardLagSeconds": nil}
		} else {
			down, up := lagValue(l.Downward), lagValue(l.Upward)
			if !lagChanged(t.Status.DownwardLagSeconds, down) && !lagChanged(t.Status.UpwardLagSeconds, up) && t.Status.LagSeconds != nil {
				continue
			}
			patch = map[string]any{"lagSeconds": max(down, up), "downwardLagSeconds": down, "upwardLagSeconds": up}
		}
		data, err := json.Marshal(map[string]any{"status": patch})
		if err != nil {
			continue
		}
		err = w.Client.Status().Patch(ctx, t, client.RawPatch(types.MergePatchType, data))
		if err != nil && !apierrors.IsNotFound(err) {
			ctrl.LoggerFrom(ctx).V(1).Info("Failed to write the Tenant's lag", "tenant", t.Name, "error", err.Error())
			continue
		}
		if run && t.DeletionTimestamp.IsZero() {
			// The clearing write of a tenant the syncer stopped running is not counted: its
			// series were forgotten with it (metrics.ForgetTenant) and must stay gone.
			metrics.TenantLagWrite(t.Name)
		}
	}
}

// lagValue is the lag written for d: whole seconds, 0 under lagFloor.
func lagValue(d time.Duration) int64 {
	if d < lagFloor {
		return 0
	}
	return int64(d / time.Second)
}

// lagChanged reports whether v replaces the written value old: none written yet, or a
// difference of at least lagFloor and at least a quarter of old (a change to or from 0 is a
// difference of at least lagFloor, since values under it are 0).
func lagChanged(old *int64, v int64) bool {
	if old == nil {
		return true
	}
	d := v - *old
	if d < 0 {
		d = -d
	}
	return d != 0 && d >= int64(lagFloor/time.Second) && d*4 >= *old
}
