// Package checkpointstore runs the Secret checkpoint store (pkg/checkpoint/store) against
// a real super-cluster apiserver (no tenants, no syncer): chunking under the 1 MiB object
// limit, the manifest's resourceVersion precondition as commit point and fence, deletion of
// superseded chunks, and a failed or lost manifest update.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package checkpointstore
