// Package networkpolicy syncs NetworkPolicies (networking.k8s.io/v1) downward (tenant →
// super). It is opt-in: syncer.Options.OptInKinds, flag --opt-in-kinds=NetworkPolicy.
//
// # Translation
//
// podSelector (the policy's own and those of peers without a namespaceSelector), ports,
// policyTypes and ipBlock peers are copied unchanged: pod selectors are namespace-local and the
// super Pods keep the tenant Pods' labels in the mapped namespace; ipBlocks name addresses,
// which tenant Pods share with their super Pods.
//
// A peer's namespaceSelector selects namespaces cluster-wide, and in the super cluster that
// would reach other tenants' namespaces and the super cluster's own. It is rewritten
// (NamespaceSelector) so it can only select super namespaces of the same tenant:
//
//   - matchLabels gains tenancy.vcsyncer.io/tenant-uid=<tenant UID>, which the syncer puts on
//     every super namespace it creates for the tenant (and which a tenant cannot set: the key
//     is never copied from tenant namespaces). Selectors are ANDed, so an empty selector ({},
//     "all namespaces") means all the tenant's namespaces, and no term can widen it.
//   - kubernetes.io/metadata.name terms (matchLabels and In/NotIn expressions) have their
//     values mapped to super namespace names, so "the namespace named X" keeps meaning the
//     tenant's namespace X.
//   - Other keys are kept: super namespaces carry the tenant namespaces' labels that the
//     tenant's metadata allowlist passes (see resources.DesiredNamespace); a key it leaves out
//     matches only what the super namespace has of its own.
//
// Consequence: a tenant policy can allow traffic only from and to the tenant's own Pods (and
// ipBlocks); peers such as "namespace kube-system" mean the tenant's kube-system, not the super
// cluster's (e.g. super DNS must be allowed through an ipBlock or by super-cluster policies).
package networkpolicy

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs NetworkPolicies.
type Resource struct{}

var _ resources.Resource = Resource{}

// Kind implements resources.Resource.
func (Resource) Kind() resources.Kind { return resources.KindNetworkPolicy }

// TenantInformer implements resources.Resource.
func (Resource) TenantInformer(c *tenant.Cluster) cache.SharedIndexInformer {
	return c.Informers.Networking().V1().NetworkPolicies().Informer()
}

// SuperInformer implements resources.Resource.
func (Resource) SuperInformer(env *resources.Env) cache.SharedIndexInformer {
	return env.SuperInformers.Networking().V1().NetworkPolicies().Informer()
}

// Upward implements resources.Resource; NetworkPolicies have no upward path.
func (Resource) Upward(context.Context, *resources.Env, *tenant.Cluster, string, string) error {
	return nil
}

// Downward implements resources.Resource.
func (Resource) Downward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	tl := c.Informers.Networking().V1().NetworkPolicies().Lister()
	sl := env.SuperInformers.Networking().V1().NetworkPolicies().Lister()
	return reconcile.Reconcile(ctx, env, c, ns, name, reconcile.Spec[*networkingv1.NetworkPolicy]{
		Kind:   resources.KindNetworkPolicy,
		Tenant: func(ns string) reconcile.Getter[*networkingv1.NetworkPolicy] { return tl.NetworkPolicies(ns) },
		Super:  func(ns string) reconcile.Getter[*networkingv1.NetworkPolicy] { return sl.NetworkPolicies(ns) },
		Client: func(ns string) reconcile.Writer[*networkingv1.NetworkPolicy] {
			return env.Super.NetworkingV1().NetworkPolicies(ns)
		},
		Desired: func(o *networkingv1.NetworkPolicy, superNS string, existing *networkingv1.NetworkPolicy, has bool) *networkingv1.NetworkPolicy {
			return Desired(c, o, superNS, existing, has)
		},
		Equal: Equal,
	})
}

// Desired returns the super copy of tenant NetworkPolicy o in superNS, with every peer's
// namespaceSelector confined to the tenant's super namespaces (NamespaceSelector).
func Desired(c *tenant.Cluster, o *networkingv1.NetworkPolicy, superNS string, existing *networkingv1.NetworkPolicy, has bool) *networkingv1.NetworkPolicy {
	var ex metav1.Object
	if has {
		ex = existing
	}
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
	return &networkingv1.NetworkPolicy{ObjectMeta: resources.DesiredMeta(c, o, superNS, ex), Spec: spec}
}

// NamespaceSelector returns the super form of a tenant peer's namespaceSelector sel: nil stays
// nil (the policy's own namespace); otherwise kubernetes.io/metadata.name values are mapped to
// super namespace names and tenancy.vcsyncer.io/tenant-uid=<tenant UID> is required, so only
// the tenant's own super namespaces can match. sel is not modified.
func NamespaceSelector(c *tenant.Cluster, sel *metav1.LabelSelector) *metav1.LabelSelector {
	if sel == nil {
		return nil
	}
	out := sel.DeepCopy()
	if out.MatchLabels == nil {
		out.MatchLabels = map[string]string{}
	}
	if v, ok := out.MatchLabels[corev1.LabelMetadataName]; ok {
		out.MatchLabels[corev1.LabelMetadataName] = resources.SuperNamespace(c, v)
	}
	for i := range out.MatchExpressions {
		e := &out.MatchExpressions[i]
		if e.Key != corev1.LabelMetadataName {
			continue
		}
		for k, v := range e.Values {
			e.Values[k] = resources.SuperNamespace(c, v)
		}
	}
	out.MatchLabels[conversion.LabelTenantUID] = c.UID
	return out
}

// Equal reports whether the super NetworkPolicy has the desired spec and metadata.
func Equal(want, have *networkingv1.NetworkPolicy) bool {
	return resources.MetaEqual(want, have) && equality.Semantic.DeepEqual(want.Spec, have.Spec)
}
