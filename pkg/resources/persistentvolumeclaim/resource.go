package persistentvolumeclaim

import (
	"context"

	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/persistentvolume"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs PersistentVolumeClaims.
type Resource struct{}

var _ resources.Resource = Resource{}

// Kind implements resources.Resource.
func (Resource) Kind() resources.Kind { return resources.KindPersistentVolumeClaim }

// TenantInformer implements resources.Resource. Tenant PVs are cached too (binding and the
// preset volumeName mapping read them).
func (Resource) TenantInformer(c *tenant.Cluster) cache.SharedIndexInformer {
	persistentvolume.Resource{}.TenantInformer(c)
	return c.Informers.Core().V1().PersistentVolumeClaims().Informer()
}

// SuperInformer implements resources.Resource.
func (Resource) SuperInformer(env *resources.Env) cache.SharedIndexInformer {
	return env.SuperInformers.Core().V1().PersistentVolumeClaims().Informer()
}

// Downward implements resources.Resource.
func (Resource) Downward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	return reconcileDownward(ctx, env, c, ns, name)
}

// Upward implements resources.Resource.
func (Resource) Upward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	return reconcileUpward(ctx, env, c, ns, name)
}
