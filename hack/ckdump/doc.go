// Command ckdump prints a summary of a vc-syncer file checkpoint (--checkpoint-store
// file:PATH): when it was taken, by whom, its queue items, and per source its position, cached
// objects and ack entries. Usage: go run ./hack/ckdump PATH
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package main
