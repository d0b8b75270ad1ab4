// Command vc-syncer is the centralized multi-tenant VirtualCluster syncer.
//
// It sits on floor 8 of the package map in docs/architecture.md and may import packages on floors
// 0–8 only (today: cmd/vc-syncer/app); test/layering checks it.
package main
