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
//   - Other keys are mapped (resources.NamespaceSelectorKey) to the keys under which super
//     namespaces carry the tenant namespaces' labels (resources.NamespaceLabels: "team" →
//     ns.tenancy.vcsyncer.io/team, "example.com/team" →
//     example.com.ns.tenancy.vcsyncer.io/team), values and operators unchanged, so "team=a"
//     keeps meaning the tenant's namespaces labelled team=a. A key that cannot be mapped, or
//     one in the syncer's domain, becomes tenancy.vcsyncer.io/unmapped-namespace-label, which
//     no namespace carries.
//
// Consequence: a tenant policy can allow traffic only from and to the tenant's own Pods (and
// ipBlocks); peers such as "namespace kube-system" mean the tenant's kube-system, not the super
// cluster's (e.g. super DNS must be allowed through an ipBlock or by super-cluster policies).
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/conversion, pkg/reconcile, pkg/resources, pkg/tenant); test/layering
// checks it.
package networkpolicy
