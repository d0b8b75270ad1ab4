// Package endpoints syncs Endpoints downward (tenant → super) for Services without a selector.
//
// A Service with a selector gets its Endpoints from the super cluster's own endpoints
// controller (it selects the super Pods), so the tenant's Endpoints of such a Service are never
// synced, and a super Endpoints object the syncer does not own is never touched. Only the
// Endpoints of a tenant Service without a selector — written by the tenant's users or
// operators to point a Service at addresses of their choosing — get a super copy, at the same
// name in the mapped super namespace, next to the super copy of the Service.
//
// # Translation
//
//   - Addresses (ip, hostname, nodeName) are passed as-is: the tenant's IPs are super-cluster
//     addresses already (tenant Pods show their super Pod IPs), and external addresses mean the
//     same in both clusters.
//   - Whoever writes Endpoints points a Service at any address the network reaches
//     (CVE-2021-25740), and the super copy is written with the syncer's rights, so the tenant's
//     policy decides (Refuse, rule endpointAddress): every address must be an IP of one of the
//     tenant's own running super Pods (not a Node's address) or inside
//     network.allowedEndpointCIDRs; loopback, link-local and multicast addresses never are;
//     no targetRef may name another namespace. Otherwise the whole object is refused (no super
//     copy; one synced before is deleted).
//   - A Pod IP the super cluster has not assigned yet is refused now and re-examined when a
//     tenant Pod shows that IP (DependentMapper on Pods, IPWatch). Every address in a super copy
//     is always an IP of one of the tenant's running super Pods: when a super Pod of the tenant
//     is deleted, finishes or changes IPs, the objects that named its old IPs are re-examined
//     from the super Pod's event alone (resources.PodIPMapper, PodIPDependents), and their
//     super copies deleted, whatever the tenant's apiserver does with the syncer's writes to
//     the tenant Pod (a tenant's own admission webhook may refuse them, so the tenant Pod keeps
//     its IP and sends no event). A remediation scan checks the same rule (Check:
//     refused_in_super), so a missed event is repaired on the next scans.
//   - targetRef: its namespace is mapped to the super namespace and its UID and
//     resourceVersion are dropped (tenant UIDs mean nothing in the super cluster).
//   - The super cluster's endpoints controller copies a Service's labels onto the Endpoints it
//     writes, so the super Endpoints of a synced Service with a selector carry the syncer's
//     managed-by label too, without the ownership annotations. They are not the syncer's
//     (resources.Stamped hides them from the reconciler) and are never touched.
//   - The super copy is labelled endpointslice.kubernetes.io/skip-mirror=true, so the super
//     cluster's EndpointSlice mirroring controller does not mirror it: the tenant's
//     EndpointSlices (mirrored by the tenant's own controller) are synced instead (see
//     pkg/resources/endpointslice), and the Service gets exactly one set of slices.
//
// # Order
//
// Endpoints applied before their Service are not synced until the Service exists; the syncer
// re-enqueues them when the Service appears or changes (DependentMapper). A Service that gains
// a selector, or is deleted, has the super copy of its Endpoints deleted.
//
// Kind is the part Endpoints and EndpointSlices share (which objects are synced, the address
// policy, IPWatch, the dependents); each package holds its translation.
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/admit, pkg/conversion, pkg/podcache, pkg/policy, pkg/reconcile, pkg/resources,
// pkg/tenant); test/layering checks it.
package endpoints
