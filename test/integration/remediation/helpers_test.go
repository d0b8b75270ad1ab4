package remediation_test

import (
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// startSyncer runs the syncer with remediation scans every interval, until the test ends.
func startSyncer(t *testing.T, super *rest.Config, interval time.Duration) client.Client {
	return itest.StartSyncer(t, super, func(o *options.Options) { o.RemediationInterval = interval })
}

// metricValue returns the sum of the counter (or histogram sample count) named name over the
// series whose labels include want, from the syncer's Prometheus registry.
func metricValue(t *testing.T, name string, want map[string]string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			n := 0
			for _, l := range m.GetLabel() {
				if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
					n++
				}
			}
			if n != len(want) {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}
