package pod

import (
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs Pods.
var Resource = resourceKind{resources.Funcs{
	Name: resources.KindPod,
	Tenant: func(c *tenant.Cluster) cache.SharedIndexInformer {
		c.Informers.Core().V1().Nodes().Informer() // vNodes are looked up in the tenant cache
		return c.Informers.Core().V1().Pods().Informer()
	},
	Super: func(env *resources.Env) cache.SharedIndexInformer {
		return env.SuperInformers.Core().V1().Pods().Informer()
	},
	Down: reconcileDownward,
	Up:   reconcileUpward,
}}

type resourceKind struct{ resources.Funcs }

var _ resources.Resource = Resource
