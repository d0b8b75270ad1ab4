package storage_test

import (
	"testing"

	"github.com/vcsyncer/syncer/test/integration/itest"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

type tenantList = tenancyv1alpha1.TenantList

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
