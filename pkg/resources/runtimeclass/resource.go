package runtimeclass

import (
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

// Resource syncs the RuntimeClasses a tenant's policy allows up into the tenant: a copy
// exists exactly when the super class exists and the tenant's Pod policy allows its name
// (policy.RuntimeClassAllowed). A changed handler (immutable) recreates the copy.
var Resource = &reconcile.SharedClass[*nodev1.RuntimeClass]{
	Name: resources.KindRuntimeClass,
	TenantInf: func(c *tenant.Cluster) cache.SharedIndexInformer {
		return c.Informers.Node().V1().RuntimeClasses().Informer()
	},
	// SuperInf: every super RuntimeClass (Env.SuperNodes, the node.k8s.io group's cache); the
	// policy, not a label, picks those a tenant gets.
	SuperInf: func(env *resources.Env) cache.SharedIndexInformer {
		return env.SuperNodes.Node().V1().RuntimeClasses().Informer()
	},
	Super: func(env *resources.Env, c *tenant.Cluster, name string) (*nodev1.RuntimeClass, bool, error) {
		s, err := env.SuperNodes.Node().V1().RuntimeClasses().Lister().Get(name)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, false, err
		}
		return s, err == nil && s.DeletionTimestamp.IsZero() && policy.RuntimeClassAllowed(c.Policy().Pods(), name), nil
	},
	Tenant: func(c *tenant.Cluster, name string) (*nodev1.RuntimeClass, error) {
		return c.Informers.Node().V1().RuntimeClasses().Lister().Get(name)
	},
	Client: func(c *tenant.Cluster) reconcile.Writer[*nodev1.RuntimeClass] {
		return c.Client.NodeV1().RuntimeClasses()
	},
	Desired: Desired,
	Equal:   Equal,
	Merge: func(want, have *nodev1.RuntimeClass) (*nodev1.RuntimeClass, bool) {
		if have.Handler != want.Handler {
			return nil, false
		}
		u := have.DeepCopy()
		u.Labels, u.Overhead, u.Scheduling = want.Labels, want.Overhead, nil
		return u, true
	},
}

// IsCopy reports whether tenant RuntimeClass t is the syncer's copy of a super class.
func IsCopy(t *nodev1.RuntimeClass) bool { return reconcile.IsCopy(t) }

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
