// Package layering checks the package map of docs/architecture.md: every package of the module
// is on a floor, and no package imports one on a higher floor.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package layering
