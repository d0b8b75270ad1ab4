package vnode_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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

// startSyncer runs the syncer in-process against the super cluster until the test ends, with
// o's defaults changed by tweak. Its log goes to a file that is kept when the test fails.
func startSyncer(t *testing.T, super *rest.Config, tweak func(o *options.Options)) client.Client {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "syncer.log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(f), zap.UseDevMode(true)))
	o := options.NewOptions()
	o.MetricsBindAddress, o.HealthProbeBindAddress = "0", "0"
	tweak(o)
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

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func waitTenantRunning(t *testing.T, c client.Client, name string) {
	t.Helper()
	eventually(t, 2*time.Minute, "Tenant "+name+" Running", func(ctx context.Context) error {
		tn := &tenancyv1alpha1.Tenant{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, tn); err != nil {
			return err
		}
		if tn.Status.Phase != tenancyv1alpha1.TenantRunning {
			return errorf("phase %q", tn.Status.Phase)
		}
		return nil
	})
}

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

// pinnedPod returns a tenant Pod that the super scheduler can only place on super Node node
// (nodeSelector kubernetes.io/hostname, which the fake Nodes carry with their name).
func pinnedPod(name, node string) *corev1.Pod {
	zero := int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{corev1.LabelHostname: node},
			TerminationGracePeriodSeconds: &zero,
			Containers:                    []corev1.Container{{Name: "c", Image: "busybox"}},
		},
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func nodeCondition(n *corev1.Node, typ corev1.NodeConditionType) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
