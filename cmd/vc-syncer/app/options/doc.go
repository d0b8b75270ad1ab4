// Package options holds the flags of `vc-syncer run`.
//
// It sits on floor 8 of the package map in docs/architecture.md and may import packages on floors
// 0–8 only (today: pkg/resources, pkg/sharding, pkg/syncer); test/layering checks it.
package options
