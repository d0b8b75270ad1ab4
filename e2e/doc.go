// Package e2e holds whole-system suites: the vc-syncer binary, built from this repository,
// run as a child process against real local control planes (pkg/localcluster), driven the way a
// user drives it (vc-syncer tenant add, kubectl apply into the tenants).
//
// # Usage
//
//	go test ./e2e/ -run TestRealWorld -v -count=1 -timeout 20m
//
// The suites need the control-plane tools (`make tools`) and are skipped by `go test -short`.
// TestRealWorld also needs the shared real-world manifest corpus beside the clone
// (../shared/realworld, described by its SOURCES.md); it skips with the reason when the corpus
// is absent. The project never copies the corpus.
//
// # Implementation details
//
// Everything lives in _test.go files: the syncer is started with `vc-syncer run` (logs in a
// file that is kept when the test fails), tenants are registered with `vc-syncer tenant add`,
// and manifests are applied with the kubectl built by hack/build-tools.sh. Assertions are
// bounded polls that report every mismatch they still see when they give up.
//
// # Implementation considerations
//
// What the syncer cannot do yet, and what the fake kubelet (kwok) cannot show, is written down
// next to the test as named known gaps with their reason, and logged on every run; a gap that
// starts working is logged too, so that the table is kept honest.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package e2e
