package priorityclass

import (
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

// Resource syncs public PriorityClasses up into tenants: every tenant gets a copy of each
// public super class; a changed value or preemption policy (immutable) recreates the copy.
var Resource = &reconcile.SharedClass[*schedulingv1.PriorityClass]{
	Name: resources.KindPriorityClass,
	TenantInf: func(c *tenant.Cluster) cache.SharedIndexInformer {
		return c.Informers.Scheduling().V1().PriorityClasses().Informer()
	},
	// SuperInf: the public super classes (Env.SuperPublic).
	SuperInf: func(env *resources.Env) cache.SharedIndexInformer {
		return env.SuperPublic.Scheduling().V1().PriorityClasses().Informer()
	},
	Super: func(env *resources.Env, _ *tenant.Cluster, name string) (*schedulingv1.PriorityClass, bool, error) {
		s, err := env.SuperPublic.Scheduling().V1().PriorityClasses().Lister().Get(name)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, false, err
		}
		return s, err == nil && s.Labels[conversion.LabelPublic] == conversion.PublicValue, nil
	},
	Tenant: func(c *tenant.Cluster, name string) (*schedulingv1.PriorityClass, error) {
		return c.Informers.Scheduling().V1().PriorityClasses().Lister().Get(name)
	},
	Client: func(c *tenant.Cluster) reconcile.Writer[*schedulingv1.PriorityClass] {
		return c.Client.SchedulingV1().PriorityClasses()
	},
	Desired: Desired,
	Equal:   Equal,
	Merge: func(want, have *schedulingv1.PriorityClass) (*schedulingv1.PriorityClass, bool) {
		if have.Value != want.Value || !ptr.Equal(have.PreemptionPolicy, want.PreemptionPolicy) {
			return nil, false
		}
		u := have.DeepCopy()
		u.Labels, u.Description, u.GlobalDefault = want.Labels, want.Description, false
		return u, true
	},
}

// IsPublic reports whether the super cluster has a public PriorityClass named name.
func IsPublic(env *resources.Env, name string) bool {
	pc, err := env.SuperPublic.Scheduling().V1().PriorityClasses().Lister().Get(name)
	return err == nil && pc.Labels[conversion.LabelPublic] == conversion.PublicValue
}

// IsCopy reports whether tenant PriorityClass t is the syncer's copy of a public super class.
func IsCopy(t *schedulingv1.PriorityClass) bool { return reconcile.IsCopy(t) }

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
