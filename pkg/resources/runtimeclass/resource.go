package runtimeclass

import (
	"context"
	"fmt"

	nodev1 "k8s.io/api/node/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs the RuntimeClasses a tenant's policy allows up into the tenant.
var Resource = resourceKind{resources.Funcs{
	Name: resources.KindRuntimeClass,
	Tenant: func(c *tenant.Cluster) cache.SharedIndexInformer {
		return c.Informers.Node().V1().RuntimeClasses().Informer()
	},
	// Super: every super RuntimeClass (Env.SuperNodes, the node.k8s.io group's cache); the
	// policy, not a label, picks those a tenant gets.
	Super: func(env *resources.Env) cache.SharedIndexInformer {
		return env.SuperNodes.Node().V1().RuntimeClasses().Informer()
	},
	Up: reconcileUpward,
}}

type resourceKind struct{ resources.Funcs }

var (
	_ resources.Resource    = Resource
	_ resources.SuperMapper = Resource
	_ resources.Upwarder    = Resource
)

// UpwardOnTenantChange implements resources.Upwarder: a copy edited or deleted in the tenant
// is reset.
func (resourceKind) UpwardOnTenantChange() bool { return true }

// MapSuper implements resources.SuperMapper: a super class may concern every tenant (each
// tenant's policy decides in reconcileUpward).
func (resourceKind) MapSuper(_ *resources.Env, obj metav1.Object, clusters []*tenant.Cluster) []resources.Request {
	out := make([]resources.Request, 0, len(clusters))
	for _, c := range clusters {
		out = append(out, resources.Request{Tenant: c.Name, Kind: resources.KindRuntimeClass, Name: obj.GetName()})
	}
	return out
}

// reconcileUpward creates, updates or deletes tenant c's copy of super RuntimeClass name: a
// copy exists exactly when the super class exists and c's Pod policy allows the name. A class
// of the tenant's own (not IsCopy) is left alone. Errors are the failed tenant writes and
// cache reads.
func reconcileUpward(ctx context.Context, env *resources.Env, c *tenant.Cluster, _, name string) error {
	s, err := env.SuperNodes.Node().V1().RuntimeClasses().Lister().Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	want := err == nil && s.DeletionTimestamp.IsZero() && policy.RuntimeClassAllowed(c.Policy().Pods(), name)
	t, err := c.Informers.Node().V1().RuntimeClasses().Lister().Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	tFound := err == nil
	if tFound && !IsCopy(t) {
		return nil // the tenant's own class: never touched
	}
	client := c.Client.NodeV1().RuntimeClasses()
	switch {
	case !want && !tFound:
		return nil
	case !want:
		return deleteCopy(ctx, c, t)
	case !tFound:
		if _, err := client.Create(ctx, Desired(s), metav1.CreateOptions{FieldManager: reconcile.FieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("failed to create RuntimeClass %s in tenant %s: %w", name, c.Name, err)
		}
		return nil
	}
	d := Desired(s)
	if Equal(d, t) {
		return nil
	}
	if t.Handler != d.Handler {
		return deleteCopy(ctx, c, t) // immutable: recreated on the deletion event
	}
	u := t.DeepCopy()
	u.Labels, u.Overhead, u.Scheduling = d.Labels, d.Overhead, nil
	if _, err := client.Update(ctx, u, metav1.UpdateOptions{FieldManager: reconcile.FieldManager}); err != nil {
		return fmt.Errorf("failed to update RuntimeClass %s in tenant %s: %w", name, c.Name, err)
	}
	return nil
}

func deleteCopy(ctx context.Context, c *tenant.Cluster, t *nodev1.RuntimeClass) error {
	uid := t.UID
	err := c.Client.NodeV1().RuntimeClasses().Delete(ctx, t.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("failed to delete RuntimeClass %s in tenant %s: %w", t.Name, c.Name, err)
	}
	return nil
}

// IsCopy reports whether tenant RuntimeClass t is the syncer's copy of a super class.
func IsCopy(t *nodev1.RuntimeClass) bool {
	return t.Labels[conversion.LabelManagedBy] == conversion.ManagedByValue
}

// Desired returns the tenant copy of super RuntimeClass s: its name, handler and overhead,
// labelled as the syncer's copy; no scheduling (see the package documentation).
func Desired(s *nodev1.RuntimeClass) *nodev1.RuntimeClass {
	return &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:   s.Name,
			Labels: map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue},
		},
		Handler:  s.Handler,
		Overhead: s.Overhead.DeepCopy(),
	}
}

// Equal reports whether tenant copy have matches want (Desired): labels, handler, overhead
// (compared as quantities) and no scheduling.
func Equal(want, have *nodev1.RuntimeClass) bool {
	return resources.MapsEqual(want.Labels, have.Labels) && want.Handler == have.Handler &&
		apiequality.Semantic.DeepEqual(want.Overhead, have.Overhead) && have.Scheduling == nil
}
