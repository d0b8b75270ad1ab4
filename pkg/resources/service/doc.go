// Package service syncs Services downward (spec) and upward (load-balancer status, and the
// super cluster's node ports and the tenant's view of its addresses).
//
// The super copy asks the super cluster for the tenant's own values, so the tenant shows the
// ones that work there:
//   - ClusterIPs: requested when every one is inside the Tenant's spec.serviceCIDRs (the range
//     of the tenant apiserver, a part of the super cluster's Service range the provider gave
//     this tenant alone); otherwise, or when the super cluster refuses them (taken, outside its
//     range), the super cluster allocates and the tenant Service gets the condition
//     tenancy.vcsyncer.io/Synced=False, reason ClusterIPMismatch, and a Warning Event. A
//     ClusterIP is immutable on both sides: it is never changed afterwards.
//   - nodePorts and healthCheckNodePort (NodePort and LoadBalancer Services): requested. One the
//     tenant apiserver allocated that is taken in the super cluster is allocated there instead;
//     the upward path writes the super nodePort into the tenant Service (mutable; a
//     healthCheckNodePort is not, so a different one is reported as
//     HealthCheckNodePortMismatch). One a tenant client set (it owns the field in
//     managedFields) is never replaced: the Service gets no super copy (or its copy keeps its
//     previous port), the condition reason NodePortUnavailable or
//     HealthCheckNodePortUnavailable and a Warning Event, and it is not retried until it
//     changes (resources.ErrRejected). See allocWriter.
//
// On update the super object's immutable allocations (ClusterIPs, healthCheckNodePort) are
// kept. A headless Service (clusterIP "None") stays headless. spec.externalIPs is never
// copied: in a shared cluster it would let one tenant intercept traffic to any address
// (CVE-2020-8554). The drop is reported (rule externalIPs): a PolicyDenied Warning Event and a
// count once per spec (admit.Filtered), and the condition tenancy.vcsyncer.io/Synced=False
// reason PolicyDenied while the Service keeps them.
//
// A super copy whose ClusterIP the super cluster allocates from its shared range (the tenant
// Service's ClusterIPs are not all inside the Tenant's spec.serviceCIDRs: a tenant can add a
// ServiceCIDR of its own to its apiserver) is created only while the tenant holds fewer such
// super Services than services.maxSharedClusterIPs (built-in 100; rule sharedClusterIP). The
// count is the super cache's plus the creations of this process not cached yet, so concurrent
// reconciles never exceed it. A Service over it gets no super copy, a PolicyDenied Event and
// count once per spec, and the condition Synced=False reason PolicyDenied; it is tried again
// when it or the policy changes, and by remediation scans (missing_in_super), so it gets its
// copy once other Services are deleted. Super Services already created are never removed for
// it. A new super copy that asked for the tenant's own ClusterIP, which the super cluster
// refused (taken, or outside its ServiceCIDRs), takes a shared address only under the same cap
// (allocWriter.takeShared); over it the Service is refused the same way.
//
// The tenant's policy (policy.CheckService) decides which Services get a super copy at all:
// by default only ClusterIP Services (headless ones included), without externalTrafficPolicy
// Local, loadBalancerIP or loadBalancerClass. A refused Service has no super copy (one synced
// under an earlier policy is deleted) and is reported once (admit.Deny).
//
// A Service left without a super copy by a refusal (the policy, the shared ClusterIP cap, an
// explicit nodePort taken in the super cluster, the quota) looks refused in the tenant: the
// condition tenancy.vcsyncer.io/Synced=False with the reason of its Warning Event (PolicyDenied,
// NodePortUnavailable, HealthCheckNodePortUnavailable, QuotaExceeded) and the refusal's message,
// replaced when the reason or message changes, and the label tenancy.vcsyncer.io/refused=<reason>
// (conversion.LabelRefused), with which the tenant's CoreDNS (`labels
// !tenancy.vcsyncer.io/refused` in its kubernetes plugin) leaves the Service's name unanswered.
// Once the Service has a super copy, the upward path turns the condition True (reason InSync)
// and removes the label. Its refusals are recorded per spec (resources.refusalVersion), so these
// writes of the syncer's do not report it again.
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/admit, pkg/conversion, pkg/policy, pkg/reconcile, pkg/resources, pkg/tenant); test/layering checks
// it.
package service
