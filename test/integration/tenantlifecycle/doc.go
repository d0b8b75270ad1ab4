// Package tenantlifecycle tests, on real control planes, what operators see of a Tenant's
// lifecycle: the lag column of `kubectl get tenants` and its write rate, the phase of a Tenant
// refused as a duplicate control plane, and a Tenant removed and registered again within a
// second.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package tenantlifecycle
