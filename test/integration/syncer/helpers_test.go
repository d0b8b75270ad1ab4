package syncer_test

import (
	"regexp"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vcsyncer/syncer/test/integration/itest"
)

// unreachableKubeconfig returns kubeconfig with its server moved to 127.0.0.1:1, a valid
// address where nothing listens.
func unreachableKubeconfig(kubeconfig []byte) string {
	return regexp.MustCompile(`server: https://127\.0\.0\.1:[0-9]+`).ReplaceAllString(string(kubeconfig), "server: https://127.0.0.1:1")
}

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
