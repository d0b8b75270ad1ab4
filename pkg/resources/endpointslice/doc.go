// Package endpointslice syncs EndpointSlices downward (tenant → super) for Services without a
// selector.
//
// A Service with a selector gets its EndpointSlices from the super cluster's own EndpointSlice
// controller, so tenant slices of such a Service (and every slice the tenant's
// endpointslice-controller.k8s.io manages) are never synced, and super EndpointSlices the
// syncer does not own — those the super cluster's controllers manage — are never touched.
// The slices of a tenant Service without a selector (written by users, or mirrored from its
// Endpoints by the tenant's endpointslicemirroring-controller.k8s.io) get a super copy at the
// same name in the mapped super namespace. The super copies of their Endpoints are labelled
// endpointslice.kubernetes.io/skip-mirror, so the super cluster does not mirror them a second
// time (see pkg/resources/endpoints).
//
// # Translation
//
//   - kubernetes.io/service-name names the super Service: the Service's own name, which the
//     super copy keeps in the mapped namespace.
//   - endpointslice.kubernetes.io/managed-by is set to ManagedBy ("vc-syncer.tenancy.vcsyncer.io"),
//     so no super-cluster controller takes the slice for its own (the tenant's mirroring
//     controller's name would make the super mirroring controller manage, and delete, it).
//   - Addresses, hostnames, node names and zones are passed as-is (tenant Pod IPs are super
//     Pod IPs); targetRef namespaces are mapped to super namespaces and their UIDs dropped.
//   - The tenant's policy decides which addresses a slice may name, as for Endpoints (see
//     pkg/resources/endpoints, CVE-2021-25740; rule endpointAddress); FQDN slices are refused.
//
// # Order
//
// Slices applied before their Service wait for it; the syncer re-enqueues every slice of a
// Service when the Service appears or changes (DependentMapper).
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/policy, pkg/reconcile, pkg/resources,
// pkg/resources/endpoints, pkg/tenant); test/layering checks it.
package endpointslice
