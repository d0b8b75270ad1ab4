// Package serviceaccount syncs ServiceAccounts downward (tenant → super).
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/reconcile, pkg/resources, pkg/tenant); test/layering checks it.
package serviceaccount
