// Package syncer runs the syncer in-process against real local control planes (a super
// cluster with kwok Nodes and three tenants) and checks registration, both sync directions,
// ownership, repair and clean-up.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package syncer
