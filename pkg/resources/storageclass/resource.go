package storageclass

import (
	"context"

	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs StorageClasses (upward only).
var Resource = resources.Funcs{
	Name: resources.KindStorageClass,
	Tenant: func(c *tenant.Cluster) cache.SharedIndexInformer {
		return c.Informers.Storage().V1().StorageClasses().Informer()
	},
	// Super: public super StorageClasses only (Env.SuperPublic). A class whose label is
	// removed leaves the cache as a delete event.
	Super: func(env *resources.Env) cache.SharedIndexInformer {
		return env.SuperPublic.Storage().V1().StorageClasses().Informer()
	},
	Up: func(ctx context.Context, env *resources.Env, c *tenant.Cluster, _, name string) error {
		return reconcileUpward(ctx, env, c, name)
	},
}

var _ resources.Resource = Resource
