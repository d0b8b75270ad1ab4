// Package remediation runs the syncer in-process, with remediation scans every second,
// against real local control planes (a super cluster with a kwok Node and one tenant, plus a
// registered tenant whose apiserver cannot be reached), and checks that the scan repairs what
// the event path misses, counts it, reports nothing in a steady state, and never touches the
// objects of a tenant whose caches have not synced.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package remediation
