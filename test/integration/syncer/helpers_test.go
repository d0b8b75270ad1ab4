package syncer_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
)

// startSyncer runs the syncer in-process against the super cluster until the test ends. Its
// log goes to a file that is reported when the test fails.
func startSyncer(t *testing.T, super *rest.Config) client.Client {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "syncer.log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(f), zap.UseDevMode(true)))
	o := options.NewOptions()
	o.MetricsBindAddress, o.HealthProbeBindAddress = "0", "0"
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
	// The syncer installs the CRD at start; wait until Tenants can be listed.
	eventually(t, time.Minute, "Tenant CRD served", func(ctx context.Context) error {
		return c.List(ctx, &tenantList{})
	})
	return c
}

// eventually polls check every 200ms until it returns nil or timeout passes, then fails the
// test with the last error.
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

// consistently checks that check keeps returning nil for d.
func consistently(t *testing.T, d time.Duration, what string, check func(ctx context.Context) error) {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if err := check(context.Background()); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
