package endpoints

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs Endpoints of Services without a selector.
var Resource = resourceKind{resources.Funcs{
	Name: resources.KindEndpoints,
	// Tenant also registers the tenant Service informer, which the reconciler reads to decide
	// whether the Endpoints are synced.
	Tenant: func(c *tenant.Cluster) cache.SharedIndexInformer {
		c.Informers.Core().V1().Services().Informer()
		return c.Informers.Core().V1().Endpoints().Informer()
	},
	// Super also indexes the super Pod cache by IP (AddPodIPIndex), which the policy check
	// reads.
	Super: func(env *resources.Env) cache.SharedIndexInformer {
		AddPodIPIndex(env)
		return env.SuperInformers.Core().V1().Endpoints().Informer()
	},
	Down: reconcileDownward,
}}

// reconcileDownward is the kind's downward reconciler: the generic one (reconcile.Reconcile)
// for the Endpoints of Services without a selector, recording the IPs they name (watched).
func reconcileDownward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	tl := c.Informers.Core().V1().Endpoints().Lister()
	svcs := c.Informers.Core().V1().Services().Lister()
	sl := env.SuperInformers.Core().V1().Endpoints().Lister()
	req := resources.Request{Tenant: c.Name, Kind: resources.KindEndpoints, Namespace: ns, Name: name}
	if ep, err := (selectorless{endpoints: tl.Endpoints(ns), services: svcs.Services(ns)}).Get(name); err == nil {
		ips, _ := addressesOf(ep)
		watched.Set(c, req, ips)
	} else {
		watched.Drop(c, req)
	}
	return reconcile.Reconcile(ctx, env, c, ns, name, reconcile.Spec[*corev1.Endpoints]{
		Kind: resources.KindEndpoints,
		Tenant: func(ns string) reconcile.Getter[*corev1.Endpoints] {
			return selectorless{endpoints: tl.Endpoints(ns), services: svcs.Services(ns)}
		},
		Refuse: func(o *corev1.Endpoints) *policy.Denial { return Refuse(env, c, o) },
		Super: func(ns string) reconcile.Getter[*corev1.Endpoints] {
			return resources.Stamped[*corev1.Endpoints](sl.Endpoints(ns), corev1.Resource("endpoints"))
		},
		Client: func(ns string) reconcile.Writer[*corev1.Endpoints] { return env.Super.CoreV1().Endpoints(ns) },
		Desired: func(o *corev1.Endpoints, superNS string, existing *corev1.Endpoints, has bool) *corev1.Endpoints {
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

// DependsOn implements resources.DependentMapper: Endpoints depend on their Service and on the
// IPs of the tenant's Pods.
func (resourceKind) DependsOn() []resources.Kind {
	return []resources.Kind{resources.KindService, resources.KindPod}
}

// Dependents implements resources.DependentMapper: for a Service, the Endpoints named after
// it; for a Pod, the Endpoints that named one of its IPs when last reconciled (see IPWatch).
func (resourceKind) Dependents(c *tenant.Cluster, dep metav1.Object) []resources.Request {
	if p, ok := podcache.From(dep); ok {
		return watched.For(c, p)
	}
	return []resources.Request{{Tenant: c.Name, Kind: resources.KindEndpoints, Namespace: dep.GetNamespace(), Name: dep.GetName()}}
}

// watched records the IPs each tenant's synced Endpoints name.
var watched IPWatch

// Forget drops what the kind records about tenant tenantName (called when it is removed).
func (resourceKind) Forget(tenantName string) { watched.Forget(tenantName) }

// Refuse returns why tenant c's policy refuses tenant Endpoints o (rule endpointAddress), or
// nil: every address (ready or not) must be an IP of the tenant's own running super Pods or in
// network.allowedEndpointCIDRs, and no targetRef may name another namespace.
func Refuse(env *resources.Env, c *tenant.Cluster, o *corev1.Endpoints) *policy.Denial {
	ips, refs := addressesOf(o)
	return policy.EndpointDenial(string(resources.KindEndpoints), o.Namespace, o.Name, AddressProblems(env, c, o.Namespace, ips, refs))
}

func addressesOf(o *corev1.Endpoints) (ips []string, refs []*corev1.ObjectReference) {
	for _, s := range o.Subsets {
		for _, as := range [][]corev1.EndpointAddress{s.Addresses, s.NotReadyAddresses} {
			for _, a := range as {
				ips = append(ips, a.IP)
				refs = append(refs, a.TargetRef)
			}
		}
	}
	return ips, refs
}

// selectorless reads tenant Endpoints and reports NotFound for those whose Service is missing
// or has a selector, so the generic reconciler treats them as absent: no super copy, and an
// existing one (owned by the tenant) is deleted.
type selectorless struct {
	endpoints corelisters.EndpointsNamespaceLister
	services  corelisters.ServiceNamespaceLister
}

func (g selectorless) Get(name string) (*corev1.Endpoints, error) {
	ep, err := g.endpoints.Get(name)
	if err != nil {
		return nil, err
	}
	svc, err := g.services.Get(name)
	if err != nil {
		return nil, err
	}
	if !Synced(svc) {
		return nil, apierrors.NewNotFound(corev1.Resource("endpoints"), name)
	}
	return ep, nil
}

// Synced reports whether the Endpoints (and EndpointSlices) of tenant Service svc are synced:
// only when it has no selector and is not an ExternalName Service (which has no endpoints).
func Synced(svc *corev1.Service) bool {
	return len(svc.Spec.Selector) == 0 && svc.Spec.Type != corev1.ServiceTypeExternalName
}

// Desired returns the super copy of tenant Endpoints o in superNS.
func Desired(c *tenant.Cluster, o *corev1.Endpoints, superNS string, existing *corev1.Endpoints, has bool) *corev1.Endpoints {
	var ex metav1.Object
	if has {
		ex = existing
	}
	meta := resources.DesiredMeta(c, o, superNS, ex)
	meta.Labels[discoveryv1.LabelSkipMirror] = "true"
	subsets := make([]corev1.EndpointSubset, 0, len(o.Subsets))
	for _, s := range o.Subsets {
		s = *s.DeepCopy()
		for i := range s.Addresses {
			s.Addresses[i].TargetRef = TargetRef(c, s.Addresses[i].TargetRef)
		}
		for i := range s.NotReadyAddresses {
			s.NotReadyAddresses[i].TargetRef = TargetRef(c, s.NotReadyAddresses[i].TargetRef)
		}
		subsets = append(subsets, s)
	}
	if len(subsets) == 0 {
		subsets = nil
	}
	return &corev1.Endpoints{ObjectMeta: meta, Subsets: subsets}
}

// TargetRef returns the super form of a tenant endpoint's targetRef: the namespace mapped to
// the super namespace, UID and resourceVersion dropped. nil stays nil.
func TargetRef(c *tenant.Cluster, ref *corev1.ObjectReference) *corev1.ObjectReference {
	if ref == nil {
		return nil
	}
	out := *ref
	if out.Namespace != "" {
		out.Namespace = resources.SuperNamespace(c, out.Namespace)
	}
	out.UID, out.ResourceVersion = "", ""
	return &out
}

// Equal reports whether the super Endpoints have the desired content.
func Equal(want, have *corev1.Endpoints) bool {
	return resources.MetaEqual(want, have) && equality.Semantic.DeepEqual(want.Subsets, have.Subsets)
}
