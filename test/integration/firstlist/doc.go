// Package firstlist runs the syncer in-process against real local control planes (a super
// cluster and one tenant that holds about 100 MB of ConfigMaps before the syncer first watches
// it) and checks that the tenant's first list is streamed through the informers' transform,
// so the syncer's live heap stays within the tenant's memory bound while it lists. It is a
// package of its own (its own test process): app.Run registers process-global controller
// names and metrics, and the heap it measures must be this syncer's alone.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package firstlist
