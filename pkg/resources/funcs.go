package resources

import (
	"context"

	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Funcs is a Resource made of functions: the plain parts of a kind whose reconcilers are its
// own (Pod, Namespace, PersistentVolumeClaim, Service, the upward-only kinds). A kind with more
// to say (a Checker, a DependentMapper) embeds it in a type of its own and adds those methods.
// Kinds whose super copy is a plain translation use reconcile.Descriptor instead.
type Funcs struct {
	// Name is the kind's name (Kind).
	Name Kind
	// Tenant returns (registering on first call) the kind's informer on tenant c, and registers
	// any other tenant informer the reconcilers read.
	Tenant func(c *tenant.Cluster) cache.SharedIndexInformer
	// Super returns (registering on first call) the kind's informer on the super cluster.
	Super func(env *Env) cache.SharedIndexInformer
	// Down reconciles the super copy of tenant object namespace/name (Resource.Downward); nil
	// for kinds that are never synced down.
	Down func(ctx context.Context, env *Env, c *tenant.Cluster, namespace, name string) error
	// Up reconciles the tenant object namespace/name from the super cluster
	// (Resource.Upward); nil for kinds without an upward path.
	Up func(ctx context.Context, env *Env, c *tenant.Cluster, namespace, name string) error
}

var _ Resource = Funcs{}

// Kind implements Resource.
func (f Funcs) Kind() Kind { return f.Name }

// TenantInformer implements Resource.
func (f Funcs) TenantInformer(c *tenant.Cluster) cache.SharedIndexInformer { return f.Tenant(c) }

// SuperInformer implements Resource.
func (f Funcs) SuperInformer(env *Env) cache.SharedIndexInformer { return f.Super(env) }

// Downward implements Resource: Down, or nothing when Down is nil.
func (f Funcs) Downward(ctx context.Context, env *Env, c *tenant.Cluster, namespace, name string) error {
	if f.Down == nil {
		return nil
	}
	return f.Down(ctx, env, c, namespace, name)
}

// Upward implements Resource: Up, or nothing when Up is nil.
func (f Funcs) Upward(ctx context.Context, env *Env, c *tenant.Cluster, namespace, name string) error {
	if f.Up == nil {
		return nil
	}
	return f.Up(ctx, env, c, namespace, name)
}
