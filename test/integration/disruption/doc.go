// Package disruption checks, on real control planes (pkg/localcluster: a super cluster with
// a kwok Node and one tenant; the syncer in-process with the opt-in PodDisruptionBudget kind),
// what a super-cluster drain does to a tenant's Pods: a tenant PodDisruptionBudget protects
// its Pods from evictions through the super cluster's eviction API exactly as it would in the
// tenant (a budget is never relaxed because it is short of Pods or allows nothing), and a
// super Pod evicted through that API shows in the tenant as a real cluster's eviction
// (DisruptionTarget with reason EvictionByEvictionAPI, the Pod deleted and replaced by its
// controller), while a super Pod deleted outside every disruption path stays a loss
// (SuperPodLost).
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package disruption
