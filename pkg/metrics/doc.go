// Package metrics holds the syncer's Prometheus collectors (namespace vcsyncer), registered in
// controller-runtime's registry so they are served on --metrics-bind-address/metrics.
//
// # Usage
//
// Callers use the typed helpers (QueueAdd, QueueRetry, QueueWait) and register a QueueStats
// source once with RegisterQueueStats. ForgetTenant deletes a removed tenant's series.
//
// # Implementation details
//
// Labels are bounded: tenant (one per registered Tenant), direction (downward|upward), kind (a
// synced kind), result (success|error), phase (the five Pod-creation phases), type (an Event's
// type, Normal|Warning), reason (fixed sets), and vcsyncer_build_info's version, revision and goversion (one series per process).
// ForgetTenant removes a tenant's series when the Tenant is removed; scrape-time gauges
// (queue depth, tenant health, vNodes) list only registered tenants.
// Depth and the age of the oldest waiting item are computed at scrape time from the fair queues
// (a custom collector), so a tenant whose queue is empty reports 0 rather than a stale value.
//
// It sits on floor 1 of the package map in docs/architecture.md and may import packages on floors
// 0–1 only (today: pkg/version); test/layering checks it.
package metrics
