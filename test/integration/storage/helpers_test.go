package storage_test

import (
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vcsyncer/syncer/test/integration/itest"
)

const kubeconfigNS = "vc-syncer-system"

// startSyncer runs the syncer with its default options (itest.StartSyncer).
func startSyncer(t *testing.T, super *rest.Config) client.Client {
	return itest.StartSyncer(t, super, nil)
}

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
