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
// disruption controller with the tenant's Deployments and StatefulSets) and
// unhealthyPodEvictionPolicy AlwaysAllow. A budget that allows no disruption with all its Pods
// healthy is synced allowing one, and reported (rule disruptionBudget), unless the tenant's
// policy sets disruptionBudgets.allowBlocking. The super copy follows the tenant's status
// (every status change is an update event) and the tenant's Pods (DependentMapper on Pods:
// the count of super Pods the selector matches bounds the budget).
//
// The status is not copied up: the tenant's own disruption controller computes it from the
// tenant Pods, whose statuses the syncer keeps current.
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/podcache, pkg/policy, pkg/reconcile, pkg/resources, pkg/tenant);
// test/layering checks it.
package poddisruptionbudget
