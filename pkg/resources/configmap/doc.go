// Package configmap syncs ConfigMaps downward (tenant → super). A ConfigMap larger, as a whole
// (keys, values and metadata: policy.ObjectBytes), than the tenant policy's
// limits.maxObjectBytes is refused (rule objectSize), and one the tenant caches hold as a stub
// (tenant.HeldBytes: beyond limits.maxCachedBytes) is refused with rule cachedBytes: neither
// has a super copy.
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/policy, pkg/reconcile, pkg/resources, pkg/tenant); test/layering checks
// it.
package configmap
