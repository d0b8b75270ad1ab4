package endpoints

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs Endpoints of Services without a selector.
var Resource = &Kind[*corev1.Endpoints]{
	Name:     resources.KindEndpoints,
	Resource: corev1.Resource("endpoints"),
	Informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
		return f.Core().V1().Endpoints().Informer()
	},
	Client: func(env *resources.Env, ns string) reconcile.Writer[*corev1.Endpoints] {
		return env.Super.CoreV1().Endpoints(ns)
	},
	Synced: func(c *tenant.Cluster, o *corev1.Endpoints) bool {
		svc, err := c.Informers.Core().V1().Services().Lister().Services(o.Namespace).Get(o.Name)
		return err == nil && Synced(svc)
	},
	Addresses:   addressesOf,
	Refuse:      Refuse,
	Desired:     Desired,
	Equal:       Equal,
	ServiceName: func(o *corev1.Endpoints) string { return o.Name },
	// ForService: the Endpoints named after the Service.
	ForService: func(c *tenant.Cluster, svc metav1.Object) []resources.Request {
		return []resources.Request{{Tenant: c.Name, Kind: resources.KindEndpoints, Namespace: svc.GetNamespace(), Name: svc.GetName()}}
	},
}

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
