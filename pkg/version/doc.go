// Package version holds build information set through -ldflags
// "-X github.com/vcsyncer/syncer/pkg/version.Version=v0.1.0 -X ....GitCommit=abc".
//
// It sits on floor 0 of the package map in docs/architecture.md and may import packages on floors
// 0–0 only (today: none of the module's packages); test/layering checks it.
package version
