package remediation_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// startSyncer runs `vc-syncer run` in-process against the super cluster, with remediation
// scans every interval, until the test ends. Its log is kept when the test fails.
func startSyncer(t *testing.T, super *rest.Config, interval time.Duration) client.Client {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "syncer.log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(f), zap.UseDevMode(true)))
	o := options.NewOptions()
	o.MetricsBindAddress, o.HealthProbeBindAddress = "0", "0"
	o.RemediationInterval = interval
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, o, super) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("syncer exited with error: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("syncer did not stop within 30s")
		}
		f.Close()
		if t.Failed() {
			keep := filepath.Join(os.TempDir(), "vc-syncer-test-logs", t.Name()+"-syncer.log")
			_ = os.MkdirAll(filepath.Dir(keep), 0o755)
			if data, err := os.ReadFile(logPath); err == nil && os.WriteFile(keep, data, 0o644) == nil {
				t.Logf("syncer log kept at %s", keep)
			}
		}
	})
	c, err := client.New(super, client.Options{Scheme: app.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "Tenant CRD served", func(ctx context.Context) error {
		return c.List(ctx, &tenancyv1alpha1.TenantList{})
	})
	return c
}

// eventually polls check every 200ms until it returns nil or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, check func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		last = check(ctx)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: not true after %s: %v", what, timeout, last)
	}
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
