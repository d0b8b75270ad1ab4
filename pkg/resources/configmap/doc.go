// Package configmap syncs ConfigMaps downward (tenant → super). A ConfigMap whose data and
// binaryData are larger than the tenant policy's limits.maxObjectBytes is refused (rule
// objectSize): it has no super copy.
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/policy, pkg/reconcile, pkg/resources, pkg/tenant); test/layering checks
// it.
package configmap
