package kubelet_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/kubeletproxy"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// streamLimit is the syncer's --kubelet-max-streams-per-tenant in this suite.
const streamLimit = 3

// t2Pod is tenant 2's Pod in its namespace web (tenant 1's is frontend).
const t2Pod = "backend"

// kubeletAPI is the syncer's kubelet API as the tests reach it directly.
type kubeletAPI struct {
	url  string
	port int
}

// streamClient is an HTTP client with tenant tc's kubelet client certificate and no overall
// timeout (a follow stream lasts until it is closed).
func streamClient(t *testing.T, tc *localcluster.ControlPlane) *http.Client {
	t.Helper()
	pair, err := tls.X509KeyPair(tc.KubeletClientCert, tc.KubeletClientKey)
	if err != nil {
		t.Fatal(err)
	}
	//nolint:gosec // the test trusts the syncer's self-signed serving certificate
	cfg := &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{pair}}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
}

// follow opens `logs -f` of web/<pod>/app on the kubelet API with hc and returns the
// response (status checked by the caller; the body is closed at the end of the test).
func (k *kubeletAPI) follow(t *testing.T, hc *http.Client, pod string) *http.Response {
	t.Helper()
	resp, err := hc.Get(k.url + "/containerLogs/web/" + pod + "/app?follow=true")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// ended returns a channel closed when resp's body ends (the server closed the stream).
func ended(resp *http.Response) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		_, _ = io.Copy(io.Discard, resp.Body)
	}()
	return ch
}

// within30s reports whether ch is closed within 30 seconds.
func within30s(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-time.After(30 * time.Second):
		return false
	}
}

// waitOpen waits until the syncer forwards at least n streams for tenant.
func waitOpen(t *testing.T, tenant string, n float64) {
	t.Helper()
	itest.Eventually(t, 30*time.Second, "open kubelet streams", func(context.Context) error {
		if got := metrics.KubeletOpenStreamsCount(tenant); got < n {
			return itest.Errorf("tenant %s has %v open kubelet streams, want %v", tenant, got, n)
		}
		return nil
	})
}

// waitClosed waits until the syncer forwards no stream for tenant.
func waitClosed(t *testing.T, tenant string) {
	t.Helper()
	itest.Eventually(t, 30*time.Second, "no open kubelet stream", func(context.Context) error {
		if got := metrics.KubeletOpenStreamsCount(tenant); got != 0 {
			return itest.Errorf("tenant %s has %v open kubelet streams", tenant, got)
		}
		return nil
	})
}

// testStreamLimit: a tenant holds at most streamLimit streams; one more is refused with 429
// and a message, directly and through the tenant apiserver, and a closed stream frees its
// place.
func testStreamLimit(t *testing.T, k *kubeletAPI, t1 *localcluster.ControlPlane) {
	waitClosed(t, t1.Name)
	hc := streamClient(t, t1)
	var open []*http.Response
	for i := 0; i < streamLimit; i++ {
		resp := k.follow(t, hc, "frontend")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %d: code %d", i+1, resp.StatusCode)
		}
		open = append(open, resp)
	}
	waitOpen(t, t1.Name, streamLimit)

	refused := metrics.KubeletRequests(t1.Name, "containerLogs", "too_many_streams") + metrics.KubeletRequests(t1.Name, "exec", "too_many_streams")
	resp := k.follow(t, hc, "frontend")
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), strconv.Itoa(streamLimit)+" open streams") {
		t.Errorf("stream %d: code %d body %q, want 429 naming the limit", streamLimit+1, resp.StatusCode, body)
	}
	// Through the tenant apiserver, as a tenant user sees it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := t1.Client.CoreV1().Pods("web").GetLogs("frontend", &corev1.PodLogOptions{Container: "app"}).DoRaw(ctx)
	if err == nil {
		t.Error("kubectl logs past the limit succeeded")
	} else {
		t.Logf("kubectl logs past the limit: %v", err)
	}
	var stderr strings.Builder
	if err := execIn(ctx, t1, []string{"echo", "past-the-limit"}, io.Discard, &stderr); err == nil {
		t.Error("kubectl exec past the limit succeeded")
	} else {
		t.Logf("kubectl exec past the limit: %v", err)
	}
	if d := metrics.KubeletRequests(t1.Name, "containerLogs", "too_many_streams") + metrics.KubeletRequests(t1.Name, "exec", "too_many_streams") - refused; d < 3 {
		t.Errorf("requests_total{result=\"too_many_streams\"} rose by %v, want at least 3", d)
	}

	// A closed stream frees its place.
	_ = open[0].Body.Close()
	itest.Eventually(t, 30*time.Second, "a log request after one stream closed", func(ctx context.Context) error {
		_, err := t1.Client.CoreV1().Pods("web").GetLogs("frontend", &corev1.PodLogOptions{Container: "app"}).DoRaw(ctx)
		return err
	})
	for _, r := range open[1:] {
		_ = r.Body.Close()
	}
	waitClosed(t, t1.Name)
}

// testStreamsEndOnCAChange: a `logs -f` and an `exec` stream of tenant t1 end when its
// Tenant's spec.kubeletClientCA changes to a CA that does not sign the tenant apiserver's
// certificate; then the CA is restored.
func testStreamsEndOnCAChange(t *testing.T, k *kubeletAPI, c client.Client, t1 *localcluster.ControlPlane) {
	waitClosed(t, t1.Name)
	resp := k.follow(t, streamClient(t, t1), "frontend")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("logs -f: code %d", resp.StatusCode)
	}
	logsEnded := ended(resp)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	execEnded := make(chan struct{})
	var execErr error
	go func() {
		defer close(execEnded)
		execErr = execIn(ctx, t1, []string{"sleep", "110"}, io.Discard, io.Discard)
	}()
	waitOpen(t, t1.Name, 2)

	before := metrics.KubeletStreamsRevokedCount(kubeletproxy.RevokedCredentialsChanged)
	setKubeletCA(t, c, t1.Name, newCAPEM(t))
	t.Cleanup(func() { setKubeletCA(t, c, t1.Name, string(t1.KubeletClientCA)) })
	if !within30s(logsEnded) {
		t.Error("logs -f still open 30s after the CA changed")
	}
	if !within30s(execEnded) {
		t.Error("exec still open 30s after the CA changed")
	} else if execErr == nil {
		t.Log("exec ended without an error")
	}
	if d := metrics.KubeletStreamsRevokedCount(kubeletproxy.RevokedCredentialsChanged) - before; d != 2 {
		t.Errorf("streams_revoked_total{reason=%q} rose by %v, want 2", kubeletproxy.RevokedCredentialsChanged, d)
	}
	waitClosed(t, t1.Name)

	setKubeletCA(t, c, t1.Name, string(t1.KubeletClientCA))
	itest.Eventually(t, 30*time.Second, "logs after the CA was restored", func(ctx context.Context) error {
		_, err := t1.Client.CoreV1().Pods("web").GetLogs("frontend", &corev1.PodLogOptions{Container: "app"}).DoRaw(ctx)
		return err
	})
}

// testStreamsEndOnRemoval: a `logs -f` stream of tenant t2 ends when its Tenant is deleted.
func testStreamsEndOnRemoval(t *testing.T, k *kubeletAPI, c client.Client, t2 *localcluster.ControlPlane) {
	waitClosed(t, t2.Name)
	resp := k.follow(t, streamClient(t, t2), t2Pod)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("logs -f: code %d", resp.StatusCode)
	}
	logsEnded := ended(resp)
	waitOpen(t, t2.Name, 1)
	before := metrics.KubeletStreamsRevokedCount(kubeletproxy.RevokedTenantRemoved)
	if err := c.Delete(context.Background(), &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: t2.Name}}); err != nil {
		t.Fatal(err)
	}
	if !within30s(logsEnded) {
		t.Error("logs -f still open 30s after the Tenant was deleted")
	}
	if d := metrics.KubeletStreamsRevokedCount(kubeletproxy.RevokedTenantRemoved) - before; d != 1 {
		t.Errorf("streams_revoked_total{reason=%q} rose by %v, want 1", kubeletproxy.RevokedTenantRemoved, d)
	}
}

// execIn runs cmd in web/frontend/app of tenant tc through its apiserver (WebSocket, then
// SPDY), as kubectl exec does.
func execIn(ctx context.Context, tc *localcluster.ControlPlane, cmd []string, stdout, stderr io.Writer) error {
	return execWith(ctx, tc, cmd, remotecommand.StreamOptions{Stdout: stdout, Stderr: stderr})
}

// execWith is execIn with the streams and terminal of o (stdin when o.Stdin is set, a TTY
// when o.Tty is, as `kubectl exec -i -t` asks).
func execWith(ctx context.Context, tc *localcluster.ControlPlane, cmd []string, o remotecommand.StreamOptions) error {
	req := tc.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace("web").Name("frontend").SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: "app", Command: cmd, Stdin: o.Stdin != nil, Stdout: o.Stdout != nil,
			Stderr: o.Stderr != nil, TTY: o.Tty}, scheme.ParameterCodec)
	spdy, err := remotecommand.NewSPDYExecutor(tc.RESTConfig, http.MethodPost, req.URL())
	if err != nil {
		return err
	}
	ws, err := remotecommand.NewWebSocketExecutor(tc.RESTConfig, http.MethodGet, req.URL().String())
	if err != nil {
		return err
	}
	exec, err := remotecommand.NewFallbackExecutor(ws, spdy, func(error) bool { return true })
	if err != nil {
		return err
	}
	return exec.StreamWithContext(ctx, o)
}

// setKubeletCA sets Tenant name's spec.kubeletClientCA.
func setKubeletCA(t *testing.T, c client.Client, name, pemCA string) {
	t.Helper()
	updateTenant(t, c, name, "spec.kubeletClientCA", func(s *tenancyv1alpha1.TenantSpec) { s.KubeletClientCA = pemCA })
}

// updateTenant applies mutate to Tenant name's spec and updates it (field names what changes).
func updateTenant(t *testing.T, c client.Client, name, field string, mutate func(*tenancyv1alpha1.TenantSpec)) {
	t.Helper()
	itest.Eventually(t, 30*time.Second, "Tenant "+field+" updated", func(ctx context.Context) error {
		var tn tenancyv1alpha1.Tenant
		if err := c.Get(ctx, types.NamespacedName{Name: name}, &tn); err != nil {
			return err
		}
		mutate(&tn.Spec)
		return c.Update(ctx, &tn)
	})
}

// newCAPEM returns the PEM certificate of a new CA that signs nothing.
func newCAPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "unrelated-kubelet-client-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// testLogOptions: `kubectl logs -f`, `--tail` and `--previous` through the tenant apiserver.
func testLogOptions(t *testing.T, super, t1 *localcluster.ControlPlane) {
	nonce := strconv.FormatInt(time.Now().UnixNano(), 36)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	t.Run("follow", func(t *testing.T) {
		rc, err := t1.Client.CoreV1().Pods("web").GetLogs("frontend", &corev1.PodLogOptions{Container: "app", Follow: true}).Stream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		want := "followed-" + nonce
		seen := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(rc)
			for sc.Scan() {
				if strings.Contains(sc.Text(), want) {
					close(seen)
					return
				}
			}
		}()
		waitOpen(t, t1.Name, 1) // the stream is open before the line is written
		if err := super.AppendPodLog(want); err != nil {
			t.Fatal(err)
		}
		if !within30s(seen) {
			t.Errorf("logs -f did not show %q written after it started, within 30s", want)
		}
	})
	t.Run("tail", func(t *testing.T) {
		a, b := "tail-a-"+nonce, "tail-b-"+nonce
		if err := super.AppendPodLog(a, b); err != nil {
			t.Fatal(err)
		}
		one := int64(1)
		out, err := t1.Client.CoreV1().Pods("web").GetLogs("frontend", &corev1.PodLogOptions{Container: "app", TailLines: &one}).DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), b) || strings.Contains(string(out), a) || strings.Contains(string(out), "hello from the super cluster") {
			t.Errorf("logs --tail=1: %q, want the last line %q only", out, b)
		}
	})
	t.Run("previous", func(t *testing.T) {
		// kwok serves the same file as the previous container's log.
		out, err := t1.Client.CoreV1().Pods("web").GetLogs("frontend", &corev1.PodLogOptions{Container: "app", Previous: true}).DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), "hello from the super cluster") {
			t.Errorf("logs --previous: %q", out)
		}
	})
}
