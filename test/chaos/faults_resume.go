package chaos

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
)

// The injector is registered here rather than in the Injectors literal of faults.go, which
// other fault files extend at the same time.
func init() { Injectors[PolicyFlipWhileDown] = policyFlipWhileDown }

// ResumeRefusal bounds how long policyFlipWhileDown keeps the refusal after the restart:
// past RefusedCopyBound, so that refused-copy-removed sees a copy the resume left.
const ResumeRefusal = RefusedCopyBound + 5*time.Second

// policyFlipWhileDown stops every replica (SIGTERM: final checkpoints, with the tenants'
// policy marks), points tenant f.Target's Tenant at RefusingPolicy while they are down, keeps
// them down for the hold and starts them again: they resume from checkpoints that record the
// tenant's objects as examined under the old policy, so the resume must examine them again
// (the policy marks of pkg/syncer/policymark.go) and delete the copies of the now refused
// Services. The refusal counts from the restart (the syncer could not act before) and lasts
// until the tenant has no super copy of a load Service left, at most ResumeRefusal. Then the
// same the other way: every replica stopped, the old policy put back while they are down for
// the hold, started again; the Services' copies must come back (Settled).
func policyFlipWhileDown(ctx context.Context, t *Target, f Fault) (string, error) {
	if t.Tenancy == nil || t.Super == nil || len(t.TenantNames) == 0 || len(t.Replicas) == 0 {
		return "", errNoCandidate
	}
	i := f.Target % len(t.TenantNames)
	name, uid := t.TenantNames[i], t.TenantUIDs[i]
	if err := ensureRefusingPolicy(ctx, t); err != nil {
		return "", err
	}
	// The restore runs also when ctx ends: the replicas are started again and the policy put
	// back before the injector returns.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()

	copies := countServiceCopies(ctx, t, uid)
	pids := stopAll(t.Replicas)
	old, err := setPolicyName(rctx, t.Tenancy, name, RefusingPolicy)
	if err != nil {
		return "", startAll(t.Replicas, err)
	}
	sleepCtx(ctx, f.Hold())
	if err := startAll(t.Replicas, nil); err != nil {
		_, _ = setPolicyName(rctx, t.Tenancy, name, old)
		return "", err
	}
	began := time.Now()
	t.Refusals.Begin(uid, "Service", began)
	left := waitNoServiceCopies(ctx, t, uid, ResumeRefusal)
	refused := time.Since(began)

	pids2 := stopAll(t.Replicas)
	t.Refusals.End(uid, "Service") // before the policy is back: copies may come back at once
	_, err = setPolicyName(rctx, t.Tenancy, name, old)
	sleepCtx(ctx, f.Hold())
	if err := startAll(t.Replicas, err); err != nil {
		return "", fmt.Errorf("restoring Tenant %s spec.policyName %q: %w", name, old, err)
	}
	return fmt.Sprintf("%d super Service copies; SIGTERM every replica (pids %v); Tenant %s: spec.policyName %q → %s (ClusterIP Services refused) while down %s; started again, refused for %s (%d super Service copies left); SIGTERM every replica (pids %v), policy %q back while down %s; started again",
		copies, pids, name, old, RefusingPolicy, f.Hold(), refused.Round(100*time.Millisecond), left, pids2, old, f.Hold()), nil
}

// countServiceCopies returns how many super copies of a load Service tenant uid has (-1 when
// the listing failed).
func countServiceCopies(ctx context.Context, t *Target, uid string) int {
	l, err := t.Super.CoreV1().Services("").List(ctx, metav1.ListOptions{
		LabelSelector: conversion.LabelTenantUID + "=" + uid + "," + LabelLoad + "=" + ValueLoad})
	if err != nil {
		return -1
	}
	return len(l.Items)
}

// waitNoServiceCopies waits until tenant uid has no super copy of a load Service, at most d,
// and returns how many are left (-1 when the last listing failed).
func waitNoServiceCopies(ctx context.Context, t *Target, uid string, d time.Duration) int {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	left := -1
	for {
		if n := countServiceCopies(wctx, t, uid); n >= 0 {
			left = n
			if left == 0 {
				return 0
			}
		}
		sleepCtx(wctx, time.Second)
		if wctx.Err() != nil {
			return left
		}
	}
}

// ensureRefusingPolicy creates the TenantPolicy RefusingPolicy (ClusterIP Services refused)
// unless it exists.
func ensureRefusingPolicy(ctx context.Context, t *Target) error {
	p := &tenancyv1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: RefusingPolicy}, Spec: tenancyv1alpha1.TenantPolicySpec{
		Services: &tenancyv1alpha1.ServicePolicy{AllowedTypes: []corev1.ServiceType{corev1.ServiceTypeNodePort}}}}
	if err := t.Tenancy.Create(ctx, p); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating TenantPolicy %s: %w", RefusingPolicy, err)
	}
	return nil
}

// stopAll SIGTERMs every replica at once and waits until each has exited; it returns the pids
// it stopped (0 for a replica that was not running).
func stopAll(rs []*Replica) []int {
	pids := make([]int, len(rs))
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Go(func() { pids[i] = r.Signal(syscall.SIGTERM) })
	}
	wg.Wait()
	return pids
}

// startAll starts every replica that is not running and returns err, or the first start's
// error when err is nil.
func startAll(rs []*Replica, err error) error {
	for _, r := range rs {
		if serr := r.EnsureRunning(); serr != nil && err == nil {
			err = fmt.Errorf("starting %s again: %w", r.ID, serr)
		}
	}
	return err
}
