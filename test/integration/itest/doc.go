// Package itest holds what the integration suites under test/integration share: running the
// syncer in-process against a framework super cluster, polling helpers and small assertions.
// Each suite is its own package (its own test process) because app.Run registers
// process-global controller names and metrics, so it can run only once per test binary.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package itest
