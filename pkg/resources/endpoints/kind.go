package endpoints

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/listers"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Kind describes a tenant kind that lists the addresses behind a Service (Endpoints,
// EndpointSlice): synced downward only for Services without a selector (Synced), refused
// unless the tenant's policy allows every address it names (Refuse), and reconciled again
// when its Service changes or a tenant Pod with an IP it named changes (DependentMapper,
// IPWatch). A *Kind is a resources.Resource, a resources.DependentMapper and a
// resources.Checker; the generic reconciler (reconcile.Reconcile) writes the super copies.
type Kind[T reconcile.Object] struct {
	// Name is the kind's name, for requests, errors, Events and metrics.
	Name resources.Kind
	// Resource is the kind's API resource, named in NotFound errors.
	Resource schema.GroupResource
	// Informer returns the kind's typed informer of factory f (tenant and super alike).
	Informer func(f informers.SharedInformerFactory) cache.SharedIndexInformer
	// Client returns the typed super client of namespace superNS.
	Client func(env *resources.Env, superNS string) reconcile.Writer[T]
	// Synced reports whether tenant object o of tenant c is synced (read from c's caches).
	Synced func(c *tenant.Cluster, o T) bool
	// Addresses returns the IPs o names and the targetRef of each (nil where unset).
	Addresses func(o T) (ips []string, refs []*corev1.ObjectReference)
	// Refuse returns why tenant c's policy refuses o (rule endpointAddress), or nil.
	Refuse func(env *resources.Env, c *tenant.Cluster, o T) *policy.Denial
	// Desired returns the super copy of tenant object o in superNS; existing is the super
	// object (has: whether there is one).
	Desired func(c *tenant.Cluster, o T, superNS string, existing T, has bool) T
	// Equal reports whether super object have has the content of want.
	Equal func(want, have T) bool
	// ForService returns the downward requests of the tenant objects that list tenant Service
	// svc's addresses.
	ForService func(c *tenant.Cluster, svc metav1.Object) []resources.Request
	// ServiceName returns the name of the tenant Service whose addresses o lists ("" for none).
	ServiceName func(o T) string

	watched IPWatch
}

var (
	_ resources.Resource        = (*Kind[*corev1.Endpoints])(nil)
	_ resources.DependentMapper = (*Kind[*corev1.Endpoints])(nil)
	_ resources.Checker         = (*Kind[*corev1.Endpoints])(nil)
	_ resources.PodIPMapper     = (*Kind[*corev1.Endpoints])(nil)
)

// Kind implements resources.Resource.
func (k *Kind[T]) Kind() resources.Kind { return k.Name }

// TenantInformer implements resources.Resource; it also registers the tenant Service
// informer, which Synced reads.
func (k *Kind[T]) TenantInformer(c *tenant.Cluster) cache.SharedIndexInformer {
	c.Informers.Core().V1().Services().Informer()
	return k.Informer(c.Informers)
}

// SuperInformer implements resources.Resource; it also indexes the super Pod cache by IP
// (AddPodIPIndex), which the policy check reads.
func (k *Kind[T]) SuperInformer(env *resources.Env) cache.SharedIndexInformer {
	AddPodIPIndex(env)
	return k.Informer(env.SuperInformers)
}

// Downward implements resources.Resource: reconcile.Reconcile over the synced objects only (an
// object that is not synced reads as absent, so an owned super copy is deleted), recording the
// IPs the object names for Dependents.
func (k *Kind[T]) Downward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	tenantInf, superInf := k.Informer(c.Informers), k.Informer(env.SuperInformers)
	tenantGet := func(ns string) reconcile.Getter[T] {
		return synced[T]{k: k, c: c, l: listers.NewNamespaced(listers.New[T](tenantInf.GetIndexer(), k.Resource), ns)}
	}
	req := resources.Request{Tenant: c.Name, Kind: k.Name, Namespace: ns, Name: name}
	if k.heldOut(c, tenantInf, ns, name) {
		return nil
	}
	if o, err := tenantGet(ns).Get(name); err == nil {
		ips, _ := k.Addresses(o)
		k.watched.Set(c, req, ips)
	} else {
		k.watched.Drop(c, req)
	}
	return reconcile.Reconcile(ctx, env, c, ns, name, reconcile.Spec[T]{
		Kind:   k.Name,
		Tenant: tenantGet,
		Refuse: func(o T) *policy.Denial { return k.Refuse(env, c, o) },
		Super: func(ns string) reconcile.Getter[T] {
			// The super controllers copy a Service's labels (the syncer's managed-by among
			// them) onto the objects they write; those are not the syncer's.
			return resources.Stamped[T](listers.NewNamespaced(listers.New[T](superInf.GetIndexer(), k.Resource), ns), k.Resource)
		},
		Client: func(ns string) reconcile.Writer[T] { return k.Client(env, ns) },
		Desired: func(o T, superNS string, existing T, has bool) T {
			return k.Desired(c, o, superNS, existing, has)
		},
		Equal: k.Equal,
	})
}

// heldOut reports (and for a stub, refuses: admit.Deny, once per version) whether tenant
// object ns/name or its Service is a stub in the tenant caches (tenant.IsHeldOut: kept out of
// the syncer's memory). Then nothing is written: the content of a stub is unknown (a stub
// carries no labels, so a slice's Service cannot be told), and a stub Service would read as
// one without a selector. A super copy synced before is left as it was.
func (k *Kind[T]) heldOut(c *tenant.Cluster, tenantInf cache.SharedIndexInformer, ns, name string) bool {
	o, err := listers.NewNamespaced(listers.New[T](tenantInf.GetIndexer(), k.Resource), ns).Get(name)
	if err != nil || !o.GetDeletionTimestamp().IsZero() {
		return false
	}
	if d := admit.HeldOut(c, k.Name, o); d != nil {
		admit.Deny(c, k.Name, o, d)
		return true
	}
	if k.ServiceName == nil {
		return false
	}
	svc, err := c.Informers.Core().V1().Services().Lister().Services(ns).Get(k.ServiceName(o))
	return err == nil && tenant.IsHeldOut(svc)
}

// Upward implements resources.Resource: the kind has no upward path.
func (k *Kind[T]) Upward(context.Context, *resources.Env, *tenant.Cluster, string, string) error {
	return nil
}

// DependsOn implements resources.DependentMapper: the objects depend on their Service and on
// the IPs of the tenant's Pods.
func (k *Kind[T]) DependsOn() []resources.Kind {
	return []resources.Kind{resources.KindService, resources.KindPod}
}

// Dependents implements resources.DependentMapper: for a Service, ForService; for a Pod, the
// objects that named one of its IPs when last reconciled (IPWatch).
func (k *Kind[T]) Dependents(c *tenant.Cluster, dep metav1.Object) []resources.Request {
	if st, ok := podcache.StatusOf(dep); ok { // a Pod's IPs are all it needs: no spec decoded
		return k.watched.For(c, st)
	}
	return k.ForService(c, dep)
}

// PodIPDependents implements resources.PodIPMapper: the objects of tenant c that named one of
// ips when last reconciled (IPWatch).
func (k *Kind[T]) PodIPDependents(c *tenant.Cluster, ips []string) []resources.Request {
	return k.watched.ForIPs(c, ips)
}

// Forget drops what the kind records about tenant tenantName (called when it is removed).
func (k *Kind[T]) Forget(tenantName string) { k.watched.Forget(tenantName) }

// Check implements resources.Checker for synced objects only (the others are never synced, so
// always in sync): a super copy whose tenant object the policy now refuses (Refuse: an address
// that is no longer the IP of one of the tenant's running super Pods, such as one whose Pod is
// gone while its tenant Pod stays in the tenant's apiserver) is MismatchRefusedInSuper, which
// the downward reconcile repairs by deleting the copy; otherwise the reconciler's own Desired
// and Equal decide (resources.CheckWith).
func (k *Kind[T]) Check(env *resources.Env, c *tenant.Cluster, t, s metav1.Object) resources.Mismatch {
	o, ok := t.(T)
	if !ok || tenant.IsHeldOut(o) || !k.Synced(c, o) {
		return resources.InSync
	}
	if k.ServiceName != nil {
		if svc, err := c.Informers.Core().V1().Services().Lister().Services(o.GetNamespace()).Get(k.ServiceName(o)); err == nil && tenant.IsHeldOut(svc) {
			return resources.InSync // left as it was while its Service is a stub (Downward)
		}
	}
	if s != nil && t.GetDeletionTimestamp() == nil && conversion.OwnedByTenant(s, c.UID) && k.Refuse(env, c, o) != nil {
		return resources.MismatchRefusedInSuper
	}
	return resources.CheckWith(t, s, func(t, s T) T { return k.Desired(c, t, s.GetNamespace(), s, true) }, k.Equal)
}

// synced reads tenant objects and reports NotFound for those that are not synced, so the
// generic reconciler treats them as absent: no super copy, and an existing one (owned by the
// tenant) is deleted.
type synced[T reconcile.Object] struct {
	k *Kind[T]
	c *tenant.Cluster
	l reconcile.Getter[T]
}

func (g synced[T]) Get(name string) (T, error) {
	o, err := g.l.Get(name)
	if err != nil {
		return o, err
	}
	if !g.k.Synced(g.c, o) {
		var zero T
		return zero, apierrors.NewNotFound(g.k.Resource, name)
	}
	return o, nil
}
