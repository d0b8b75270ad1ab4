package persistentvolumeclaim

import (
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/persistentvolume"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs PersistentVolumeClaims.
var Resource = resources.Funcs{
	Name: resources.KindPersistentVolumeClaim,
	// Tenant also caches the tenant PVs (binding and the preset volumeName mapping read them).
	Tenant: func(c *tenant.Cluster) cache.SharedIndexInformer {
		persistentvolume.Resource.TenantInformer(c)
		return c.Informers.Core().V1().PersistentVolumeClaims().Informer()
	},
	Super: func(env *resources.Env) cache.SharedIndexInformer {
		return env.SuperInformers.Core().V1().PersistentVolumeClaims().Informer()
	},
	Down: reconcileDownward,
	Up:   reconcileUpward,
}

var _ resources.Resource = Resource
