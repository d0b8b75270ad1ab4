package kubelet_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/metrics"
)

// startEchoServer starts a TCP server on loopback that writes back every byte it reads, the
// target of the super cluster's port-forwards (SuperOptions.KubeletPortForwardTarget). It
// stops at the end of the test.
func startEchoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			})
		}
	})
	return ln.Addr().String()
}

// lockedBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testAttach: a tenant user's `kubectl attach` (client-go remotecommand against the tenant
// apiserver's pods/attach, over SPDY and over WebSocket) shows the container's output written
// while it is attached (kwok follows the super Pod's log file from its end).
func testAttach(t *testing.T, super, t1 *localcluster.ControlPlane) {
	for name, e := range attachExecutors(t, t1) {
		t.Run(name, func(t *testing.T) {
			before := metrics.KubeletRequests(t1.Name, "attach", "forwarded")
			received := metrics.KubeletBytesCount(t1.Name, "attach", metrics.KubeletToTenant)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			want := "attached-" + name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			if err := attachSees(ctx, e, super, want); err != nil {
				t.Fatal(err)
			}
			if d := metrics.KubeletRequests(t1.Name, "attach", "forwarded") - before; d < 1 {
				t.Errorf("vcsyncer_kubelet_requests_total{endpoint=attach,result=forwarded} rose by %v", d)
			}
			if d := metrics.KubeletBytesCount(t1.Name, "attach", metrics.KubeletToTenant) - received; d < float64(len(want)) {
				t.Errorf("vcsyncer_kubelet_bytes_total{endpoint=attach,direction=to_tenant} rose by %v, want at least the line's %d bytes", d, len(want))
			}
			waitClosed(t, t1.Name)
		})
	}
}

// attachExecutors returns the SPDY and WebSocket executors of an attach to web/frontend's
// container app (stdout and stderr) through tenant tc's apiserver.
func attachExecutors(t *testing.T, tc *localcluster.ControlPlane) map[string]remotecommand.Executor {
	t.Helper()
	req := tc.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace("web").Name("frontend").SubResource("attach").
		VersionedParams(&corev1.PodAttachOptions{Container: "app", Stdout: true, Stderr: true}, scheme.ParameterCodec)
	spdyExec, err := remotecommand.NewSPDYExecutor(tc.RESTConfig, http.MethodPost, req.URL())
	if err != nil {
		t.Fatal(err)
	}
	wsExec, err := remotecommand.NewWebSocketExecutor(tc.RESTConfig, http.MethodGet, req.URL().String())
	if err != nil {
		t.Fatal(err)
	}
	return map[string]remotecommand.Executor{"spdy": spdyExec, "websocket": wsExec}
}

// attachSees attaches with e and returns nil once the attached stdout shows want, which it
// appends to the super cluster's Pod log every 200 ms meanwhile (kwok follows the log from
// wherever its end is when the attach reaches it), or an error when the attach ends first or
// ctx is done. It detaches before it returns.
func attachSees(ctx context.Context, e remotecommand.Executor, super *localcluster.ControlPlane, want string) error {
	ctx, cancel := context.WithCancel(ctx)
	var stdout, stderr lockedBuffer
	var streamErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		streamErr = e.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
	}()
	defer func() { cancel(); <-done }()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(stdout.String(), want) {
		select {
		case <-done:
			return fmt.Errorf("attach ended before showing %q: %w (stdout %q stderr %q)", want, streamErr, stdout.String(), stderr.String())
		case <-ctx.Done():
			return fmt.Errorf("attach did not show %q: %w (stdout %q stderr %q)", want, ctx.Err(), stdout.String(), stderr.String())
		case <-tick.C:
			if err := super.AppendPodLog(want); err != nil {
				return err
			}
		}
	}
	return nil
}

// testPortForward: a tenant user's `kubectl port-forward` (client-go tools/portforward against
// the tenant apiserver's pods/portforward, over SPDY and over the WebSocket tunnel) carries
// 1 MiB on each of two ports of the super Pod (kwok connects them to the echo server) and back,
// byte for byte; so does the real kubectl.
func testPortForward(t *testing.T, t1 *localcluster.ControlPlane) {
	for name, d := range portForwardDialers(t, t1) {
		t.Run(name, func(t *testing.T) {
			before := metrics.KubeletRequests(t1.Name, "portForward", "forwarded")
			sent := metrics.KubeletBytesCount(t1.Name, "portForward", metrics.KubeletFromTenant)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := echoThroughPortForward(ctx, d, 1<<20); err != nil {
				t.Fatal(err)
			}
			if d := metrics.KubeletRequests(t1.Name, "portForward", "forwarded") - before; d < 1 {
				t.Errorf("vcsyncer_kubelet_requests_total{endpoint=portForward,result=forwarded} rose by %v", d)
			}
			if d := metrics.KubeletBytesCount(t1.Name, "portForward", metrics.KubeletFromTenant) - sent; d < 2<<20 {
				t.Errorf("vcsyncer_kubelet_bytes_total{endpoint=portForward,direction=from_tenant} rose by %v, want at least the 2 MiB sent", d)
			}
			waitClosed(t, t1.Name)
		})
	}
	t.Run("kubectl", func(t *testing.T) {
		testKubectlPortForward(t, t1)
		waitClosed(t, t1.Name)
	})
}

// portForwardDialers returns the SPDY and WebSocket-tunnel dialers of a port-forward to
// web/frontend through tenant tc's apiserver.
func portForwardDialers(t *testing.T, tc *localcluster.ControlPlane) map[string]httpstream.Dialer {
	t.Helper()
	u := tc.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace("web").Name("frontend").SubResource("portforward").URL()
	rt, upgrader, err := spdy.RoundTripperFor(tc.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := portforward.NewSPDYOverWebsocketDialerForStreaming(u, tc.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]httpstream.Dialer{"spdy": spdy.NewDialerForStreaming(upgrader, &http.Client{Transport: rt}, http.MethodPost, u), "websocket": ws}
}

// echoThroughPortForward forwards two local ports to ports 8080 and 9090 of web/frontend
// through dialer (two streams of one connection), sends n random bytes through each at once
// and checks that the same bytes come back.
func echoThroughPortForward(ctx context.Context, dialer httpstream.Dialer, n int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ready := make(chan struct{})
	var errOut lockedBuffer
	fw, err := portforward.NewOnAddressesForStreamingWithContext(ctx, dialer, []string{"127.0.0.1"}, []string{"0:8080", "0:9090"}, ready, io.Discard, &errOut)
	if err != nil {
		return err
	}
	var fwErr error
	done := make(chan struct{})
	go func() { defer close(done); fwErr = fw.ForwardPorts() }()
	defer func() { cancel(); <-done }()
	select {
	case <-ready:
	case <-done:
		return fmt.Errorf("port-forward ended before it was ready: %w (%s)", fwErr, errOut.String())
	case <-ctx.Done():
		return fmt.Errorf("port-forward not ready: %w", ctx.Err())
	}
	ports, err := fw.GetPorts()
	if err != nil {
		return err
	}
	errs := make(chan error, len(ports))
	for _, p := range ports {
		go func() {
			if err := echo(ctx, int(p.Local), n); err != nil {
				errs <- fmt.Errorf("local port %d -> %d: %w (port-forward errors: %q)", p.Local, p.Remote, err, errOut.String())
				return
			}
			errs <- nil
		}()
	}
	var all []error
	for range ports {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// echo sends n random bytes to 127.0.0.1:port and checks that the same bytes come back.
func echo(ctx context.Context, port, n int) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	payload := make([]byte, n)
	_, _ = rand.Read(payload)
	wrote := make(chan error, 1)
	go func() { _, err := conn.Write(payload); wrote <- err }()
	got := make([]byte, n)
	if k, err := io.ReadFull(conn, got); err != nil {
		return fmt.Errorf("read %d of %d echoed bytes: %w", k, n, err)
	}
	if err := <-wrote; err != nil {
		return err
	}
	if !bytes.Equal(got, payload) {
		return errors.New("the echoed bytes differ from those sent")
	}
	return nil
}

// testKubectlPortForward: the real `kubectl port-forward` with the tenant's kubeconfig (as a
// user runs it; kubectl of this version tunnels over WebSocket and falls back to SPDY) carries
// 1 MiB to the echo server and back.
func testKubectlPortForward(t *testing.T, t1 *localcluster.ControlPlane) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlPath(), "--kubeconfig", t1.KubeconfigPath, "-n", "web",
		"port-forward", "pod/frontend", "--address", "127.0.0.1", ":8080")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	// "Forwarding from 127.0.0.1:<local> -> 8080", printed once it listens.
	sc := bufio.NewScanner(stdout)
	local := 0
	for local == 0 && sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Forwarding from 127.0.0.1:"); ok {
			p, _, _ := strings.Cut(rest, " ")
			if local, err = strconv.Atoi(p); err != nil {
				t.Fatalf("kubectl port-forward printed %q", sc.Text())
			}
		}
	}
	if local == 0 {
		t.Fatalf("kubectl port-forward ended without listening: %v\n%s", sc.Err(), stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if err := echo(ctx, local, 1<<20); err != nil {
		t.Fatalf("%v (kubectl stderr: %s)", err, stderr.String())
	}
}

// kubectlPath is the kubectl binary of the tool cache.
func kubectlPath() string { return filepath.Join(localcluster.ToolsDir(), "bin", "kubectl") }

// testCopy: a tenant user's `kubectl cp` (the real kubectl, with the tenant's kubeconfig)
// copies a file into the Pod (it arrives in kwok's exec directory on the super side) and back
// out of it, byte for byte. cp runs tar in the container through exec.
func testCopy(t *testing.T, super, t1 *localcluster.ControlPlane) {
	kubectl := kubectlPath()
	dir := t.TempDir()
	name := "cp-" + strconv.FormatInt(time.Now().UnixNano(), 36) + ".bin"
	content := make([]byte, 256<<10)
	_, _ = rand.Read(content)
	src := filepath.Join(dir, name)
	if err := os.WriteFile(src, content, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(filepath.Join(super.ExecDir(), name)) })
	run := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", t1.KubeconfigPath, "-n", "web"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v (context: %v)\n%s", strings.Join(args, " "), err, ctx.Err(), out)
		}
	}

	run("cp", src, "frontend:"+name, "-c", "app")
	got, err := os.ReadFile(filepath.Join(super.ExecDir(), name))
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("kubectl cp into the Pod: the file in the exec dir has %d bytes (err %v), want the %d sent", len(got), err, len(content))
	}
	back := filepath.Join(dir, "back.bin")
	run("cp", "frontend:"+name, back, "-c", "app")
	got, err = os.ReadFile(back)
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("kubectl cp out of the Pod: %d bytes (err %v), want the %d bytes copied in", len(got), err, len(content))
	}
	waitClosed(t, t1.Name)
}

// testUpgradeAttacks sends, with attacker's kubelet client certificate, SPDY attach and
// port-forward upgrades for web/frontend (a Pod of another tenant) straight to the kubelet
// API: each is refused with 404 before any upgrade, and nothing is forwarded for tenants.
func testUpgradeAttacks(t *testing.T, kubeletURL string, attacker *localcluster.ControlPlane, tenants ...string) {
	cfg := &rest.Config{Host: kubeletURL, TLSClientConfig: rest.TLSClientConfig{
		CertData: attacker.KubeletClientCert, KeyData: attacker.KubeletClientKey,
		Insecure: true, // the test trusts the syncer's self-signed serving certificate
	}}
	forwarded := forwardedCount(tenants...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	u, err := url.Parse(kubeletURL + "/attach/web/frontend/app?output=1&error=1")
	if err != nil {
		t.Fatal(err)
	}
	e, err := remotecommand.NewSPDYExecutor(cfg, http.MethodPost, u)
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	err = e.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stdout})
	if err == nil || !strings.Contains(err.Error(), "Not Found: pod_not_found") {
		t.Errorf("SPDY attach with another tenant's certificate: %v, want refused with 404 pod_not_found (output %q)", err, stdout.String())
	}

	rt, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u, err = url.Parse(kubeletURL + "/portForward/web/frontend")
	if err != nil {
		t.Fatal(err)
	}
	err = echoThroughPortForward(ctx, spdy.NewDialerForStreaming(upgrader, &http.Client{Transport: rt}, http.MethodPost, u), 1)
	if err == nil || !strings.Contains(err.Error(), "Not Found: pod_not_found") {
		t.Errorf("SPDY port-forward with another tenant's certificate: %v, want refused with 404 pod_not_found", err)
	}
	if d := forwardedCount(tenants...) - forwarded; d != 0 {
		t.Errorf("forwarded %v requests to the super cluster, want none", d)
	}
}
