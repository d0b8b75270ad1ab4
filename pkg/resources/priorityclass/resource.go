package priorityclass

import (
	"context"
	"fmt"

	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// ReasonPriorityClassNotPublic is the Event reason on a tenant Pod whose priorityClassName is
// neither a system class nor a public super class.
const ReasonPriorityClassNotPublic = "PriorityClassNotPublic"

// Resource syncs public PriorityClasses up into tenants.
var Resource = resourceKind{resources.Funcs{
	Name: resources.KindPriorityClass,
	Tenant: func(c *tenant.Cluster) cache.SharedIndexInformer {
		return c.Informers.Scheduling().V1().PriorityClasses().Informer()
	},
	// Super: the public super classes (Env.SuperPublic).
	Super: func(env *resources.Env) cache.SharedIndexInformer {
		return env.SuperPublic.Scheduling().V1().PriorityClasses().Informer()
	},
	Up: reconcileUpward,
}}

// reconcileUpward creates, updates or deletes the tenant copy of super PriorityClass name.
func reconcileUpward(ctx context.Context, env *resources.Env, c *tenant.Cluster, _, name string) error {
	s, err := env.SuperPublic.Scheduling().V1().PriorityClasses().Lister().Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	sFound := err == nil && s.Labels[conversion.LabelPublic] == conversion.PublicValue
	t, err := c.Informers.Scheduling().V1().PriorityClasses().Lister().Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	tFound := err == nil
	if tFound && !IsCopy(t) {
		return nil // the tenant's own class: never touched
	}
	client := c.Client.SchedulingV1().PriorityClasses()
	if !sFound {
		if !tFound {
			return nil
		}
		return deleteCopy(ctx, c, t)
	}
	want := Desired(s)
	if !tFound {
		if _, err := client.Create(ctx, want, metav1.CreateOptions{FieldManager: reconcile.FieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("failed to create PriorityClass %s in tenant %s: %w", name, c.Name, err)
		}
		return nil
	}
	if Equal(want, t) {
		return nil
	}
	if t.Value != want.Value || !ptr.Equal(t.PreemptionPolicy, want.PreemptionPolicy) {
		// Immutable fields: recreate (the Create follows on the deletion event).
		return deleteCopy(ctx, c, t)
	}
	u := t.DeepCopy()
	u.Labels, u.Description, u.GlobalDefault = want.Labels, want.Description, false
	if _, err := client.Update(ctx, u, metav1.UpdateOptions{FieldManager: reconcile.FieldManager}); err != nil {
		return fmt.Errorf("failed to update PriorityClass %s in tenant %s: %w", name, c.Name, err)
	}
	return nil
}

type resourceKind struct{ resources.Funcs }

var (
	_ resources.Resource    = Resource
	_ resources.SuperMapper = Resource
	_ resources.Upwarder    = Resource
)

// UpwardOnTenantChange implements resources.Upwarder: a copy edited or deleted in the tenant
// is reset.
func (resourceKind) UpwardOnTenantChange() bool { return true }

// MapSuper implements resources.SuperMapper: a public class concerns every tenant.
func (resourceKind) MapSuper(_ *resources.Env, obj metav1.Object, clusters []*tenant.Cluster) []resources.Request {
	out := make([]resources.Request, 0, len(clusters))
	for _, c := range clusters {
		out = append(out, resources.Request{Tenant: c.Name, Kind: resources.KindPriorityClass, Name: obj.GetName()})
	}
	return out
}

// IsPublic reports whether the super cluster has a public PriorityClass named name.
func IsPublic(env *resources.Env, name string) bool {
	pc, err := env.SuperPublic.Scheduling().V1().PriorityClasses().Lister().Get(name)
	return err == nil && pc.Labels[conversion.LabelPublic] == conversion.PublicValue
}

func deleteCopy(ctx context.Context, c *tenant.Cluster, t *schedulingv1.PriorityClass) error {
	uid := t.UID
	err := c.Client.SchedulingV1().PriorityClasses().Delete(ctx, t.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("failed to delete PriorityClass %s in tenant %s: %w", t.Name, c.Name, err)
	}
	return nil
}

// IsCopy reports whether tenant PriorityClass t is the syncer's copy of a public super class.
func IsCopy(t *schedulingv1.PriorityClass) bool {
	return t.Labels[conversion.LabelManagedBy] == conversion.ManagedByValue
}

// Desired returns the tenant copy of public super PriorityClass s.
func Desired(s *schedulingv1.PriorityClass) *schedulingv1.PriorityClass {
	return &schedulingv1.PriorityClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:   s.Name,
			Labels: map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue, conversion.LabelPublic: conversion.PublicValue},
		},
		Value:            s.Value,
		PreemptionPolicy: s.PreemptionPolicy,
		Description:      s.Description,
		GlobalDefault:    false,
	}
}

// Equal reports whether tenant copy have matches want.
func Equal(want, have *schedulingv1.PriorityClass) bool {
	return resources.MapsEqual(want.Labels, have.Labels) && want.Value == have.Value &&
		ptr.Equal(want.PreemptionPolicy, have.PreemptionPolicy) && want.Description == have.Description && !have.GlobalDefault
}
