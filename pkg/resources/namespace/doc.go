// Package namespace syncs tenant Namespaces to their mapped super namespaces.
//
// A tenant namespace "ns" of tenant T maps to conversion.SuperNamespace(T, uid, ns). The super
// namespace is created on demand (by this reconciler or by the first namespaced object synced
// into it) and deleted when the tenant namespace is gone or terminating; deleting it deletes
// every super object of that tenant namespace. The super namespace records the tenant
// namespace it holds (conversion.AnnotationNamespace and AnnotationUID): when two tenant
// namespaces of one tenant map to the same name, the one that holds it keeps it and the other
// is refused (rule namespaceCollision), never deleting it. Each super
// namespace carries the tenant namespace's labels only under the syncer's keys
// (resources.NamespaceLabels: label k=v as ns.tenancy.vcsyncer.io/k=v, <prefix>/<name>=v as
// <prefix>.ns.tenancy.vcsyncer.io/<name>=v), so super-cluster NetworkPolicies, webhooks and
// policy engines selecting namespaces by plain keys (name=kube-system,
// istio-injection=enabled) never act on a tenant's choice; keys the tenant policy's
// metadata.allowedNamespaceLabelPrefixes lists (built-in: none) are set as they are too. Its
// annotations go through the metadata allowlist. Each super
// namespace has the ResourceQuota and LimitRange of the tenant's policy (admit.EnsureBounds),
// kept in line by this reconciler.
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/admit, pkg/conversion, pkg/reconcile, pkg/resources, pkg/tenant); test/layering
// checks it.
package namespace
