package endpointslice

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

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
var Resource = &endpoints.Kind[*discoveryv1.EndpointSlice]{
	Name:     resources.KindEndpointSlice,
	Resource: discoveryv1.Resource("endpointslices"),
	Informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
		return f.Discovery().V1().EndpointSlices().Informer()
	},
	Client: func(env *resources.Env, ns string) reconcile.Writer[*discoveryv1.EndpointSlice] {
		return env.Super.DiscoveryV1().EndpointSlices(ns)
	},
	Synced: func(c *tenant.Cluster, o *discoveryv1.EndpointSlice) bool {
		return Synced(o, c.Informers.Core().V1().Services().Lister().Services(o.Namespace))
	},
	Addresses:  addressesOf,
	Refuse:     Refuse,
	Desired:    Desired,
	Equal:      Equal,
	ForService: forService,
	ServiceName: func(o *discoveryv1.EndpointSlice) string {
		return o.Labels[discoveryv1.LabelServiceName]
	},
}

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

// forService returns the downward requests of the tenant slices labelled
// (kubernetes.io/service-name) with tenant Service svc's name.
func forService(c *tenant.Cluster, svc metav1.Object) []resources.Request {
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
