package kubelet_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

func TestKubeletAPI(t *testing.T) {
	// Every port-forward into a super Pod reaches this echo server.
	echo := startEchoServer(t)
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 1, KubeletExec: true, KubeletPortForwardTarget: echo}, 2)
	port := itest.FreePort(t)
	kubeletURL := "https://127.0.0.1:" + strconv.Itoa(port)
	c := itest.StartSyncer(t, env.Super.RESTConfig, func(o *options.Options) {
		o.KubeletBindAddress = "127.0.0.1:" + strconv.Itoa(port)
		o.KubeletMaxStreamsPerTenant = streamLimit
	})
	ctx := context.Background()
	t1, t2 := env.Tenants[0], env.Tenants[1]
	for _, tc := range []*localcluster.ControlPlane{t1, t2} {
		if err := itest.AddTenant(ctx, c, itest.KubeconfigNS, tc, 1); err != nil {
			t.Fatal(err)
		}
	}
	itest.WaitRunning(t, c, t1.Name)
	itest.WaitRunning(t, c, t2.Name)
	uid1 := itest.TenantUID(t, c, t1.Name)

	// Tenant 1's web/frontend; tenant 2's web/backend (so that tenant 2's certificate naming
	// web/frontend names no Pod of its own).
	for tc, name := range map[*localcluster.ControlPlane]string{t1: "frontend", t2: t2Pod} {
		itest.MustCreateNS(t, tc.Client, "web")
		itest.Created(t)(tc.Client.CoreV1().Pods("web").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
		}, metav1.CreateOptions{}))
	}
	superNS := conversion.SuperNamespace(t1.Name, uid1, "web")
	itest.Eventually(t, 2*time.Minute, "tenant Pod Running on a vNode that advertises the kubelet API", func(ctx context.Context) error {
		tp, err := t1.Client.CoreV1().Pods("web").Get(ctx, "frontend", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if tp.Status.Phase != corev1.PodRunning || tp.Spec.NodeName == "" {
			return itest.Errorf("tenant Pod %s on %q", tp.Status.Phase, tp.Spec.NodeName)
		}
		n, err := t1.Client.CoreV1().Nodes().Get(ctx, tp.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Status.DaemonEndpoints.KubeletEndpoint.Port != int32(port) || len(n.Status.Addresses) != 1 || n.Status.Addresses[0].Address != "127.0.0.1" {
			return itest.Errorf("vNode advertises %v port %d", n.Status.Addresses, n.Status.DaemonEndpoints.KubeletEndpoint.Port)
		}
		return nil
	})
	itest.Eventually(t, 2*time.Minute, "tenant 2's Pod Running", func(ctx context.Context) error {
		tp, err := t2.Client.CoreV1().Pods("web").Get(ctx, t2Pod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if tp.Status.Phase != corev1.PodRunning {
			return itest.Errorf("tenant 2's Pod %s", tp.Status.Phase)
		}
		return nil
	})
	if err := env.Super.AppendPodLog("hello from the super cluster"); err != nil {
		t.Fatal(err)
	}

	t.Run("logs through the tenant apiserver", func(t *testing.T) {
		before := metrics.KubeletRequests(t1.Name, "containerLogs", "forwarded")
		itest.Eventually(t, time.Minute, "kubectl logs", func(ctx context.Context) error {
			out, err := t1.Client.CoreV1().Pods("web").GetLogs("frontend", &corev1.PodLogOptions{Container: "app"}).DoRaw(ctx)
			if err != nil {
				return err
			}
			if !strings.Contains(string(out), "hello from the super cluster") {
				return itest.Errorf("log %q", out)
			}
			return nil
		})
		if d := metrics.KubeletRequests(t1.Name, "containerLogs", "forwarded") - before; d < 1 {
			t.Errorf("forwarded counter rose by %v", d)
		}
	})

	t.Run("exec through the tenant apiserver", func(t *testing.T) {
		req := t1.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace("web").Name("frontend").SubResource("exec").
			VersionedParams(&corev1.PodExecOptions{Container: "app", Command: []string{"echo", "exec-ok"}, Stdout: true, Stderr: true}, scheme.ParameterCodec)
		spdy, err := remotecommand.NewSPDYExecutor(t1.RESTConfig, http.MethodPost, req.URL())
		if err != nil {
			t.Fatal(err)
		}
		ws, err := remotecommand.NewWebSocketExecutor(t1.RESTConfig, http.MethodGet, req.URL().String())
		if err != nil {
			t.Fatal(err)
		}
		exec, err := remotecommand.NewFallbackExecutor(ws, spdy, func(error) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		sent := metrics.KubeletBytesCount(t1.Name, "exec", metrics.KubeletToTenant)
		if err := exec.StreamWithContext(sctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr}); err != nil {
			t.Fatalf("exec: %v (stderr %q)", err, stderr.String())
		}
		if strings.TrimSpace(stdout.String()) != "exec-ok" {
			t.Errorf("stdout %q stderr %q", stdout.String(), stderr.String())
		}
		// The upgraded stream's bytes (the output and the protocol's framing) are counted.
		if d := metrics.KubeletBytesCount(t1.Name, "exec", metrics.KubeletToTenant) - sent; d < float64(len("exec-ok")) {
			t.Errorf("vcsyncer_kubelet_bytes_total{endpoint=exec,direction=to_tenant} rose by %v, want at least the output's %d bytes", d, len("exec-ok"))
		}
	})

	t.Run("attach through the tenant apiserver", func(t *testing.T) { testAttach(t, env.Super, t1) })
	t.Run("port-forward through the tenant apiserver", func(t *testing.T) { testPortForward(t, t1) })
	t.Run("cp", func(t *testing.T) { testCopy(t, env.Super, t1) })

	// Attacks on the kubelet API itself, as a tenant apiserver (or anyone on the network)
	// could send them.
	client := func(cert []byte, key []byte) *http.Client {
		//nolint:gosec // the test trusts the syncer's self-signed serving certificate
		cfg := &tls.Config{InsecureSkipVerify: true}
		if cert != nil {
			pair, err := tls.X509KeyPair(cert, key)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 30 * time.Second}
	}
	get := func(t *testing.T, hc *http.Client, path string, hdr map[string]string) (int, string) {
		t.Helper()
		r, err := http.NewRequest(http.MethodGet, kubeletURL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The path goes out exactly as written: no cleaning, no re-encoding (the query is
		// r.URL.RawQuery already).
		p, _, _ := strings.Cut(path, "?")
		r.URL.Opaque = "//127.0.0.1:" + strconv.Itoa(port) + p
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		resp, err := hc.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return resp.StatusCode, string(body)
	}
	adminCert, adminKey := adminCredentials(t, t1)
	long := strings.Repeat("a", 300)
	attacks := []struct {
		name       string
		hc         *http.Client
		path       string
		wantCode   int
		wantUnauth string
	}{
		{name: "no-client-certificate", hc: client(nil, nil), path: "/containerLogs/web/frontend/app", wantCode: 401, wantUnauth: "no_certificate"},
		{name: "tenant-admin-certificate-is-not-the-kubelet-client", hc: client(adminCert, adminKey), path: "/containerLogs/web/frontend/app", wantCode: 401, wantUnauth: "unknown_certificate"},
		{name: "other-tenant-certificate-for-this-tenants-pod", hc: client(t2.KubeletClientCert, t2.KubeletClientKey), path: "/containerLogs/web/frontend/app", wantCode: 404},
		{name: "other-tenant-exec-into-this-tenants-pod", hc: client(t2.KubeletClientCert, t2.KubeletClientKey), path: "/exec/web/frontend/app?command=id&output=1", wantCode: 404},
		{name: "other-tenant-attach-to-this-tenants-pod", hc: client(t2.KubeletClientCert, t2.KubeletClientKey), path: "/attach/web/frontend/app?output=1", wantCode: 404},
		{name: "other-tenant-port-forward-to-this-tenants-pod", hc: client(t2.KubeletClientCert, t2.KubeletClientKey), path: "/portForward/web/frontend?port=8080", wantCode: 404},
		{name: "port-forward-super-namespace-as-tenant-namespace", hc: client(t2.KubeletClientCert, t2.KubeletClientKey), path: "/portForward/" + superNS + "/frontend?port=8080", wantCode: 404},
		{name: "port-forward-dot-dot", hc: client(t1.KubeletClientCert, t1.KubeletClientKey), path: "/portForward/web/../" + superNS + "/frontend?port=8080", wantCode: 404},
		{name: "super-namespace-as-tenant-namespace", hc: client(t2.KubeletClientCert, t2.KubeletClientKey), path: "/containerLogs/" + superNS + "/frontend/app", wantCode: 404},
		{name: "container-not-declared", hc: client(t1.KubeletClientCert, t1.KubeletClientKey), path: "/containerLogs/web/frontend/sidecar", wantCode: 404},
		{name: "encoded-slash", hc: client(t1.KubeletClientCert, t1.KubeletClientKey), path: "/containerLogs/web%2Ffrontend/frontend/app", wantCode: 404},
		{name: "double-encoded-slash", hc: client(t1.KubeletClientCert, t1.KubeletClientKey), path: "/containerLogs/web%252Ffrontend/frontend/app", wantCode: 404},
		{name: "dot-dot", hc: client(t1.KubeletClientCert, t1.KubeletClientKey), path: "/containerLogs/web/../" + superNS + "/frontend/app", wantCode: 404},
		{name: "very-long-name", hc: client(t1.KubeletClientCert, t1.KubeletClientKey), path: "/containerLogs/web/" + long + "/app", wantCode: 404},
		{name: "other-kubelet-endpoint", hc: client(t1.KubeletClientCert, t1.KubeletClientKey), path: "/runningpods/", wantCode: 404},
	}
	for _, a := range attacks {
		t.Run("attack/"+a.name, func(t *testing.T) {
			forwarded := forwardedCount(t1.Name, t2.Name)
			var unauth float64
			if a.wantUnauth != "" {
				unauth = metrics.KubeletUnauthenticatedCount(a.wantUnauth)
			}
			code, body := get(t, a.hc, a.path, map[string]string{"Authorization": "Bearer " + "not-forwarded"})
			if code != a.wantCode {
				t.Errorf("code %d, want %d (body %q)", code, a.wantCode, body)
			}
			if strings.Contains(body, "hello from the super cluster") {
				t.Errorf("the super Pod's log leaked: %q", body)
			}
			after := forwardedCount(t1.Name, t2.Name)
			if after != forwarded {
				t.Errorf("forwarded %v requests to the super cluster, want none", after-forwarded)
			}
			if a.wantUnauth != "" {
				if d := metrics.KubeletUnauthenticatedCount(a.wantUnauth) - unauth; d != 1 {
					t.Errorf("vcsyncer_kubelet_unauthenticated_total{reason=%q} rose by %v, want 1", a.wantUnauth, d)
				}
			}
		})
	}

	// The same attacks as real stream upgrades, as a hostile tenant apiserver would send them:
	// tenant 2's kubelet client certificate, tenant 1's Pod.
	t.Run("attack/other-tenant-spdy-upgrades-into-this-tenants-pod", func(t *testing.T) {
		testUpgradeAttacks(t, kubeletURL, t2, t1.Name, t2.Name)
	})

	k := &kubeletAPI{url: kubeletURL, port: port}
	t.Run("exec-stdin-and-tty", func(t *testing.T) { testExecStdinAndTTY(t, t1) })
	t.Run("logs-follow-tail-previous", func(t *testing.T) { testLogOptions(t, env.Super, t1) })
	t.Run("stream-limit", func(t *testing.T) { testStreamLimit(t, k, t1) })
	t.Run("exec-switched-off-by-policy", func(t *testing.T) { testExecSwitchedOffByPolicy(t, c, t1) })
	t.Run("attach-and-port-forward-switched-off-by-policy", func(t *testing.T) { testAttachPortForwardSwitchedOffByPolicy(t, c, env.Super, t1) })
	// These change the Tenants: they run last.
	t.Run("streams-end-when-kubeletClientCA-changes", func(t *testing.T) { testStreamsEndOnCAChange(t, k, c, t1) })
	t.Run("streams-end-when-tenant-removed", func(t *testing.T) { testStreamsEndOnRemoval(t, k, c, t2) })
}

// forwardedCount returns the requests the kubelet API has forwarded to the super cluster for
// tenants, every endpoint together.
func forwardedCount(tenants ...string) float64 {
	var n float64
	for _, tn := range tenants {
		for _, e := range []string{"containerLogs", "exec", "attach", "portForward"} {
			n += metrics.KubeletRequests(tn, e, "forwarded")
		}
	}
	return n
}

// adminCredentials returns the admin client certificate and key of control plane cp (signed
// by its main CA, not by its kubelet client CA), from its kubeconfig.
func adminCredentials(t *testing.T, cp *localcluster.ControlPlane) ([]byte, []byte) {
	t.Helper()
	return cp.RESTConfig.CertData, cp.RESTConfig.KeyData
}

// testExecStdinAndTTY: `kubectl exec -i` passes the user's input to the command (head stops
// after the bytes it wants: kwok never ends a command's input), and `exec -t` gives it a
// terminal, both through the tenant apiserver and the syncer's kubelet API.
func testExecStdinAndTTY(t *testing.T, t1 *localcluster.ControlPlane) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const in = "stdin-reaches-the-container"
	var stdout, stderr bytes.Buffer
	if err := execWith(ctx, t1, []string{"head", "-c", strconv.Itoa(len(in))},
		remotecommand.StreamOptions{Stdin: strings.NewReader(in), Stdout: &stdout, Stderr: &stderr}); err != nil {
		t.Fatalf("exec -i: %v (stderr %q)", err, stderr.String())
	}
	if stdout.String() != in {
		t.Errorf("exec -i: stdout %q, want the input %q", stdout.String(), in)
	}
	stdout.Reset()
	if err := execWith(ctx, t1, []string{"sh", "-c", "test -t 0 && test -t 1 && echo on-a-terminal"},
		remotecommand.StreamOptions{Stdin: strings.NewReader(""), Stdout: &stdout, Tty: true}); err != nil {
		t.Fatalf("exec -i -t: %v", err)
	}
	if strings.TrimSpace(stdout.String()) != "on-a-terminal" {
		t.Errorf("exec -i -t: stdout %q, want the command to find a terminal on stdin and stdout", stdout.String())
	}
}
