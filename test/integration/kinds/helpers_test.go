package kinds_test

import (
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// The helpers below follow test/integration/syncer/helpers_test.go. This suite is its own
// package (own process) because app.Run registers process-global controller names and
// metrics: it can run only once per test binary.

const kubeconfigNS = itest.KubeconfigNS

var startSyncer = itest.StartSyncer

// Shared helpers (test/integration/itest).
var (
	eventually   = itest.Eventually
	consistently = itest.Consistently
	errorf       = itest.Errorf
	mustCreateNS = itest.MustCreateNS
	created      = itest.Created
	tenantUID    = itest.TenantUID
	waitRunning  = itest.WaitRunning
	waitEvent    = itest.WaitEvent
)
