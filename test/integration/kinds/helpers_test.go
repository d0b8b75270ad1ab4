package kinds_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// The helpers below follow test/integration/syncer/helpers_test.go. This suite is its own
// package (own process) because app.Run registers process-global controller names and
// metrics: it can run only once per test binary.

const kubeconfigNS = "vc-syncer-system"

// startSyncer runs the syncer in-process against the super cluster until the test ends, with
// the default options changed by mutate. Its log goes to a file kept when the test fails.
func startSyncer(t *testing.T, super *rest.Config, mutate func(*options.Options)) client.Client {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "syncer.log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(f), zap.UseDevMode(true)))
	o := options.NewOptions()
	o.MetricsBindAddress, o.HealthProbeBindAddress = "0", "0"
	mutate(o)
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
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

func mustCreateNS(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	if _, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "default ServiceAccount in "+name, func(ctx context.Context) error {
		_, err := c.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

// created fails the test when a create call returned an error: created(t)(client.Create(...)).
func created(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

func tenantUID(t *testing.T, c client.Client, name string) string {
	t.Helper()
	tn := &tenancyv1alpha1.Tenant{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, tn); err != nil {
		t.Fatal(err)
	}
	return string(tn.UID)
}

func waitRunning(t *testing.T, c client.Client, name string) {
	t.Helper()
	eventually(t, 2*time.Minute, "Tenant "+name+" Running", func(ctx context.Context) error {
		tn := &tenancyv1alpha1.Tenant{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, tn); err != nil {
			return err
		}
		if tn.Status.Phase != tenancyv1alpha1.TenantRunning {
			return errorf("phase %q conditions %+v", tn.Status.Phase, tn.Status.Conditions)
		}
		return nil
	})
}

// waitEvent waits until the tenant object ns/name has an Event with reason whose message
// contains contains.
func waitEvent(t *testing.T, c kubernetes.Interface, ns, name, reason, contains string) {
	t.Helper()
	eventually(t, time.Minute, fmt.Sprintf("%s Event on %s/%s", reason, ns, name), func(ctx context.Context) error {
		evs, err := c.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Reason == reason && strings.Contains(e.Message, contains) {
				return nil
			}
		}
		return errorf("none of %d Events has reason %s and %q", len(evs.Items), reason, contains)
	})
}
