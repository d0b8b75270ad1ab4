// Package storage runs the syncer in-process against real local control planes (a super
// cluster whose StorageClasses are served by the framework's provisioner, and two tenants)
// and checks claims down, binding, status and PersistentVolumes up, public StorageClasses and
// isolation between tenants.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package storage
