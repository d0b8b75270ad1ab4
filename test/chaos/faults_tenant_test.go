package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

func runningTenant() *tenancyv1alpha1.Tenant {
	return &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "tenant-1"},
		Spec:   tenancyv1alpha1.TenantSpec{KubeconfigSecretRef: tenancyv1alpha1.SecretKeyRef{Namespace: KubeconfigNamespace, Name: "tenant-1-kubeconfig"}},
		Status: tenancyv1alpha1.TenantStatus{Phase: tenancyv1alpha1.TenantRunning}}
}

func setPhase(t *testing.T, cl client.Client, phase tenancyv1alpha1.TenantPhase) {
	t.Helper()
	tn := &tenancyv1alpha1.Tenant{}
	if err := cl.Get(context.Background(), client.ObjectKey{Name: "tenant-1"}, tn); err != nil {
		t.Error(err)
		return
	}
	tn.Status.Phase = phase
	if err := cl.Update(context.Background(), tn); err != nil {
		t.Error(err)
	}
}

func TestTenantDownLongStopsHoldsAndStarts(t *testing.T) {
	for _, reports := range []bool{true, false} {
		t.Run(fmt.Sprintf("syncer-reports-unreachable=%t", reports), func(t *testing.T) {
			cl := crfake.NewClientBuilder().WithScheme(app.Scheme()).WithObjects(runningTenant()).Build()
			var mu sync.Mutex
			var events []string
			var stopped time.Time
			var violations []Violation
			tg := &Target{TenantUIDs: []string{"a", tenantUID}, TenantNames: []string{"tenant-0", "tenant-1"}, Tenancy: cl}
			tg.StopTenantAPIServer = func(i int) error {
				mu.Lock()
				defer mu.Unlock()
				events, stopped = append(events, fmt.Sprintf("stop %d", i)), time.Now()
				if reports { // what the syncer does when the probe fails
					setPhase(t, cl, tenancyv1alpha1.TenantUnreachable)
				}
				return nil
			}
			tg.StartTenantAPIServer = func(_ context.Context, i int) error {
				mu.Lock()
				defer mu.Unlock()
				events = append(events, fmt.Sprintf("start %d after %s", i, time.Since(stopped).Round(time.Second)))
				if time.Since(stopped) < 600*time.Millisecond {
					t.Errorf("started again %s after the stop, before the 600ms hold", time.Since(stopped))
				}
				setPhase(t, cl, tenancyv1alpha1.TenantRunning)
				return nil
			}
			tg.Violate = func(v Violation) { violations = append(violations, v) }
			tg.UnreachableBound = 300 * time.Millisecond
			detail, err := Injectors[TenantDownLong](t.Context(), tg, Fault{Seq: 3, Kind: TenantDownLong, Target: 3, HoldMillis: 600})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(events, ", "); got != "stop 1, start 1 after 1s" {
				t.Errorf("events %q, want tenant 1 (target 3 of 2) stopped, then started after the hold", got)
			}
			if reports {
				if len(violations) != 0 || !strings.Contains(detail, "Tenant Unreachable after") || !strings.Contains(detail, "Running again after") {
					t.Errorf("violations %v, detail %q; want none, and Unreachable then Running seen", violations, detail)
				}
				return
			}
			if len(violations) != 1 || violations[0].Invariant != InvUnreachableReported || violations[0].Key != "tenant/tenant-1" {
				t.Errorf("violations %+v, want one %s for tenant/tenant-1 (never read Unreachable); detail %q", violations, InvUnreachableReported, detail)
			}
		})
	}
	if _, err := Injectors[TenantDownLong](t.Context(), &Target{TenantUIDs: []string{"a"}}, Fault{Kind: TenantDownLong}); err == nil {
		t.Fatal("a long down without a launcher did not fail")
	}
}

// testKubeconfig is an admin kubeconfig of a tenant at server, as localcluster writes it.
func testKubeconfig(t *testing.T, server string) []byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["tenant-1"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: []byte("CA")}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: []byte("CERT"), ClientKeyData: []byte("KEY")}
	cfg.Contexts["tenant-1"] = &clientcmdapi.Context{Cluster: "tenant-1", AuthInfo: "admin"}
	cfg.CurrentContext = "tenant-1"
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestKubeconfigRotateRotatesAndRevokes(t *testing.T) {
	cl := crfake.NewClientBuilder().WithScheme(app.Scheme()).WithObjects(runningTenant()).Build()
	super := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: KubeconfigNamespace, Name: "tenant-1-kubeconfig"},
		Data: map[string][]byte{"kubeconfig": testKubeconfig(t, "https://127.0.0.1:4443")}})
	tenant := fake.NewClientset()
	// The fake clientset issues no tokens: this one names the ServiceAccount it is for.
	tenant.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		return true, &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{Token: "token-of-" + a.(k8stesting.CreateActionImpl).Name}}, nil
	})
	tg := &Target{Super: super, Tenancy: cl, TenantNames: []string{"tenant-1"}, TenantUIDs: []string{tenantUID}}
	tg.TenantAdmins = append(tg.TenantAdmins, tenant)
	secretUser := func() (*clientcmdapi.Cluster, *clientcmdapi.AuthInfo) {
		s, err := super.CoreV1().Secrets(KubeconfigNamespace).Get(t.Context(), "tenant-1-kubeconfig", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := clientcmd.Load(s.Data["kubeconfig"])
		if err != nil {
			t.Fatal(err)
		}
		c := cfg.Contexts[cfg.CurrentContext]
		return cfg.Clusters[c.Cluster], cfg.AuthInfos[c.AuthInfo]
	}
	saNames := func() string {
		l, _ := tenant.CoreV1().ServiceAccounts(metav1.NamespaceSystem).List(t.Context(), metav1.ListOptions{})
		var n []string
		for _, sa := range l.Items {
			crb, err := tenant.RbacV1().ClusterRoleBindings().Get(t.Context(), sa.Name, metav1.GetOptions{})
			if err != nil || crb.RoleRef.Name != "cluster-admin" || crb.Subjects[0].Name != sa.Name {
				t.Errorf("ServiceAccount %s: no ClusterRoleBinding to cluster-admin (%v)", sa.Name, err)
			}
			n = append(n, sa.Name)
		}
		return strings.Join(n, ",")
	}
	for _, tc := range []struct {
		f        Fault
		wantSAs  string
		wantUser string
	}{
		{Fault{Seq: 1, Kind: KubeconfigRotate, Pick: 2, HoldMillis: 10}, "chaos-rotate-1-2", "chaos-rotate-1-2"},
		{Fault{Seq: 2, Kind: KubeconfigRotate, Pick: 4, HoldMillis: 10}, "chaos-rotate-2-4", "chaos-rotate-2-4"}, // the first revoked at once
		{Fault{Seq: 3, Kind: KubeconfigRotate, Pick: 7, HoldMillis: 10}, "chaos-rotate-3-7", "chaos-rotate-3-7"}, // after the grace
	} {
		detail, err := Injectors[KubeconfigRotate](t.Context(), tg, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		cluster, user := secretUser()
		if cluster.Server != "https://127.0.0.1:4443" || string(cluster.CertificateAuthorityData) != "CA" {
			t.Errorf("%s: cluster %+v, want the server and CA kept", tc.f, cluster)
		}
		if user.Token != "token-of-"+tc.wantUser || len(user.ClientCertificateData) != 0 {
			t.Errorf("%s: user %+v, want only the token of %s", tc.f, user, tc.wantUser)
		}
		if got := saNames(); got != tc.wantSAs {
			t.Errorf("%s: ServiceAccounts %q left, want %q (the earlier ones revoked); %s", tc.f, got, tc.wantSAs, detail)
		}
	}
}

// echoServer accepts connections and echoes what it reads.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// roundTrip writes msg on c and reads it back within timeout.
func roundTrip(c net.Conn, msg string, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	_ = c.SetDeadline(start.Add(timeout))
	if _, err := c.Write([]byte(msg)); err != nil {
		return 0, err
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil {
		return time.Since(start), err
	}
	if string(buf) != msg {
		return 0, fmt.Errorf("read %q, want %q", buf, msg)
	}
	return time.Since(start), nil
}

func dialProxy(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestProxyModes(t *testing.T) {
	p, err := StartProxy(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := dialProxy(t, p)
	if _, err := roundTrip(c, "pass", 5*time.Second); err != nil {
		t.Fatalf("pass: %v", err)
	}

	p.SetMode(ProxyDelay, 300*time.Millisecond)
	if d, err := roundTrip(c, "delay", 5*time.Second); err != nil || d < 300*time.Millisecond {
		t.Errorf("delay 300ms: round trip %s, %v; want at least 300ms", d, err)
	}

	p.SetMode(ProxyDrop, 0)
	if _, err := roundTrip(c, "drop", 300*time.Millisecond); !isTimeout(err) {
		t.Errorf("drop: %v, want no answer (a timeout)", err)
	}
	fresh := dialProxy(t, p) // accepted, not forwarded
	if _, err := roundTrip(fresh, "new", 300*time.Millisecond); !isTimeout(err) {
		t.Errorf("drop, new connection: %v, want no answer (a timeout)", err)
	}
	p.SetMode(ProxyPass, 0)
	buf := make([]byte, 4)
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "drop" {
		t.Errorf("after the drop: %q, %v; want the held bytes \"drop\" delivered", buf, err)
	}
	_ = fresh.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(fresh, buf[:3]); err != nil || string(buf[:3]) != "new" {
		t.Errorf("after the drop, new connection: %q, %v; want \"new\"", buf[:3], err)
	}

	if n := p.SetMode(ProxyReset, 0); n < 2 {
		t.Errorf("reset: %d connections open, want at least the 2 clients'", n)
	}
	if _, err := roundTrip(c, "reset", 5*time.Second); err == nil || isTimeout(err) {
		t.Errorf("reset: open connection answered or hung (%v), want it reset", err)
	}
	if _, err := roundTrip(dialProxy(t, p), "reset", 5*time.Second); err == nil || isTimeout(err) {
		t.Errorf("reset: new connection answered or hung (%v), want it reset", err)
	}
	p.SetMode(ProxyPass, 0)
	if _, err := roundTrip(dialProxy(t, p), "again", 5*time.Second); err != nil {
		t.Errorf("pass after the reset: %v", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestLossyProxyFaultSetsModeForTheHold(t *testing.T) {
	for pick, want := range map[uint64]ProxyMode{0: ProxyDrop, 1: ProxyDelay, 5: ProxyReset} {
		t.Run(want.String(), func(t *testing.T) {
			p, err := StartProxy(echoServer(t))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			tg := &Target{}
			tg.Proxies = []*Proxy{p}
			done := make(chan error, 1)
			go func() {
				_, err := Injectors[LossyProxy](context.Background(), tg, Fault{Kind: LossyProxy, Target: 2, Pick: pick, HoldMillis: 500})
				done <- err
			}()
			waitFor(t, "the proxy to be "+want.String(), func() bool { return p.Mode() == want })
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if m := p.Mode(); m != ProxyPass {
				t.Errorf("after the fault the proxy is in mode %s, want pass", m)
			}
			if _, err := roundTrip(dialProxy(t, p), "after", 5*time.Second); err != nil {
				t.Errorf("after the fault: %v", err)
			}
		})
	}
	if _, d := proxyFault(Fault{Pick: 500<<8 | 2}); d != 600*time.Millisecond {
		t.Errorf("delay of pick 500<<8|2: %s, want 600ms", d)
	}
	if _, err := Injectors[LossyProxy](t.Context(), &Target{}, Fault{Kind: LossyProxy}); err == nil {
		t.Fatal("a lossy proxy fault without proxies did not fail")
	}
}

func TestProxiedKubeconfig(t *testing.T) {
	kc, err := proxiedKubeconfig(testKubeconfig(t, "https://127.0.0.1:4443"), "127.0.0.1:5555")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(kc)
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.Clusters["tenant-1"]; c.Server != "https://127.0.0.1:5555" || string(c.CertificateAuthorityData) != "CA" || string(cfg.AuthInfos["admin"].ClientKeyData) != "KEY" {
		t.Errorf("proxied kubeconfig: cluster %+v, user %+v; want the server at the proxy, the rest kept", c, cfg.AuthInfos["admin"])
	}
}
