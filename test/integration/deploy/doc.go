// Package deploy checks what operators deploy: the Helm chart charts/vc-syncer, the kustomize
// tree config/ and the Dockerfile.
//
// The TestVerify* tests need no control plane (they run helm, `kubectl kustomize`, the npm
// Dockerfile linter and `go build`, all from `make tools`) and are what `make verify` runs:
// they fail when the chart and config/ drift apart, when the chart passes a flag that
// `vc-syncer run` does not have, or when the Dockerfile stops producing a static binary.
// TestDeploy applies the rendered manifests to a real local super cluster (pkg/localcluster).
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package deploy
