// Package conformance runs the parity smoke of the Kubernetes conformance tests: a dozen fast
// [Conformance] tests of e2e.test against the local super cluster and against a tenant of
// `vc-syncer dev` (go run ./test/bench conformance --smoke), and fails when one passes on the
// super cluster and fails on the tenant. The full comparison is `make conformance`.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package conformance
