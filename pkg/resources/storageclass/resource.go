// Package storageclass syncs public StorageClasses upward (super → tenant).
//
// # Upward
//
// Super-cluster admins mark a StorageClass public with the label
// tenancy.vcsyncer.io/public=true (conversion.LabelPublic). Every tenant then gets a copy (see
// Desired) labelled tenancy.vcsyncer.io/managed-by=vc-syncer, so tenant claims can name the
// class and a default class (the storageclass.kubernetes.io/is-default-class annotation is
// copied) is applied by the tenant apiserver's DefaultStorageClass admission as in the super
// cluster. The copy is removed when the label is removed or the super class is deleted, and
// replaced when the super class is recreated with other immutable fields.
//
// # Not synced
//
// The syncer never writes super StorageClasses. A StorageClass the tenant created itself is
// left alone, even when a public class has the same name: the tenant's class wins in the
// tenant, and claims naming it go to the super cluster with that class name (served by the
// super class of that name, if any).
package storageclass

import (
	"context"

	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs StorageClasses (upward only).
type Resource struct{}

var _ resources.Resource = Resource{}

// Kind implements resources.Resource.
func (Resource) Kind() resources.Kind { return resources.KindStorageClass }

// TenantInformer implements resources.Resource.
func (Resource) TenantInformer(c *tenant.Cluster) cache.SharedIndexInformer {
	return c.Informers.Storage().V1().StorageClasses().Informer()
}

// SuperInformer implements resources.Resource: public super StorageClasses only
// (Env.SuperPublic). A class whose label is removed leaves the cache as a delete event.
func (Resource) SuperInformer(env *resources.Env) cache.SharedIndexInformer {
	return env.SuperPublic.Storage().V1().StorageClasses().Informer()
}

// Downward implements resources.Resource; StorageClasses are never synced down.
func (Resource) Downward(context.Context, *resources.Env, *tenant.Cluster, string, string) error {
	return nil
}

// Upward implements resources.Resource.
func (Resource) Upward(ctx context.Context, env *resources.Env, c *tenant.Cluster, _, name string) error {
	return reconcileUpward(ctx, env, c, name)
}
