package networkpolicy

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs NetworkPolicies downward; it is also their remediation check.
var Resource = &reconcile.Descriptor[*networkingv1.NetworkPolicy]{
	Name:     resources.KindNetworkPolicy,
	Resource: networkingv1.Resource("networkpolicies"),
	Informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
		return f.Networking().V1().NetworkPolicies().Informer()
	},
	Client: func(env *resources.Env, ns string) reconcile.Writer[*networkingv1.NetworkPolicy] {
		return env.Super.NetworkingV1().NetworkPolicies(ns)
	},
	Desired: Desired,
	Equal:   Equal,
}

// Desired returns the super copy of tenant NetworkPolicy o in superNS (existing: the current
// super copy, or nil), with every peer's namespaceSelector confined to the tenant's super
// namespaces (NamespaceSelector).
func Desired(_ *resources.Env, c *tenant.Cluster, o *networkingv1.NetworkPolicy, superNS string, existing metav1.Object) *networkingv1.NetworkPolicy {
	spec := *o.Spec.DeepCopy()
	for i := range spec.Ingress {
		for j := range spec.Ingress[i].From {
			spec.Ingress[i].From[j].NamespaceSelector = NamespaceSelector(c, spec.Ingress[i].From[j].NamespaceSelector)
		}
	}
	for i := range spec.Egress {
		for j := range spec.Egress[i].To {
			spec.Egress[i].To[j].NamespaceSelector = NamespaceSelector(c, spec.Egress[i].To[j].NamespaceSelector)
		}
	}
	return &networkingv1.NetworkPolicy{ObjectMeta: resources.DesiredMeta(c, o, superNS, existing), Spec: spec}
}

// NamespaceSelector returns the super form of a tenant peer's namespaceSelector sel: nil stays
// nil (the policy's own namespace); otherwise kubernetes.io/metadata.name values are mapped to
// super namespace names, every other key to the key under which tenant namespace labels reach
// super namespaces (resources.NamespaceSelectorKey), and
// tenancy.vcsyncer.io/tenant-uid=<tenant UID> is required, so only the tenant's own super
// namespaces can match. sel is not modified.
func NamespaceSelector(c *tenant.Cluster, sel *metav1.LabelSelector) *metav1.LabelSelector {
	out := resources.SuperNamespaceSelector(c.Name, c.UID, sel)
	if out == nil {
		return nil
	}
	if out.MatchLabels == nil {
		out.MatchLabels = map[string]string{}
	}
	out.MatchLabels[conversion.LabelTenantUID] = c.UID
	return out
}

// Equal reports whether the super NetworkPolicy has the desired spec and metadata.
func Equal(want, have *networkingv1.NetworkPolicy) bool {
	return resources.MetaEqual(want, have) && equality.Semantic.DeepEqual(want.Spec, have.Spec)
}
