package pod

import (
	"context"

	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs Pods.
type Resource struct{}

var _ resources.Resource = Resource{}

// Kind implements resources.Resource.
func (Resource) Kind() resources.Kind { return resources.KindPod }

// TenantInformer implements resources.Resource.
func (Resource) TenantInformer(c *tenant.Cluster) cache.SharedIndexInformer {
	c.Informers.Core().V1().Nodes().Informer() // vNodes are looked up in the tenant cache
	return c.Informers.Core().V1().Pods().Informer()
}

// SuperInformer implements resources.Resource.
func (Resource) SuperInformer(env *resources.Env) cache.SharedIndexInformer {
	return env.SuperInformers.Core().V1().Pods().Informer()
}

// Downward implements resources.Resource.
func (Resource) Downward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	return reconcileDownward(ctx, env, c, ns, name)
}

// Upward implements resources.Resource.
func (Resource) Upward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	return reconcileUpward(ctx, env, c, ns, name)
}
