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
