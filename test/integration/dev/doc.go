// Package dev checks how `vc-syncer dev` stops: on a signal to the pid a user holds, and when
// whatever started it dies, every control plane it started stops with it.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package dev
