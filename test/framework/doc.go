// Package framework holds test helpers around pkg/localcluster, the launcher of real local
// control planes: StartT starts a localcluster.Environment for a test or benchmark, stops it
// in t.Cleanup and keeps the component logs of a failed test.
//
// # Usage
//
//	func TestSync(t *testing.T) {
//		env := framework.StartT(t, localcluster.SuperOptions{Nodes: 2}, 2)
//		tenant := env.Tenants[0].Client // kubernetes.Interface, admin
//		...
//	}
//
// When the test fails, the component logs are copied to $VCSYNCER_TEST_ARTIFACTS/<test> (default
// $TMPDIR/vc-syncer-test-logs/<test>). Without tools StartT fails with a message telling to run
// `make tools`; set VCSYNCER_SKIP_IF_NO_TOOLS=1 to skip instead.
//
// It sits on floor 9 of the package map in docs/architecture.md (tests, benchmarks and tools)
// and may import any floor (today: pkg/localcluster); nothing below floor 9 imports it, which
// test/layering checks.
package framework
