package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
)

// The faults of the super cluster as a whole and of the replica set: SuperRestart,
// SuperNamespaceDelete, TenantRemoveReadd and SyncerScale.

// restoreTimeout bounds what a fault does after its hold to restore what it broke (a Tenant
// registered again, a removed Tenant waited for); it runs also when the soak's context ends.
const restoreTimeout = 3 * time.Minute

// superRestart kills the super cluster's kube-apiserver and starts it again (the restart
// returns once it is ready).
func superRestart(ctx context.Context, t *Target, _ Fault) (string, error) {
	if t.RestartSuperAPIServer == nil {
		return "", errNoCandidate
	}
	start := time.Now()
	if err := t.RestartSuperAPIServer(ctx); err != nil {
		return "", fmt.Errorf("restarting the super kube-apiserver: %w", err)
	}
	return fmt.Sprintf("super kube-apiserver killed and started again, ready after %s", time.Since(start).Round(10*time.Millisecond)), nil
}

// superNamespaceDelete deletes the super namespace f.Pick chooses among those holding tenant
// f.Target's load namespaces (sorted by name), as someone cleaning up the super cluster would:
// the syncer must create it again with the copies of the tenant namespace's objects.
func superNamespaceDelete(ctx context.Context, t *Target, f Fault) (string, error) {
	if len(t.TenantUIDs) == 0 {
		return "", errNoCandidate
	}
	uid := t.TenantUIDs[f.Target%len(t.TenantUIDs)]
	l, err := t.Super.CoreV1().Namespaces().List(ctx, metav1.ListOptions{
		LabelSelector: conversion.LabelManagedBy + "=" + conversion.ManagedByValue + "," + conversion.LabelTenantUID + "=" + uid})
	if err != nil {
		return "", err
	}
	type cand struct{ name, tenantNS string }
	var cands []cand
	for i := range l.Items {
		ns := &l.Items[i]
		own, ok := conversion.OwnerOf(ns)
		if ok && own.TenantUID == uid && strings.HasPrefix(own.Namespace, NamespacePrefix) && ns.DeletionTimestamp.IsZero() {
			cands = append(cands, cand{ns.Name, own.Namespace})
		}
	}
	if len(cands) == 0 {
		return "", errNoCandidate
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].name < cands[j].name })
	c := cands[f.Pick%uint64(len(cands))]
	var nsUID types.UID
	for i := range l.Items {
		if l.Items[i].Name == c.name {
			nsUID = l.Items[i].UID
		}
	}
	err = t.Super.CoreV1().Namespaces().Delete(ctx, c.name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &nsUID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return "", fmt.Errorf("deleting super namespace %s: %w", c.name, err)
	}
	return fmt.Sprintf("deleted super namespace %s (uid %s, tenant namespace %s) of %d candidates", c.name, nsUID, c.tenantNS, len(cands)), nil
}

// tenantRemoveReadd deletes tenant f.Target's Tenant, waits until it is gone (the syncer's
// finalizer deletes its super namespaces first), keeps it away for the hold and registers it
// again through AddTenant; the new Tenant's UID replaces the old one in TenantUIDs. The wait
// and the registration run also when ctx ends (bounded by restoreTimeout).
func tenantRemoveReadd(ctx context.Context, t *Target, f Fault) (string, error) {
	if t.Tenancy == nil || t.AddTenant == nil || len(t.TenantNames) == 0 {
		return "", errNoCandidate
	}
	i := f.Target % len(t.TenantNames)
	name := t.TenantNames[i]
	tn := &tenancyv1alpha1.Tenant{}
	if err := t.Tenancy.Get(ctx, client.ObjectKey{Name: name}, tn); err != nil {
		return "", fmt.Errorf("reading Tenant %s: %w", name, err)
	}
	oldUID := tn.UID
	start := time.Now()
	if err := t.Tenancy.Delete(ctx, tn, client.Preconditions{UID: &oldUID}); err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("deleting Tenant %s: %w", name, err)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
	defer cancel()
	goneErr := wait.PollUntilContextCancel(rctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		cur := &tenancyv1alpha1.Tenant{}
		err := t.Tenancy.Get(ctx, client.ObjectKey{Name: name}, cur)
		return apierrors.IsNotFound(err) || (err == nil && cur.UID != oldUID), nil
	})
	gone := time.Since(start)
	if goneErr == nil {
		sleepCtx(ctx, f.Hold())
	}
	readd := time.Now()
	newUID, err := t.AddTenant(rctx, i)
	if err != nil {
		return "", fmt.Errorf("registering Tenant %s again: %w", name, errors.Join(err, goneErr))
	}
	t.TenantUIDs[i] = newUID
	if goneErr != nil {
		return "", fmt.Errorf("deleted Tenant %s (uid %s) not gone after %s (registered again as uid %s): %w", name, oldUID, gone.Round(time.Second), newUID, goneErr)
	}
	return fmt.Sprintf("Tenant %s (uid %s) deleted, gone after %s, away %s, registered again as uid %s, Running after %s",
		name, oldUID, gone.Round(10*time.Millisecond), f.Hold(), newUID, time.Since(readd).Round(10*time.Millisecond)), nil
}

// syncerScale scales the replicas to 1 (Replicas[f.Target] kept), 3 and 2, holding each count
// for the hold, then back to Replicas running and Spares stopped (also when ctx ends or a step
// fails). The two replicas added at 3 are drawn by f.Pick from the others (Replicas and Spares,
// in order), the one removed at 2 by f.Pick among the three. A replica leaves by SIGTERM (its
// graceful shutdown hands its tenants over); the replicas leaving at one step stop together.
func syncerScale(ctx context.Context, t *Target, f Fault) (string, error) {
	if len(t.Replicas) == 0 {
		return "", errNoCandidate
	}
	pool := slices.Concat(t.Replicas, t.Spares)
	if len(pool) < 3 {
		return "", errNoCandidate // not sharded: no spares
	}
	keep := t.Replicas[f.Target%len(t.Replicas)]
	others := slices.DeleteFunc(slices.Clone(pool), func(r *Replica) bool { return r == keep })
	k := int((f.Pick >> 32) % uint64(len(others)))
	others = slices.Concat(others[k:], others[:k])
	three := []*Replica{keep, others[0], others[1]}
	drop := three[f.Pick%3]
	two := slices.DeleteFunc(slices.Clone(three), func(r *Replica) bool { return r == drop })
	var steps []string
	var err error
	for _, want := range [][]*Replica{{keep}, three, two} {
		var step string
		if step, err = scaleTo(pool, want); err != nil {
			break
		}
		steps = append(steps, step)
		sleepCtx(ctx, f.Hold())
		if ctx.Err() != nil {
			break
		}
	}
	restore, rerr := scaleTo(pool, t.Replicas)
	steps = append(steps, "restored: "+restore)
	if err == nil {
		err = rerr
	}
	if err != nil {
		return "", fmt.Errorf("scaling %s: %w", strings.Join(steps, "; "), err)
	}
	return fmt.Sprintf("scaled, each count held %s: %s", f.Hold(), strings.Join(steps, "; ")), nil
}

// scaleTo stops (SIGTERM, together) the replicas of pool that run and are not in want, then
// starts those of want that do not run, and says what it did.
func scaleTo(pool, want []*Replica) (string, error) {
	var stop, start []string
	var wg sync.WaitGroup
	for _, r := range pool {
		if r.PID() != 0 && !slices.Contains(want, r) {
			stop = append(stop, r.ID)
			wg.Go(func() { r.Signal(syscall.SIGTERM) })
		}
	}
	wg.Wait()
	for _, r := range want {
		if r.PID() == 0 {
			if err := r.Start(); err != nil {
				return "", fmt.Errorf("starting %s: %w", r.ID, err)
			}
			start = append(start, r.ID)
		}
	}
	ids := make([]string, 0, len(want))
	for _, r := range want {
		ids = append(ids, r.ID)
	}
	return fmt.Sprintf("→ %d %v (stopped %v, started %v)", len(want), ids, stop, start), nil
}
