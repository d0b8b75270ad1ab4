package remediation_test

import (
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// startSyncer runs the syncer with remediation scans every interval, until the test ends.
func startSyncer(t *testing.T, super *rest.Config, interval time.Duration) client.Client {
	return itest.StartSyncer(t, super, func(o *options.Options) { o.RemediationInterval = interval })
}

// metricValue returns the sum of the counter (or histogram sample count) named name over the
// series whose labels include want, from the in-process syncer's registry (itest.RegistryValue).
func metricValue(t *testing.T, name string, want map[string]string) float64 {
	t.Helper()
	return itest.RegistryValue(t, name, want)
}
