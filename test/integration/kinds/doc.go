// Package kinds runs the syncer in-process against real local control planes (a super
// cluster with a kwok Node and two tenants) and checks the kinds beyond the walking skeleton.
// It is a package of its own (its own test process) because app.Run registers process-global
// controller names and metrics, so it can run only once per test binary.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package kinds
