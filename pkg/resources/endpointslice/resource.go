package endpointslice

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/endpoints"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// ManagedBy is the endpointslice.kubernetes.io/managed-by value of every super EndpointSlice
// the syncer writes.
const ManagedBy = "vc-syncer.tenancy.vcsyncer.io"

// tenantControllerManagedBy is the managed-by value of slices the tenant's EndpointSlice
// controller writes for Services with a selector.
const tenantControllerManagedBy = "endpointslice-controller.k8s.io"

// Resource syncs EndpointSlices of Services without a selector.
var Resource = resourceKind{resources.Funcs{
	Name: resources.KindEndpointSlice,
	// Tenant also registers the tenant Service informer.
	Tenant: func(c *tenant.Cluster) cache.SharedIndexInformer {
		c.Informers.Core().V1().Services().Informer()
		return c.Informers.Discovery().V1().EndpointSlices().Informer()
	},
	// Super also indexes the super Pod cache by IP (endpoints.AddPodIPIndex), which the
	// policy check reads.
	Super: func(env *resources.Env) cache.SharedIndexInformer {
		endpoints.AddPodIPIndex(env)
		return env.SuperInformers.Discovery().V1().EndpointSlices().Informer()
	},
	Down: reconcileDownward,
}}

// reconcileDownward is the kind's downward reconciler: the generic one (reconcile.Reconcile)
// for the EndpointSlices of Services without a selector, recording the IPs they name (watched).
func reconcileDownward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	tl := c.Informers.Discovery().V1().EndpointSlices().Lister()
	svcs := c.Informers.Core().V1().Services().Lister()
	sl := env.SuperInformers.Discovery().V1().EndpointSlices().Lister()
	req := resources.Request{Tenant: c.Name, Kind: resources.KindEndpointSlice, Namespace: ns, Name: name}
	if es, err := (selectorless{slices: tl.EndpointSlices(ns), services: svcs.Services(ns)}).Get(name); err == nil {
		ips, _ := addressesOf(es)
		watched.Set(c, req, ips)
	} else {
		watched.Drop(c, req)
	}
	return reconcile.Reconcile(ctx, env, c, ns, name, reconcile.Spec[*discoveryv1.EndpointSlice]{
		Kind: resources.KindEndpointSlice,
		Tenant: func(ns string) reconcile.Getter[*discoveryv1.EndpointSlice] {
			return selectorless{slices: tl.EndpointSlices(ns), services: svcs.Services(ns)}
		},
		Refuse: func(o *discoveryv1.EndpointSlice) *policy.Denial { return Refuse(env, c, o) },
		Super: func(ns string) reconcile.Getter[*discoveryv1.EndpointSlice] {
			// The super EndpointSlice controller copies a Service's labels (the syncer's
			// managed-by among them) onto its slices; those are not the syncer's.
			return resources.Stamped[*discoveryv1.EndpointSlice](sl.EndpointSlices(ns), discoveryv1.Resource("endpointslices"))
		},
		Client: func(ns string) reconcile.Writer[*discoveryv1.EndpointSlice] {
			return env.Super.DiscoveryV1().EndpointSlices(ns)
		},
		Desired: func(o *discoveryv1.EndpointSlice, superNS string, existing *discoveryv1.EndpointSlice, has bool) *discoveryv1.EndpointSlice {
			return Desired(c, o, superNS, existing, has)
		},
		Equal: Equal,
	})
}

type resourceKind struct{ resources.Funcs }

var (
	_ resources.Resource        = Resource
	_ resources.DependentMapper = Resource
)

// DependsOn implements resources.DependentMapper: EndpointSlices depend on their Service and
// on the IPs of the tenant's Pods.
func (resourceKind) DependsOn() []resources.Kind {
	return []resources.Kind{resources.KindService, resources.KindPod}
}

// watched records the IPs each tenant's synced slices name.
var watched endpoints.IPWatch

// Forget drops what the kind records about tenant tenantName (called when it is removed).
func (resourceKind) Forget(tenantName string) { watched.Forget(tenantName) }

// Refuse returns why tenant c's policy refuses tenant slice o (rule endpointAddress), or nil:
// the rules of endpoints.Refuse, and an FQDN slice (it names host names, not addresses) is
// refused.
func Refuse(env *resources.Env, c *tenant.Cluster, o *discoveryv1.EndpointSlice) *policy.Denial {
	if o.AddressType == discoveryv1.AddressTypeFQDN {
		return policy.EndpointDenial(string(resources.KindEndpointSlice), o.Namespace, o.Name,
			[]string{"addressType FQDN names host names, not addresses"})
	}
	ips, refs := addressesOf(o)
	return policy.EndpointDenial(string(resources.KindEndpointSlice), o.Namespace, o.Name, endpoints.AddressProblems(env, c, o.Namespace, ips, refs))
}

func addressesOf(o *discoveryv1.EndpointSlice) (ips []string, refs []*corev1.ObjectReference) {
	for _, e := range o.Endpoints {
		ips = append(ips, e.Addresses...)
		refs = append(refs, e.TargetRef)
	}
	return ips, refs
}

// Dependents implements resources.DependentMapper: for a Service, the tenant slices labelled
// with its name; for a Pod, the slices that named one of its IPs when last reconciled
// (endpoints.IPWatch).
func (resourceKind) Dependents(c *tenant.Cluster, svc metav1.Object) []resources.Request {
	if p, ok := podcache.From(svc); ok {
		return watched.For(c, p)
	}
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc.GetName()})
	slices, err := c.Informers.Discovery().V1().EndpointSlices().Lister().EndpointSlices(svc.GetNamespace()).List(sel)
	if err != nil {
		return nil
	}
	out := make([]resources.Request, 0, len(slices))
	for _, s := range slices {
		out = append(out, resources.Request{Tenant: c.Name, Kind: resources.KindEndpointSlice, Namespace: s.Namespace, Name: s.Name})
	}
	return out
}

// selectorless reads tenant EndpointSlices and reports NotFound for those that are not synced
// (see Synced), so the generic reconciler treats them as absent and deletes an owned super copy.
type selectorless struct {
	slices   discoverylisters.EndpointSliceNamespaceLister
	services corelisters.ServiceNamespaceLister
}

func (g selectorless) Get(name string) (*discoveryv1.EndpointSlice, error) {
	s, err := g.slices.Get(name)
	if err != nil {
		return nil, err
	}
	if !Synced(s, g.services) {
		return nil, apierrors.NewNotFound(discoveryv1.Resource("endpointslices"), name)
	}
	return s, nil
}

// Synced reports whether tenant slice s is synced: it names (kubernetes.io/service-name) a
// tenant Service without a selector, and the tenant's EndpointSlice controller does not manage it.
func Synced(s *discoveryv1.EndpointSlice, services corelisters.ServiceNamespaceLister) bool {
	svcName := s.Labels[discoveryv1.LabelServiceName]
	if svcName == "" || s.Labels[discoveryv1.LabelManagedBy] == tenantControllerManagedBy {
		return false
	}
	svc, err := services.Get(svcName)
	return err == nil && endpoints.Synced(svc)
}

// Desired returns the super copy of tenant EndpointSlice o in superNS.
func Desired(c *tenant.Cluster, o *discoveryv1.EndpointSlice, superNS string, existing *discoveryv1.EndpointSlice, has bool) *discoveryv1.EndpointSlice {
	var ex metav1.Object
	if has {
		ex = existing
	}
	meta := resources.DesiredMeta(c, o, superNS, ex)
	// The super Service keeps the tenant Service's name in the mapped namespace.
	meta.Labels[discoveryv1.LabelServiceName] = o.Labels[discoveryv1.LabelServiceName]
	meta.Labels[discoveryv1.LabelManagedBy] = ManagedBy
	eps := make([]discoveryv1.Endpoint, len(o.Endpoints))
	for i, e := range o.Endpoints {
		e = *e.DeepCopy()
		e.TargetRef = endpoints.TargetRef(c, e.TargetRef)
		eps[i] = e
	}
	if len(eps) == 0 {
		eps = nil
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  meta,
		AddressType: o.AddressType,
		Endpoints:   eps,
		Ports:       o.Ports,
	}
}

// Equal reports whether the super EndpointSlice has the desired content.
func Equal(want, have *discoveryv1.EndpointSlice) bool {
	return resources.MetaEqual(want, have) && want.AddressType == have.AddressType &&
		equality.Semantic.DeepEqual(want.Endpoints, have.Endpoints) &&
		equality.Semantic.DeepEqual(want.Ports, have.Ports)
}
