// Package app wires the vc-syncer command line: run, tenant, dev and version.
//
// It sits on floor 8 of the package map in docs/architecture.md and may import packages on floors
// 0–8 only (today: cmd/vc-syncer/app/options, config, pkg/apis/tenancy/v1alpha1, pkg/checkpoint,
// pkg/checkpoint/store, pkg/fairqueue, pkg/localcluster, pkg/remediation, pkg/sharding,
// pkg/status, pkg/syncer, pkg/tenant, pkg/version, pkg/vnode); test/layering checks it.
package app
