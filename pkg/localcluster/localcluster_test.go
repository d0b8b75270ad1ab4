package localcluster

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/vcsyncer/syncer/pkg/tenant"
)

// eventually polls check every 100 ms until it returns nil or timeout elapses, then fails the
// test with check's last error.
func eventually(t *testing.T, timeout time.Duration, what string, check func(ctx context.Context) error) {
	t.Helper()
	if err := poll(t.Context(), timeout, check); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// startEnv starts an Environment for a test of this package under t.TempDir() and stops it
// in t.Cleanup (framework.StartT, which also keeps the logs of a failed test, imports this
// package). Without tools it skips or fails as requireTools does.
func startEnv(t *testing.T, o SuperOptions, tenants int) *Environment {
	t.Helper()
	o.ToolsDir, o.Dir = requireTools(t), t.TempDir()
	o.Progress = func(s string) { t.Logf("%s", s) }
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	env, err := Start(ctx, o, tenants)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return env
}

func TestEnvironment(t *testing.T) {
	env := startEnv(t, SuperOptions{Nodes: 2}, 2)
	ctx := t.Context()

	for _, cp := range env.ControlPlanes() {
		var parts []string
		for name, d := range cp.ComponentStartupDurations() {
			parts = append(parts, fmt.Sprintf("%s=%s", name, d.Round(10*time.Millisecond)))
		}
		t.Logf("start-up of %s: %s (%s)", cp.Name, cp.StartupDuration().Round(10*time.Millisecond), strings.Join(parts, " "))
		if cp.StartupDuration() <= 0 {
			t.Errorf("%s: StartupDuration() = %s, want > 0", cp.Name, cp.StartupDuration())
		}
		checkKubeconfig(t, cp)
	}
	if got := len(env.Tenants); got != 2 {
		t.Fatalf("got %d tenants, want 2", got)
	}

	t.Run("super Pod becomes Running on a fake Node", func(t *testing.T) {
		super := env.Super.Client
		nodes, err := super.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) != 2 {
			t.Fatalf("got %d Nodes, want 2", len(nodes.Items))
		}
		ips := map[string]bool{}
		for _, n := range nodes.Items {
			for _, a := range n.Status.Addresses {
				if a.Type == corev1.NodeInternalIP {
					ips[a.Address] = true
				}
			}
		}
		if len(ips) != 2 {
			t.Errorf("fake Nodes have InternalIPs %v, want 2 distinct ones", ips)
		}
		ns := createNamespace(t, super, "smoke")
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: ns},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](0),
				Containers:                    []corev1.Container{{Name: "c", Image: "registry.invalid/fake:1"}},
			},
		}
		if _, err := super.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "Pod did not become Running", func(ctx context.Context) error {
			p, err := super.CoreV1().Pods(ns).Get(ctx, "p1", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || p.Spec.NodeName == "" {
				return fmt.Errorf("phase %q podIP %q nodeName %q", p.Status.Phase, p.Status.PodIP, p.Spec.NodeName)
			}
			t.Logf("Pod %s/%s Running on %s with IP %s (hostIP %s)", ns, p.Name, p.Spec.NodeName, p.Status.PodIP, p.Status.HostIP)
			return nil
		})
	})

	t.Run("tenant controllers create Pods that stay Pending", func(t *testing.T) {
		tenant := env.Tenants[0].Client
		ns := createNamespace(t, tenant, "apps")
		labels := map[string]string{"app": "web"}
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](2),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/fake:1"}}},
				},
			},
		}
		if _, err := tenant.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "tenant ReplicaSet controller did not create 2 Pods", func(ctx context.Context) error {
			pods, err := tenant.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil {
				return err
			}
			if len(pods.Items) != 2 {
				return fmt.Errorf("%d Pods", len(pods.Items))
			}
			return nil
		})
		// A tenant control plane runs no scheduler, so nobody binds them.
		if pid, ok := env.Tenants[0].PIDs()[KubeScheduler]; ok {
			t.Errorf("tenant control plane runs a kube-scheduler (pid %d)", pid)
		}
		pods, err := tenant.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" {
				t.Errorf("tenant Pod %s: phase %q nodeName %q, want Pending and unbound", p.Name, p.Status.Phase, p.Spec.NodeName)
			}
		}
	})

	t.Run("second tenant is independent", func(t *testing.T) {
		tenant := env.Tenants[1].Client
		if _, err := tenant.CoreV1().Namespaces().Get(ctx, "apps", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("namespace apps in tenant-2: err = %v, want NotFound", err)
		}
		createNamespace(t, tenant, "other")
		nodes, err := tenant.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) != 0 {
			t.Errorf("tenant has %d Nodes, want 0", len(nodes.Items))
		}
	})

	t.Run("tenant CoreDNS answers the tenant's Service names", func(t *testing.T) {
		tc := env.Tenants[1]
		kubeDNS, err := tc.Client.CoreV1().Services(ClusterDNSNamespace).Get(ctx, ClusterDNSService, metav1.GetOptions{})
		if err != nil || kubeDNS.Spec.Selector["k8s-app"] != ClusterDNSAppLabel || kubeDNS.Spec.ClusterIP == "" {
			t.Fatalf("tenant kube-system/kube-dns: %v %+v", err, kubeDNS)
		}
		dnsServer, err := tc.StartCoreDNS(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("tenant DNS at %s; try: %s", dnsServer.Addr, dnsServer.DigCommand("kube-dns.kube-system.svc.cluster.local"))
		r, err := NewPodResolver(&corev1.PodDNSConfig{Nameservers: []string{kubeDNS.Spec.ClusterIP},
			Searches: []string{"other.svc.cluster.local", "svc.cluster.local", "cluster.local"},
			Options:  []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("5")}}},
			map[string]string{kubeDNS.Spec.ClusterIP: dnsServer.Addr})
		if err != nil {
			t.Fatal(err)
		}
		svc, err := tc.Client.CoreV1().Services("other").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"web": svc.Spec.ClusterIP, "kube-dns.kube-system": kubeDNS.Spec.ClusterIP} {
			eventually(t, 30*time.Second, "tenant DNS answers "+name, func(ctx context.Context) error {
				_, ips, err := r.LookupA(ctx, name)
				if err != nil || len(ips) != 1 || ips[0] != want {
					return fmt.Errorf("%s: %v %w, want %s", name, ips, err, want)
				}
				return nil
			})
		}
		if _, _, err := r.LookupA(ctx, "web.apps"); !errors.Is(err, ErrNameNotFound) {
			t.Errorf("web.apps (no such Service) resolved: %v", err)
		}
	})

	// Stop and check every component process is gone.
	pids := map[string]int{}
	for _, cp := range env.ControlPlanes() {
		for comp, pid := range cp.PIDs() {
			pids[cp.Name+"/"+comp] = pid
			if rss := rssMiB(pid); rss > 0 {
				t.Logf("RSS %s/%s: %d MiB", cp.Name, comp, rss)
			}
		}
	}
	if want := 5 + 3*2 + 1; len(pids) != want { // + tenant-2's CoreDNS
		t.Errorf("got %d component processes %v, want %d", len(pids), pids, want)
	}
	t0 := time.Now()
	if err := env.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("Stop took %s", time.Since(t0).Round(10*time.Millisecond))
	for name, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still exists after Stop: kill(0) = %v", name, pid, err)
		}
	}
	if err := env.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// createNamespace creates a namespace and waits for its default ServiceAccount.
func createNamespace(t *testing.T, c kubernetes.Interface, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "default ServiceAccount of namespace "+name+" did not appear", func(ctx context.Context) error {
		_, err := c.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	return name
}

// checkKubeconfig verifies that the kubeconfig file is self-contained and works.
func checkKubeconfig(t *testing.T, cp *ControlPlane) {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(cp.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range cfg.Clusters {
		if c.CertificateAuthority != "" || len(c.CertificateAuthorityData) == 0 {
			t.Errorf("%s: cluster %s does not embed its CA", cp.Name, name)
		}
	}
	for name, a := range cfg.AuthInfos {
		if a.ClientCertificate != "" || len(a.ClientCertificateData) == 0 || len(a.ClientKeyData) == 0 {
			t.Errorf("%s: user %s does not embed its certificate and key", cp.Name, name)
		}
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig(cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	v, err := kubernetes.NewForConfigOrDie(rc).Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("%s: server version: %v", cp.Name, err)
	}
	if v.GitVersion != "v1.37.2" {
		t.Errorf("%s: server version %s, want v1.37.2", cp.Name, v.GitVersion)
	}
}

// rssMiB returns the resident set size of pid in MiB, or 0 if unknown.
func rssMiB(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int
			_, _ = fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb / 1024
		}
	}
	return 0
}

// TestGeneratePKI checks the certificates without starting anything.
func TestGeneratePKI(t *testing.T) {
	dir := t.TempDir()
	serviceIP := net.ParseIP("10.96.0.1")
	p, err := generatePKI(dir, serviceIP)
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) *x509.Certificate {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(data)
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return cert
	}
	ca := read(caCertFile)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	serving := read(servingCertFile)
	for _, host := range []string{"127.0.0.1", "10.96.0.1", "localhost", "kubernetes", "kubernetes.default",
		"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"} {
		if _, err := serving.Verify(x509.VerifyOptions{DNSName: host, Roots: pool}); err != nil {
			t.Errorf("serving certificate does not verify for %s: %v", host, err)
		}
	}
	admin := read(adminCertFile)
	if _, err := admin.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin certificate: %v", err)
	}
	if got := admin.Subject.Organization; len(got) != 1 || got[0] != "system:masters" {
		t.Errorf("admin organization = %v, want [system:masters]", got)
	}
	if _, err := p.adminTLSConfig(); err != nil {
		t.Error(err)
	}
	kc, err := p.adminKubeconfig("x", "https://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := clientcmd.RESTConfigFromKubeConfig(kc); err != nil {
		t.Error(err)
	}
	// The syncer accepts tenant kubeconfigs with inline credentials only; the suites register
	// these ones as tenants.
	if _, err := tenant.ParseKubeconfig(kc); err != nil {
		t.Errorf("the syncer refuses the admin kubeconfig: %v", err)
	}
	for _, f := range []string{caKeyFile, servingKeyFile, adminKeyFile, saKeyFile, saPubFile} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing: %v", f, err)
		}
	}
}

func TestToolsDir(t *testing.T) {
	t.Setenv("VCSYNCER_TOOLS_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "/x")
	if got, want := ToolsDir(), "/x/vc-syncer/"+toolsVersion; got != want {
		t.Errorf("ToolsDir() = %s, want %s", got, want)
	}
	t.Setenv("VCSYNCER_TOOLS_DIR", "/y")
	if got := ToolsDir(); got != "/y" {
		t.Errorf("ToolsDir() = %s, want /y", got)
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(root, "hack", "build-tools.sh"))
	if err != nil {
		t.Fatalf("repoRoot() = %s has no hack/build-tools.sh: %v", root, err)
	}
	// toolsVersion must name the same versions as the script's cache folder.
	var k8s, etcd, kwok string
	if _, err := fmt.Sscanf(strings.NewReplacer("-", " ").Replace(toolsVersion), "k8s %s etcd %s kwok %s", &k8s, &etcd, &kwok); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("K8S=%s ETCD=%s KWOK=%s", k8s, etcd, kwok); !strings.Contains(string(script), want) {
		t.Errorf("hack/build-tools.sh does not pin %q; update toolsVersion", want)
	}
}
