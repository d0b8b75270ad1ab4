// Package options holds the flags of `vc-syncer run`.
//
// It sits on floor 8 of the package map in docs/architecture.md and may import packages on floors
// 0–8 only (today: pkg/kubeletproxy, pkg/resources, pkg/resources/kinds, pkg/sharding);
// test/layering checks it.
package options
