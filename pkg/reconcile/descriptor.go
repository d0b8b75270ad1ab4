package reconcile

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/listers"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Descriptor describes a synced kind whose super copy is a translation of the tenant object: its
// informer and cache readers, the super client it writes
// through, and its translation (Desired, Equal, and the optional Skip and Refuse). A *Descriptor
// is a resources.Resource and a resources.Checker: Downward runs Reconcile with the Spec the
// descriptor makes, Check compares with the same Desired and Equal, so a remediation scan
// reports exactly what a reconcile would write. A kind's package holds only its translation;
// a kind with more to do (an upward path, dependents) embeds the *Descriptor and adds methods.
type Descriptor[T Object] struct {
	// Name is the kind's name, for requests, errors, Events and metrics.
	Name resources.Kind
	// Resource is the kind's API resource, named in the cache readers' NotFound errors.
	Resource schema.GroupResource
	// Informer returns the kind's typed informer of factory f (for example
	// f.Core().V1().ConfigMaps().Informer()), used for the tenant and the super factory alike,
	// so that a kind's package and any other reader share one cache per cluster, and a
	// resumable factory (pkg/checkpoint/source) builds it.
	Informer func(f informers.SharedInformerFactory) cache.SharedIndexInformer
	// Client returns the typed super client of namespace superNS.
	Client func(env *resources.Env, superNS string) Writer[T]
	// Skip reports tenant objects that are never synced (nil: none): the cluster's own
	// objects such as kube-root-ca.crt. A skipped object is always in sync for Check.
	Skip func(o T) bool
	// Refuse returns why tenant c's policy refuses object o as a whole (nil: it may be
	// synced; a nil Refuse refuses nothing); see Spec.Refuse.
	Refuse func(c *tenant.Cluster, o T) *policy.Denial
	// Desired builds the super copy of tenant object o of tenant c in superNS. existing is the
	// current super object, nil when there is none, so fields the super cluster allocated can
	// be kept. The result carries the ownership stamps (resources.DesiredMeta).
	Desired func(env *resources.Env, c *tenant.Cluster, o T, superNS string, existing metav1.Object) T
	// Equal reports whether have, the super object, matches want in every field the syncer owns.
	Equal func(want, have T) bool
}

var (
	_ resources.Resource = (*Descriptor[Object])(nil)
	_ resources.Checker  = (*Descriptor[Object])(nil)
)

// Kind implements resources.Resource.
func (k *Descriptor[T]) Kind() resources.Kind { return k.Name }

// TenantInformer implements resources.Resource: Informer of the tenant's factory.
func (k *Descriptor[T]) TenantInformer(c *tenant.Cluster) cache.SharedIndexInformer {
	return k.Informer(c.Informers)
}

// SuperInformer implements resources.Resource: Informer of the super factory.
func (k *Descriptor[T]) SuperInformer(env *resources.Env) cache.SharedIndexInformer {
	return k.Informer(env.SuperInformers)
}

// lister returns the namespaced cache reader of informer inf for namespace ns.
func (k *Descriptor[T]) lister(inf cache.SharedIndexInformer, ns string) Getter[T] {
	return listers.NewNamespaced(listers.New[T](inf.GetIndexer(), k.Resource), ns)
}

// Spec returns the Reconcile parameters of k for tenant c.
func (k *Descriptor[T]) Spec(env *resources.Env, c *tenant.Cluster) Spec[T] {
	tenantInf, superInf := k.TenantInformer(c), k.SuperInformer(env)
	s := Spec[T]{
		Kind:   k.Name,
		Tenant: func(ns string) Getter[T] { return k.lister(tenantInf, ns) },
		Super:  func(ns string) Getter[T] { return k.lister(superInf, ns) },
		Client: func(ns string) Writer[T] { return k.Client(env, ns) },
		Skip:   k.Skip,
		Desired: func(o T, superNS string, existing T, has bool) T {
			var ex metav1.Object
			if has {
				ex = existing
			}
			return k.Desired(env, c, o, superNS, ex)
		},
		Equal: k.Equal,
	}
	if k.Refuse != nil {
		s.Refuse = func(o T) *policy.Denial { return k.Refuse(c, o) }
	}
	return s
}

// Downward implements resources.Resource: Reconcile with Spec.
func (k *Descriptor[T]) Downward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	return Reconcile(ctx, env, c, ns, name, k.Spec(env, c))
}

// Upward implements resources.Resource: a translated kind has no upward path of its own.
func (k *Descriptor[T]) Upward(context.Context, *resources.Env, *tenant.Cluster, string, string) error {
	return nil
}

// Check implements resources.Checker with Desired and Equal, as Reconcile would compare: a
// skipped object, a stub (tenant.IsHeldOut), or one that is not a T, is in sync.
func (k *Descriptor[T]) Check(env *resources.Env, c *tenant.Cluster, t, s metav1.Object) resources.Mismatch {
	if o, ok := t.(T); !ok || (k.Skip != nil && k.Skip(o)) || tenant.IsHeldOut(t) {
		return resources.InSync // a stub's super copy, if any, is left as it was (Reconcile)
	}
	return resources.CheckWith(t, s, func(t, s T) T { return k.Desired(env, c, t, s.GetNamespace(), s) }, k.Equal)
}
