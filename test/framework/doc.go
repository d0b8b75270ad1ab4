// Package framework holds test helpers around pkg/localcluster, the launcher of real local
// control planes: StartT starts a localcluster.Environment for a test or benchmark, stops it
// in t.Cleanup and keeps the component logs of a failed test. It may import pkg/localcluster
// and client libraries; product code never imports it.
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
package framework
