package chaos

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/vcsyncer/syncer/pkg/conversion"
)

// Target is what the faults act on.
type Target struct {
	// Replicas are the syncer processes.
	Replicas []*Replica
	// TenantAPIServerPID returns the pid of tenant i's kube-apiserver.
	TenantAPIServerPID func(i int) int
	// Super is the super cluster's client.
	Super kubernetes.Interface
	// TenantUIDs are the Tenants' UIDs, by tenant index.
	TenantUIDs []string
	// CheckpointNamespace and CheckpointPrefix locate the syncer's checkpoint Secrets (every
	// Secret in the namespace whose name starts with the prefix).
	CheckpointNamespace, CheckpointPrefix string
}

// Injector injects one fault into t and returns what it did. It restores what it broke before
// it returns (a killed replica is started again, a stopped process continued), also when ctx
// ends. An error means the fault could not be injected (no object to touch).
type Injector func(ctx context.Context, t *Target, f Fault) (string, error)

// Injectors are the fault kinds' functions.
var Injectors = map[Kind]Injector{
	SyncerKill:       syncerSignal(syscall.SIGKILL),
	SyncerTerm:       syncerSignal(syscall.SIGTERM),
	TenantPause:      tenantPause,
	SuperCopyDelete:  superCopyDelete,
	SuperCopyEdit:    superCopyEdit,
	CheckpointDelete: checkpointDelete,
}

// errNoCandidate is returned when a fault finds nothing to act on.
var errNoCandidate = errors.New("nothing to act on")

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// syncerSignal stops replica f.Target with sig, waits until it has exited, keeps it down for
// the hold and starts it again.
func syncerSignal(sig syscall.Signal) Injector {
	return func(ctx context.Context, t *Target, f Fault) (string, error) {
		if len(t.Replicas) == 0 {
			return "", errNoCandidate
		}
		r := t.Replicas[f.Target%len(t.Replicas)]
		pid := r.Signal(sig)
		sleepCtx(ctx, f.Hold())
		if err := r.Start(); err != nil {
			return "", fmt.Errorf("starting %s again: %w", r.ID, err)
		}
		return fmt.Sprintf("%s %s (pid %d), down %s, started again as pid %d", sig, r.ID, pid, f.Hold(), r.PID()), nil
	}
}

// tenantPause SIGSTOPs tenant f.Target's kube-apiserver, keeps it stopped for the hold and
// SIGCONTs it.
func tenantPause(ctx context.Context, t *Target, f Fault) (string, error) {
	if len(t.TenantUIDs) == 0 {
		return "", errNoCandidate
	}
	i := f.Target % len(t.TenantUIDs)
	pid := t.TenantAPIServerPID(i)
	if pid <= 0 {
		return "", fmt.Errorf("tenant %d: no kube-apiserver pid", i)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return "", fmt.Errorf("SIGSTOP pid %d: %w", pid, err)
	}
	defer func() { _ = syscall.Kill(pid, syscall.SIGCONT) }()
	sleepCtx(ctx, f.Hold())
	return fmt.Sprintf("tenant %d kube-apiserver (pid %d) stopped for %s", i, pid, f.Hold()), nil
}

// superCopies returns the super copies of tenant f.Target's load objects, sorted by kind,
// namespace and name.
func superCopies(ctx context.Context, t *Target, f Fault) ([]Obj, error) {
	if len(t.TenantUIDs) == 0 {
		return nil, errNoCandidate
	}
	uid := t.TenantUIDs[f.Target%len(t.TenantUIDs)]
	var out []Obj
	for _, l := range listers {
		objs, err := l.list(ctx, t.Super, metav1.ListOptions{LabelSelector: conversion.LabelTenantUID + "=" + uid + "," + LabelLoad + "=" + ValueLoad})
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if !o.Deleting {
				out = append(out, o)
			}
		}
	}
	if len(out) == 0 {
		return nil, errNoCandidate
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out, nil
}

// superCopyDelete deletes the super copy f.Pick chooses among tenant f.Target's.
func superCopyDelete(ctx context.Context, t *Target, f Fault) (string, error) {
	objs, err := superCopies(ctx, t, f)
	if err != nil {
		return "", err
	}
	o := objs[f.Pick%uint64(len(objs))]
	uid := types.UID(o.UID)
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
	c := t.Super.CoreV1()
	switch o.Kind {
	case "ConfigMap":
		err = c.ConfigMaps(o.Namespace).Delete(ctx, o.Name, opts)
	case "Secret":
		err = c.Secrets(o.Namespace).Delete(ctx, o.Name, opts)
	case "Service":
		err = c.Services(o.Namespace).Delete(ctx, o.Name, opts)
	case "Pod":
		err = c.Pods(o.Namespace).Delete(ctx, o.Name, opts)
	}
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return "", fmt.Errorf("deleting super %s: %w", o.Key(), err)
	}
	return fmt.Sprintf("deleted super %s (uid %s) of %d candidates", o.Key(), o.UID, len(objs)), nil
}

// superCopyEdit sets label LabelGen of the super copy f.Pick chooses to a value no tenant
// object has (and, for a ConfigMap, its data), as someone editing the super cluster would.
func superCopyEdit(ctx context.Context, t *Target, f Fault) (string, error) {
	objs, err := superCopies(ctx, t, f)
	if err != nil {
		return "", err
	}
	o := objs[f.Pick%uint64(len(objs))]
	val := fmt.Sprintf("tampered-%d", f.Seq)
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, LabelGen, val)
	if o.Kind == "ConfigMap" {
		patch = fmt.Sprintf(`{"metadata":{"labels":{%q:%q}},"data":{"gen":%q}}`, LabelGen, val, val)
	}
	c := t.Super.CoreV1()
	p := []byte(patch)
	switch o.Kind {
	case "ConfigMap":
		_, err = c.ConfigMaps(o.Namespace).Patch(ctx, o.Name, types.MergePatchType, p, metav1.PatchOptions{})
	case "Secret":
		_, err = c.Secrets(o.Namespace).Patch(ctx, o.Name, types.MergePatchType, p, metav1.PatchOptions{})
	case "Service":
		_, err = c.Services(o.Namespace).Patch(ctx, o.Name, types.MergePatchType, p, metav1.PatchOptions{})
	case "Pod":
		_, err = c.Pods(o.Namespace).Patch(ctx, o.Name, types.MergePatchType, p, metav1.PatchOptions{})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("editing super %s: %w", o.Key(), err)
	}
	return fmt.Sprintf("edited super %s (uid %s): %s", o.Key(), o.UID, patch), nil
}

// checkpointDelete deletes the checkpoint Secret f.Pick chooses.
func checkpointDelete(ctx context.Context, t *Target, f Fault) (string, error) {
	l, err := t.Super.CoreV1().Secrets(t.CheckpointNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	var names []string
	for _, s := range l.Items {
		if strings.HasPrefix(s.Name, t.CheckpointPrefix) && s.DeletionTimestamp.IsZero() {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return "", errNoCandidate
	}
	sort.Strings(names)
	name := names[f.Pick%uint64(len(names))]
	if err := t.Super.CoreV1().Secrets(t.CheckpointNamespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return "", err
	}
	return fmt.Sprintf("deleted checkpoint Secret %s/%s of %v", t.CheckpointNamespace, name, names), nil
}
