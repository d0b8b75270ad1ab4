// Package poddisruptionbudget syncs PodDisruptionBudgets (policy/v1) downward (tenant → super).
// It is opt-in: syncer.Options.OptInKinds, flag --opt-in-kinds=PodDisruptionBudget.
//
// # Translation
//
// The selector is copied unchanged: it is namespace-local and the super Pods keep the tenant
// Pods' labels (those the metadata allowlist passes) in the mapped namespace, so the super copy
// guards the same Pods against evictions in the super cluster (node drains).
//
// The budget is translated (policy.SuperBudget): super Pods have no owner references, so the
// super disruption controller cannot count the expected Pods of a maxUnavailable or
// percentage budget and would allow no eviction at all. The super copy has an integer
// minAvailable equal to the tenant's status.desiredHealthy (computed by the tenant's own
// disruption controller with the tenant's Deployments and StatefulSets), never relaxed: a
// budget short of Pods or allowing no disruption holds super drains as it holds the
// tenant's. Its unhealthyPodEvictionPolicy is the tenant's, AlwaysAllow when the tenant set
// none. The super copy follows the tenant's status (every status change is an update event)
// and the tenant's Pods (DependentMapper on Pods: the count of super Pods the selector
// matches is the expected count until the tenant's status is current).
//
// A second budget over Pods an older budget of the namespace selects (policy.SecondBudget:
// the eviction API refuses to evict a Pod under two budgets, so it would hold drains for good)
// gets no super copy and is reported (rule disruptionBudget, once per generation); it is
// synced once the older budget is gone (DependentMapper on budgets).
//
// The status is not copied up: the tenant's own disruption controller computes it from the
// tenant Pods, whose statuses the syncer keeps current.
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/admit, pkg/podcache, pkg/policy, pkg/reconcile, pkg/resources, pkg/tenant);
// test/layering checks it.
package poddisruptionbudget
