package itest

import (
	"context"
	"errors"
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
	"github.com/vcsyncer/syncer/pkg/localcluster"
)

// KubeconfigNS is the namespace the syncer reads Tenant kubeconfig Secrets from by default.
const KubeconfigNS = "vc-syncer-system"

// StartSyncer runs the syncer in-process against the super cluster until the test ends, with
// the default options changed by mutate (nil: defaults; metrics and health ports are off). Its log goes to a file kept when the test fails.
func StartSyncer(t *testing.T, super *rest.Config, mutate func(*options.Options)) client.Client {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "syncer.log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(f), zap.UseDevMode(true)))
	o := options.NewOptions()
	o.MetricsBindAddress, o.HealthProbeBindAddress = "0", "0"
	o.LeaderElect = false // one syncer per test: no Lease to acquire
	o.RunsAgainInProcess = true
	// The local super cluster's kwok serves the Nodes' resource metrics under its own path.
	o.KubeletSuperMetricsPath = localcluster.KwokMetricsPath
	if mutate != nil {
		mutate(o)
	}
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
	Eventually(t, time.Minute, "Tenant CRD served", func(ctx context.Context) error {
		return c.List(ctx, &tenancyv1alpha1.TenantList{})
	})
	return c
}

// Eventually polls check every 200ms until it returns nil or timeout passes, then fails the
// test with the last error.
func Eventually(t *testing.T, timeout time.Duration, what string, check func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		err := check(ctx)
		if err != nil && last != nil && (ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) ||
			strings.Contains(err.Error(), "would exceed context deadline")) {
			return false, nil // cut off by the deadline: keep the last real answer
		}
		last = err
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: not true after %s: %v", what, timeout, last)
	}
}

// Consistently checks that check keeps returning nil for d.
func Consistently(t *testing.T, d time.Duration, what string, check func(ctx context.Context) error) {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if err := check(context.Background()); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Errorf is fmt.Errorf, short for poll checks.
func Errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// MustCreateNS creates namespace name and waits for its default ServiceAccount.
func MustCreateNS(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	if _, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "default ServiceAccount in "+name, func(ctx context.Context) error {
		_, err := c.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

// Created fails the test when a create call returned an error: Created(t)(client.Create(...)).
func Created(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TenantUID returns the UID of Tenant name, waiting up to 30 s for it to exist.
func TenantUID(t *testing.T, c client.Client, name string) string {
	t.Helper()
	var tn tenancyv1alpha1.Tenant
	Eventually(t, 30*time.Second, "Tenant "+name, func(ctx context.Context) error {
		return c.Get(ctx, client.ObjectKey{Name: name}, &tn)
	})
	return string(tn.UID)
}

// PodReady reports whether Pod p has condition Ready True.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// WaitRunning waits until Tenant name is in phase Running.
func WaitRunning(t *testing.T, c client.Client, name string) {
	t.Helper()
	Eventually(t, 2*time.Minute, "Tenant "+name+" Running", func(ctx context.Context) error {
		tn := &tenancyv1alpha1.Tenant{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, tn); err != nil {
			return err
		}
		if tn.Status.Phase != tenancyv1alpha1.TenantRunning {
			return Errorf("phase %q conditions %+v", tn.Status.Phase, tn.Status.Conditions)
		}
		return nil
	})
}

// WaitEvent waits until the tenant object ns/name has an Event with reason whose message
// contains contains.
func WaitEvent(t *testing.T, c kubernetes.Interface, ns, name, reason, contains string) {
	t.Helper()
	Eventually(t, time.Minute, fmt.Sprintf("%s Event on %s/%s", reason, ns, name), func(ctx context.Context) error {
		evs, err := c.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Reason == reason && strings.Contains(e.Message, contains) {
				return nil
			}
		}
		return Errorf("none of %d Events has reason %s and %q", len(evs.Items), reason, contains)
	})
}

// DefaultPolicy creates the TenantPolicy named "default" with spec (inherited by every Tenant
// without spec.policyName), for tests of behaviour the built-in policy refuses (NodePort and
// LoadBalancer Services, Ingresses, Endpoints outside the tenant's Pods).
func DefaultPolicy(t *testing.T, c client.Client, spec tenancyv1alpha1.TenantPolicySpec) {
	t.Helper()
	p := &tenancyv1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: spec}
	Eventually(t, time.Minute, "TenantPolicy default created", func(ctx context.Context) error {
		return c.Create(ctx, p.DeepCopy())
	})
}

// RegisterTenants installs the Tenant CRD in env's super cluster and registers every tenant
// of env there (AddTenant, weight 1), as a provider does for a syncer running as a process,
// and returns a client of the super cluster. It fails the test on an error.
func RegisterTenants(t *testing.T, env *localcluster.Environment) client.Client {
	t.Helper()
	ctx := t.Context()
	if err := app.InstallCRD(ctx, env.Super.RESTConfig); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Super.RESTConfig, client.Options{Scheme: app.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range env.Tenants {
		if err := AddTenant(ctx, c, KubeconfigNS, tc, 1); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// AddTenant registers tenant control plane tc in the super cluster (app.AddTenantWithOptions)
// with the given weight, the CA of its apiserver's kubelet client certificate (Tenant
// spec.kubeletClientCA) and, when tc has one, its Service range (Tenant spec.serviceCIDRs), so
// its Services keep their addresses in the super cluster, as a provider registers a tenant.
func AddTenant(ctx context.Context, c client.Client, namespace string, tc *localcluster.ControlPlane, weight int32) error {
	o := app.TenantOptions{Weight: weight, KubeletClientCA: tc.KubeletClientCA}
	if tc.ServiceCIDR != "" {
		o.ServiceCIDRs = []string{tc.ServiceCIDR}
	}
	return app.AddTenantWithOptions(ctx, c, namespace, tc.Name, tc.Kubeconfig, o)
}
