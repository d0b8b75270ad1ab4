// Package isolation is the attack suite of tenant isolation: on real control planes (a super
// cluster with three kwok Nodes and two tenants, A and B, registered with the syncer's built-in
// default policy), tenant A — cluster-admin of its own control plane and hostile — tries each
// known way out of its walls, one subtest per attack class. Each subtest asserts that
//
//  1. tenant B's objects and data are untouched (a snapshot of B's namespace: a Pod, a Secret,
//     a ConfigMap, a Service, a claim bound to a PersistentVolume labelled for B, ...);
//  2. no super object outside A's super namespaces changed (B's super namespaces,
//     kube-system, default, PersistentVolumes not bound to A, Nodes and classes);
//  3. A got the refusal signal: a PolicyDenied Warning Event on its object and a rise of
//     vcsyncer_policy_denials_total{tenant=A,kind,rule} (read from the in-process registry);
//     for a refused Pod also PodScheduled=False with reason PolicyDenied — or the kind's own
//     signal where a subtest says so (KubeconfigValid=False for a Tenant);
//  4. no hot loop: after the signal the counter and the Event count stay put.
//
// The syncer runs in-process (itest.StartSyncer) with the opt-in kinds Ingress, NetworkPolicy
// and PodDisruptionBudget. One environment serves every subtest; subtests run one after the
// other (the denial counter is shared).
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package isolation
