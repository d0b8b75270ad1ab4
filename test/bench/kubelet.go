package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
)

// kubeletConfig is the configuration of the kubelet experiment.
type kubeletConfig struct {
	logMB   int           // size of the Pod log read whole and followed, in MB (10^6 bytes)
	pfMB    int           // bytes read through a port-forward, in MB
	reps    int           // reads of the log per path (the median counts)
	execs   int           // short exec commands per path
	streams int           // concurrent follow streams held through the tenant path
	hold    time.Duration // how long the streams are held open
	out     string
	timeout time.Duration
}

// kubeletPath is one way to a container: through a tenant's apiserver and vc-syncer's kubelet
// API (tenant), or straight to the super cluster's apiserver (direct).
type kubeletPath struct {
	name      string
	cs        kubernetes.Interface
	cfg       *rest.Config
	namespace string
}

// logRead is one read of the Pod log.
type logRead struct {
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	MBps    float64 `json:"MBps"`
}

// kubeletSide is what one path measured.
type kubeletSide struct {
	Logs        []logRead `json:"logs"`
	LogsMBps    float64   `json:"logsMBps"` // median of Logs
	Follow      []logRead `json:"follow"`
	FollowMBps  float64   `json:"followMBps"`
	ExecP50Ms   float64   `json:"execP50Ms"`
	ExecP99Ms   float64   `json:"execP99Ms"`
	ExecErrors  int       `json:"execErrors"`
	PortForward []logRead `json:"portForward"`
	PortFwdMBps float64   `json:"portForwardMBps"`      // median of PortForward
	SyncerCPULo float64   `json:"syncerCPUSecondsLogs"` // syncer CPU over this path's log reads (0 for direct, by design)
}

// kubeletStreams is the held-streams phase: the syncer's memory and goroutines before the
// streams open, while they are held and after they close.
type kubeletStreams struct {
	Streams               int     `json:"streams"`
	HeldSeconds           float64 `json:"heldSeconds"`
	RSSBeforeBytes        int64   `json:"rssBeforeBytes"`
	RSSDuringBytes        int64   `json:"rssDuringBytes"` // the largest sample while held
	RSSAfterBytes         int64   `json:"rssAfterBytes"`
	RSSPerStreamBytes     float64 `json:"rssPerStreamBytes"`
	HeapInuseBeforeBytes  int64   `json:"heapInuseBeforeBytes"` // after a GC, with the stacks
	HeapInuseDuringBytes  int64   `json:"heapInuseDuringBytes"`
	HeapInuseAfterBytes   int64   `json:"heapInuseAfterBytes"`
	HeapPerStreamBytes    float64 `json:"heapPerStreamBytes"`
	GoroutinesBefore      int     `json:"goroutinesBefore"`
	GoroutinesDuring      int     `json:"goroutinesDuring"`
	GoroutinesAfter       int     `json:"goroutinesAfter"`
	GoroutinesPerStream   float64 `json:"goroutinesPerStream"`
	GoroutinesLeftover    int     `json:"goroutinesLeftover"` // after − before, once the open-streams gauge is 0
	LineReachedAllStreams bool    `json:"lineReachedAllStreams"`
}

type kubeletResult struct {
	Command       string `json:"command"`
	Cores         int    `json:"cores"`
	LogBytes      int64  `json:"logBytes"`
	Execs         int    `json:"execs"`
	PortForwardMB int    `json:"portForwardMB"`
	// The syncer's hop alone: exec from the tenant apiserver's kubelet client certificate
	// straight to vc-syncer's kubelet API (then the super apiserver and kwok).
	ExecKubeletAPIP50Ms  float64            `json:"execKubeletAPIP50Ms"`
	ExecKubeletAPIP99Ms  float64            `json:"execKubeletAPIP99Ms"`
	ExecKubeletAPIErrors int                `json:"execKubeletAPIErrors"`
	Tenant               kubeletSide        `json:"tenant"`
	Direct               kubeletSide        `json:"direct"`
	Streams              kubeletStreams     `json:"streams"`
	Ratios               map[string]float64 `json:"ratios"`  // tenant/direct throughput: logs, follow, portForward
	Targets              map[string]bool    `json:"targets"` // the targets, met or not
	SyncerRSS0           int64              `json:"syncerRSSIdleBytes"`
}

func runKubelet(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("kubelet", flag.ExitOnError)
	var c kubeletConfig
	fs.IntVar(&c.logMB, "log-mb", 100, "size of the Pod log read whole (kubectl logs) and followed (logs -f), in MB")
	fs.IntVar(&c.pfMB, "port-forward-mb", 100, "bytes read through a port-forward (kubectl's WebSocket tunnel) from a local server kwok connects the Pod's port to, in MB")
	fs.IntVar(&c.reps, "reps", 3, "reads of the log per path and mode; the median counts")
	fs.IntVar(&c.execs, "execs", 200, "short exec commands (true) per path, alternating paths")
	fs.IntVar(&c.streams, "streams", 100, "concurrent follow streams held open through the tenant path")
	fs.DurationVar(&c.hold, "hold", 60*time.Second, "how long the streams are held")
	fs.StringVar(&c.out, "out", "docs/bench/kubelet", "directory for result.json, result.md and the logs")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "give up on one phase after this long")
	_ = fs.Parse(args)
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	src, err := startByteSource(int64(c.pfMB) * 1e6)
	if err != nil {
		return err
	}
	defer src.Close()
	env, err := localcluster.Start(ctx, localcluster.SuperOptions{Options: localcluster.Options{Progress: func(s string) { logf("%s", s) }},
		Nodes: 1, KubeletExec: true, KubeletPortForwardTarget: src.Addr().String()}, 1)
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	bin, err := buildSyncer(ctx)
	if err != nil {
		return err
	}
	kubeletAddr, pprofAddr, metricsAddr := freeAddr(), freeAddr(), freeAddr()
	p, err := startSyncer(ctx, env, bin, true, filepath.Join(c.out, "syncer.log"),
		"--kubelet-bind-address", kubeletAddr, "--pprof-bind-address", pprofAddr, "--metrics-bind-address", metricsAddr, "--metrics-secure=false",
		"--kubelet-max-streams-per-tenant", strconv.Itoa(c.streams+8))
	if err != nil {
		return err
	}
	defer p.stop()
	if err := registerTenants(ctx, env); err != nil {
		return err
	}
	tc := env.Tenants[0]
	tenant, direct, err := kubeletPaths(ctx, env, tc)
	if err != nil {
		return err
	}
	r := kubeletResult{Command: "go run ./test/bench kubelet " + strings.Join(args, " "), Cores: runtime.NumCPU(), Execs: c.execs, PortForwardMB: c.pfMB, Ratios: map[string]float64{}, Targets: map[string]bool{}}
	r.SyncerRSS0, _ = currentRSS(p.pid())

	logf("writing a %d MB Pod log", c.logMB)
	if r.LogBytes, err = writeBigLog(env.Super, c.logMB); err != nil {
		return err
	}
	for _, follow := range []bool{false, true} {
		for i := 0; i < c.reps; i++ {
			for _, side := range []struct {
				path kubeletPath
				res  *kubeletSide
			}{{direct, &r.Direct}, {tenant, &r.Tenant}} {
				cpu0, _ := cpuSeconds(p.pid())
				lr, err := readLog(ctx, side.path, follow, r.LogBytes, c.timeout)
				if err != nil {
					return fmt.Errorf("%s log read (follow=%v): %w", side.path.name, follow, err)
				}
				cpu1, _ := cpuSeconds(p.pid())
				if side.path.name == "tenant" {
					side.res.SyncerCPULo += cpu1 - cpu0
				}
				logf("%s logs follow=%v: %d bytes in %.2f s (%.1f MB/s)", side.path.name, follow, lr.Bytes, lr.Seconds, lr.MBps)
				if follow {
					side.res.Follow = append(side.res.Follow, lr)
				} else {
					side.res.Logs = append(side.res.Logs, lr)
				}
			}
		}
	}
	for _, s := range []*kubeletSide{&r.Direct, &r.Tenant} {
		s.LogsMBps, s.FollowMBps = medianMBps(s.Logs), medianMBps(s.Follow)
	}
	// The streams phase follows a one-line log (a follow of an empty log gets no response
	// headers before its first line, from kwok as from a kubelet): the held streams read that
	// line and the one written to prove they are live.
	if err := os.Truncate(env.Super.PodLogFile(), 0); err != nil {
		return err
	}
	if err := env.Super.AppendPodLog("streams follow from here"); err != nil {
		return err
	}

	logf("exec: %d × `true` per path", c.execs)
	// A third path isolates the syncer's hop: the tenant apiserver's kubelet client
	// certificate straight to vc-syncer's kubelet API (SPDY, as an apiserver of this version
	// speaks to a kubelet), then the super apiserver and kwok.
	hop := kubeletHop{url: "https://" + kubeletAddr, cert: tc.KubeletClientCert, key: tc.KubeletClientKey, namespace: tenant.namespace}
	var lat [3][]float64
	errCount := []*int{&r.Direct.ExecErrors, &r.Tenant.ExecErrors, &r.ExecKubeletAPIErrors}
	for i := 0; i < c.execs; i++ {
		for j, run := range []func() (time.Duration, error){
			func() (time.Duration, error) { return execOnce(ctx, direct) },
			func() (time.Duration, error) { return execOnce(ctx, tenant) },
			func() (time.Duration, error) { return hop.exec(ctx) },
		} {
			d, err := run()
			if err != nil {
				*errCount[j]++
				logf("exec on path %d: %v", j, err)
				continue
			}
			lat[j] = append(lat[j], d.Seconds()*1000)
		}
	}
	for j := range lat {
		slices.Sort(lat[j])
	}
	r.Direct.ExecP50Ms, r.Direct.ExecP99Ms = percentile(lat[0], 0.5), percentile(lat[0], 0.99)
	r.Tenant.ExecP50Ms, r.Tenant.ExecP99Ms = percentile(lat[1], 0.5), percentile(lat[1], 0.99)
	r.ExecKubeletAPIP50Ms, r.ExecKubeletAPIP99Ms = percentile(lat[2], 0.5), percentile(lat[2], 0.99)

	logf("port-forward: %d MB per read, %d reads per path", c.pfMB, c.reps)
	for i := 0; i < c.reps; i++ {
		for _, side := range []struct {
			path kubeletPath
			res  *kubeletSide
		}{{direct, &r.Direct}, {tenant, &r.Tenant}} {
			pr, err := readPortForward(ctx, side.path, int64(c.pfMB)*1e6, c.timeout)
			if err != nil {
				return fmt.Errorf("%s port-forward: %w", side.path.name, err)
			}
			logf("%s port-forward: %d bytes in %.2f s (%.1f MB/s)", side.path.name, pr.Bytes, pr.Seconds, pr.MBps)
			side.res.PortForward = append(side.res.PortForward, pr)
		}
	}
	for _, s := range []*kubeletSide{&r.Direct, &r.Tenant} {
		s.PortFwdMBps = medianMBps(s.PortForward)
	}

	logf("holding %d follow streams through the tenant path for %s", c.streams, c.hold)
	if r.Streams, err = holdStreams(ctx, env.Super, tenant, tc.Name, p, pprofAddr, metricsAddr, c); err != nil {
		return err
	}

	r.Ratios["logs"] = ratio(r.Tenant.LogsMBps, r.Direct.LogsMBps)
	r.Ratios["follow"] = ratio(r.Tenant.FollowMBps, r.Direct.FollowMBps)
	r.Ratios["portForward"] = ratio(r.Tenant.PortFwdMBps, r.Direct.PortFwdMBps)
	r.Targets["logsThroughputAtLeast0.8xDirect"] = r.Ratios["logs"] >= 0.8 && r.Ratios["follow"] >= 0.8
	r.Targets["portForwardThroughputAtLeast0.8xDirect"] = r.Ratios["portForward"] >= 0.8
	r.Targets["execP99WithinDirectPlus10ms"] = r.Tenant.ExecErrors == 0 && r.Tenant.ExecP99Ms <= r.Direct.ExecP99Ms+10
	r.Targets["rssPerStreamAtMost64KB"] = r.Streams.RSSPerStreamBytes <= 64<<10
	r.Targets["noGoroutineLeftAfterClose"] = r.Streams.GoroutinesLeftover <= 0
	if err := writeResultJSON(c.out, r); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.out, "result.md"), []byte(kubeletMarkdown(r)), 0o644)
}

// kubeletPaths creates a Pod in the tenant, waits until it is Running on a vNode that
// advertises the syncer's kubelet API, and returns the two paths to its container.
func kubeletPaths(ctx context.Context, env *localcluster.Environment, tc *localcluster.ControlPlane) (tenant, direct kubeletPath, err error) {
	const ns, name = "bench-kubelet", "app"
	if err = createNamespace(ctx, tc.Client, ns); err != nil {
		return
	}
	if _, err = tc.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	}, metav1.CreateOptions{}); err != nil {
		return
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := tc.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || p.Status.Phase != corev1.PodRunning || p.Spec.NodeName == "" {
			return false, nil
		}
		n, err := tc.Client.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		return err == nil && n.Status.DaemonEndpoints.KubeletEndpoint.Port != 0, nil
	})
	if err != nil {
		return tenant, direct, fmt.Errorf("tenant Pod not Running on a vNode with the kubelet API: %w", err)
	}
	cl, err := client.New(env.Super.RESTConfig, client.Options{Scheme: app.Scheme()})
	if err != nil {
		return
	}
	var t tenancyv1alpha1.Tenant
	if err = cl.Get(ctx, client.ObjectKey{Namespace: "vc-syncer-system", Name: tc.Name}, &t); err != nil {
		return
	}
	tenant = kubeletPath{name: "tenant", cs: tc.Client, cfg: tc.RESTConfig, namespace: ns}
	direct = kubeletPath{name: "direct", cs: env.Super.Client, cfg: env.Super.RESTConfig, namespace: conversion.SuperNamespace(tc.Name, string(t.UID), ns)}
	return tenant, direct, nil
}

// writeBigLog fills the super cluster's Pod log with about mb MB of 1000-byte lines and
// returns the bytes a reader receives (the lines without the CRI log prefix).
func writeBigLog(super *localcluster.ControlPlane, mb int) (int64, error) {
	line := strings.Repeat("x", 999)
	batch := make([]string, 1000)
	for i := range batch {
		batch[i] = line
	}
	var n int64
	for n < int64(mb)*1e6 {
		if err := super.AppendPodLog(batch...); err != nil {
			return 0, err
		}
		n += int64(len(batch) * (len(line) + 1))
	}
	return n, nil
}

// readLog reads the Pod's whole log through path (with follow, until want bytes arrived)
// and returns its throughput.
func readLog(ctx context.Context, path kubeletPath, follow bool, want int64, timeout time.Duration) (logRead, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	rc, err := path.cs.CoreV1().Pods(path.namespace).GetLogs("app", &corev1.PodLogOptions{Container: "app", Follow: follow}).Stream(ctx)
	if err != nil {
		return logRead{}, err
	}
	defer rc.Close()
	var n int64
	if follow {
		n, err = io.CopyN(io.Discard, rc, want)
	} else {
		n, err = io.Copy(io.Discard, rc)
	}
	s := time.Since(start).Seconds()
	if err != nil {
		return logRead{}, fmt.Errorf("after %d bytes: %w", n, err)
	}
	if n < want {
		return logRead{}, fmt.Errorf("read %d bytes, the log has %d", n, want)
	}
	return logRead{Bytes: n, Seconds: s, MBps: float64(n) / 1e6 / s}, nil
}

func medianMBps(reads []logRead) float64 {
	v := make([]float64, 0, len(reads))
	for _, r := range reads {
		v = append(v, r.MBps)
	}
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	return v[len(v)/2]
}

// execOnce runs `true` in the Pod's container through path as kubectl does (WebSocket, SPDY
// as the fallback) and returns the round trip, executor setup included.
func execOnce(ctx context.Context, path kubeletPath) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	req := path.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(path.namespace).Name("app").SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: "app", Command: []string{"true"}, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	spdy, err := remotecommand.NewSPDYExecutor(path.cfg, http.MethodPost, req.URL())
	if err != nil {
		return 0, err
	}
	ws, err := remotecommand.NewWebSocketExecutor(path.cfg, http.MethodGet, req.URL().String())
	if err != nil {
		return 0, err
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(error) bool { return true })
	if err != nil {
		return 0, err
	}
	return streamSince(ctx, ex, start)
}

// startByteSource listens on a loopback port and answers every connection with n bytes, then
// closes it: the server kwok connects every forwarded port of every super Pod to.
func startByteSource(n int64) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				for left := n; left > 0; left -= int64(len(chunk)) {
					if _, err := conn.Write(chunk[:min(left, int64(len(chunk)))]); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln, nil
}

// readPortForward forwards a local port to the Pod's port 8080 through path as kubectl does
// (its WebSocket tunnel) and reads want bytes from it; the time counts from the dial of the
// tunnel to the last byte.
func readPortForward(ctx context.Context, path kubeletPath, want int64, timeout time.Duration) (logRead, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	u := path.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(path.namespace).Name("app").SubResource("portforward").URL()
	dialer, err := portforward.NewSPDYOverWebsocketDialerForStreaming(u, path.cfg)
	if err != nil {
		return logRead{}, err
	}
	ready := make(chan struct{})
	var errOut bytes.Buffer
	var mu sync.Mutex
	fw, err := portforward.NewOnAddressesForStreamingWithContext(ctx, dialer, []string{"127.0.0.1"}, []string{"0:8080"}, ready, io.Discard, lockedWriter{&mu, &errOut})
	if err != nil {
		return logRead{}, err
	}
	done := make(chan error, 1)
	go func() { done <- fw.ForwardPorts() }()
	ended := false // ForwardPorts returned
	defer func() {
		cancel()
		if !ended {
			_ = <-done //nolint:staticcheck // the error of a forward this function cancelled tells nothing
		}
	}()
	select {
	case <-ready:
	case err := <-done:
		ended = true
		return logRead{}, fmt.Errorf("port-forward ended before it was ready: %w", err)
	case <-ctx.Done():
		return logRead{}, ctx.Err()
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) != 1 {
		return logRead{}, fmt.Errorf("forwarded ports %v: %w", ports, err)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(ports[0].Local))))
	if err != nil {
		return logRead{}, err
	}
	defer conn.Close()
	n, err := io.CopyN(io.Discard, conn, want)
	s := time.Since(start).Seconds()
	if err != nil {
		mu.Lock()
		defer mu.Unlock()
		return logRead{}, fmt.Errorf("read %d of %d bytes: %w (port-forward errors: %q)", n, want, err, errOut.String())
	}
	return logRead{Bytes: n, Seconds: s, MBps: float64(n) / 1e6 / s}, nil
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// streamSince runs ex's stream with stdout and stderr and returns the time since start.
func streamSince(ctx context.Context, ex remotecommand.Executor, start time.Time) (time.Duration, error) {
	var stdout, stderr bytes.Buffer
	if err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr}); err != nil {
		return 0, fmt.Errorf("%w (stderr %q)", err, stderr.String())
	}
	return time.Since(start), nil
}

// kubeletHop is the tenant apiserver's side of vc-syncer's kubelet API: its URL and the
// apiserver's kubelet client certificate.
type kubeletHop struct {
	url, namespace string
	cert, key      []byte
}

// exec runs `true` in the Pod's container through the kubelet API over SPDY and returns the
// round trip, executor setup included.
func (h kubeletHop) exec(ctx context.Context) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	u, err := url.Parse(h.url + "/exec/" + h.namespace + "/app/app?command=true&output=1&error=1")
	if err != nil {
		return 0, err
	}
	//nolint:gosec // the bench trusts the syncer's self-signed serving certificate
	cfg := &rest.Config{Host: h.url, TLSClientConfig: rest.TLSClientConfig{Insecure: true, CertData: h.cert, KeyData: h.key}}
	ex, err := remotecommand.NewSPDYExecutor(cfg, http.MethodPost, u)
	if err != nil {
		return 0, err
	}
	return streamSince(ctx, ex, start)
}

// memSample is the syncer's RSS, heap in use with stacks (after a GC) and goroutines.
type memSample struct {
	rss, heap  int64
	goroutines int
}

func sampleMem(ctx context.Context, pid int, pprofAddr string) (memSample, error) {
	// The bench's own idle keep-alive connections to the syncer's metrics and pprof servers
	// would count as goroutines of the syncer's.
	http.DefaultClient.CloseIdleConnections()
	st, err := heapStats(ctx, pprofAddr)
	if err != nil {
		return memSample{}, err
	}
	g, err := goroutines(ctx, pprofAddr)
	if err != nil {
		return memSample{}, err
	}
	rss, err := currentRSS(pid)
	return memSample{rss: rss, heap: st["HeapInuse"] + st["Stack"], goroutines: g}, err
}

// openStreams returns the syncer's vcsyncer_kubelet_open_streams for tenant.
func openStreams(ctx context.Context, metricsAddr, tenant string) (float64, error) {
	ss, err := scrape(ctx, "http://"+metricsAddr+"/metrics")
	if err != nil {
		return 0, err
	}
	for _, s := range ss {
		if s.name == "vcsyncer_kubelet_open_streams" && s.labels["tenant"] == tenant {
			return s.value, nil
		}
	}
	return 0, nil
}

// holdStreams opens c.streams follow streams of the Pod's log through the tenant path, waits
// until the syncer counts them all open, writes one line and waits until every stream read
// it, holds them c.hold while sampling the syncer's memory, closes them and waits until the
// syncer's gauge is back at 0 and its goroutines at their level before (or 60 s).
func holdStreams(ctx context.Context, super *localcluster.ControlPlane, path kubeletPath, tenant string, p *syncerProc,
	pprofAddr, metricsAddr string, c kubeletConfig) (kubeletStreams, error) {
	res := kubeletStreams{Streams: c.streams}
	before, err := sampleMem(ctx, p.pid(), pprofAddr)
	if err != nil {
		return res, err
	}
	res.RSSBeforeBytes, res.HeapInuseBeforeBytes, res.GoroutinesBefore = before.rss, before.heap, before.goroutines
	var gb strings.Builder
	_ = saveURLTo(ctx, "http://"+pprofAddr+"/debug/pprof/goroutine?debug=1", &gb)
	goroutinesBefore := gb.String()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	const marker = "held-streams-are-live"
	var got atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, c.streams)
	for i := 0; i < c.streams; i++ {
		rc, err := path.cs.CoreV1().Pods(path.namespace).GetLogs("app", &corev1.PodLogOptions{Container: "app", Follow: true}).Stream(sctx)
		if err != nil {
			return res, fmt.Errorf("stream %d: %w", i, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer rc.Close()
			var seen []byte
			buf := make([]byte, 4096)
			for {
				n, err := rc.Read(buf)
				if n > 0 && !bytes.Contains(seen, []byte(marker)) {
					seen = append(seen, buf[:n]...)
					if bytes.Contains(seen, []byte(marker)) {
						got.Add(1)
					}
				}
				if err != nil {
					if sctx.Err() == nil {
						errs <- err
					}
					return
				}
			}
		}()
	}
	var open float64
	var scrapeErr error
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, c.timeout, true, func(ctx context.Context) (bool, error) {
		open, scrapeErr = openStreams(ctx, metricsAddr, tenant)
		return scrapeErr == nil && int(open) == c.streams, nil
	}); err != nil {
		return res, fmt.Errorf("the syncer counts %v open streams of %d (last scrape error: %w): %w", open, c.streams, scrapeErr, err)
	}
	if err := super.AppendPodLog(marker); err != nil {
		return res, err
	}
	start := time.Now()
	res.LineReachedAllStreams = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return int(got.Load()) == c.streams, nil
	}) == nil
	heapSaved := false // a heap profile while the streams are held: where their memory is
	for time.Since(start) < c.hold {
		m, err := sampleMem(ctx, p.pid(), pprofAddr)
		if err != nil {
			return res, err
		}
		res.RSSDuringBytes, res.HeapInuseDuringBytes = max(res.RSSDuringBytes, m.rss), max(res.HeapInuseDuringBytes, m.heap)
		res.GoroutinesDuring = max(res.GoroutinesDuring, m.goroutines)
		if !heapSaved {
			heapSaved = saveProfile(ctx, pprofAddr, "heap?gc=1", filepath.Join(c.out, "streams-heap.pprof")) == nil
		}
		select {
		case err := <-errs:
			return res, fmt.Errorf("a held stream ended: %w", err)
		case <-time.After(10 * time.Second):
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
	res.HeldSeconds = time.Since(start).Seconds()
	cancel()
	wg.Wait()
	// Up to 2 minutes: the kubelet API closes a tenant apiserver's idle keep-alive
	// connection after 90 s (IdleTimeout), and its goroutines count until then.
	var after memSample
	_ = wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := openStreams(ctx, metricsAddr, tenant)
		if err != nil || n != 0 {
			return false, nil
		}
		after, err = sampleMem(ctx, p.pid(), pprofAddr)
		return err == nil && after.goroutines <= before.goroutines, nil
	})
	res.RSSAfterBytes, res.HeapInuseAfterBytes, res.GoroutinesAfter = after.rss, after.heap, after.goroutines
	// The goroutines before and after, to name any left.
	for name, prof := range map[string]string{"goroutines-before.txt": goroutinesBefore, "goroutines-after.txt": ""} {
		if prof == "" {
			var b strings.Builder
			_ = saveURLTo(ctx, "http://"+pprofAddr+"/debug/pprof/goroutine?debug=1", &b)
			prof = b.String()
		}
		_ = os.WriteFile(filepath.Join(c.out, name), []byte(prof), 0o644)
	}
	n := float64(c.streams)
	res.RSSPerStreamBytes = float64(res.RSSDuringBytes-res.RSSBeforeBytes) / n
	res.HeapPerStreamBytes = float64(res.HeapInuseDuringBytes-res.HeapInuseBeforeBytes) / n
	res.GoroutinesPerStream = float64(res.GoroutinesDuring-res.GoroutinesBefore) / n
	res.GoroutinesLeftover = res.GoroutinesAfter - res.GoroutinesBefore
	return res, nil
}

func kubeletMarkdown(r kubeletResult) string {
	var b strings.Builder
	mb := func(v int64) string { return fmt.Sprintf("%.1f MB", float64(v)/1e6) }
	kb := func(v float64) string { return fmt.Sprintf("%.1f KB", v/1024) }
	ok := func(v bool) string {
		if v {
			return "met"
		}
		return "**missed**"
	}
	fmt.Fprintf(&b, "# Kubelet API: tenant path vs straight from the super cluster\n\n`%s` on %d cores. The tenant path is "+
		"tenant apiserver → vc-syncer's kubelet API → super apiserver → kwok; direct is super apiserver → kwok, the same "+
		"container of the same super Pod. Every component runs on this machine, so the tenant path's extra hops "+
		"share its CPUs with the reader.\n\n", r.Command, r.Cores)
	fmt.Fprintf(&b, "| | direct | tenant | tenant/direct | target |\n|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| `logs` of a %s log (median of %d), MB/s | %.1f | %.1f | %.2f | ≥ 0.8 (%s) |\n", mb(r.LogBytes), len(r.Tenant.Logs),
		r.Direct.LogsMBps, r.Tenant.LogsMBps, r.Ratios["logs"], ok(r.Targets["logsThroughputAtLeast0.8xDirect"]))
	fmt.Fprintf(&b, "| `logs -f` of the same log, MB/s | %.1f | %.1f | %.2f | ≥ 0.8 |\n", r.Direct.FollowMBps, r.Tenant.FollowMBps, r.Ratios["follow"])
	fmt.Fprintf(&b, "| port-forward read of %d MB (median of %d), MB/s | %.1f | %.1f | %.2f | ≥ 0.8 (%s) |\n", r.PortForwardMB, len(r.Tenant.PortForward),
		r.Direct.PortFwdMBps, r.Tenant.PortFwdMBps, r.Ratios["portForward"], ok(r.Targets["portForwardThroughputAtLeast0.8xDirect"]))
	fmt.Fprintf(&b, "| exec `true` p50 (%d each), ms | %.1f | %.1f | | |\n", r.Execs, r.Direct.ExecP50Ms, r.Tenant.ExecP50Ms)
	fmt.Fprintf(&b, "| exec `true` p99, ms | %.1f | %.1f | +%.1f ms | ≤ direct + 10 ms (%s) |\n", r.Direct.ExecP99Ms, r.Tenant.ExecP99Ms,
		r.Tenant.ExecP99Ms-r.Direct.ExecP99Ms, ok(r.Targets["execP99WithinDirectPlus10ms"]))
	fmt.Fprintf(&b, "| exec errors | %d | %d | | |\n\n", r.Direct.ExecErrors, r.Tenant.ExecErrors)
	fmt.Fprintf(&b, "The syncer's hop alone (the tenant apiserver's kubelet client certificate straight to vc-syncer's kubelet "+
		"API, SPDY, then the super apiserver and kwok): exec p50 %.1f ms, p99 %.1f ms (%+.1f / %+.1f ms against direct; %d errors); "+
		"the rest of the tenant path's time is the tenant apiserver's.\n\n",
		r.ExecKubeletAPIP50Ms, r.ExecKubeletAPIP99Ms, r.ExecKubeletAPIP50Ms-r.Direct.ExecP50Ms, r.ExecKubeletAPIP99Ms-r.Direct.ExecP99Ms, r.ExecKubeletAPIErrors)
	fmt.Fprintf(&b, "The syncer spent %.2f CPU seconds on the tenant path's %d log reads (%.2f ms per MB).\n\n",
		r.Tenant.SyncerCPULo, len(r.Tenant.Logs)+len(r.Tenant.Follow),
		1000*r.Tenant.SyncerCPULo/(float64(r.LogBytes)/1e6*float64(len(r.Tenant.Logs)+len(r.Tenant.Follow))))
	s := r.Streams
	fmt.Fprintf(&b, "## %d follow streams held %.0f s through the tenant path\n\n", s.Streams, s.HeldSeconds)
	fmt.Fprintf(&b, "| syncer | before | held (largest sample) | after close | per stream | target |\n|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| RSS | %s | %s | %s | %s | ≤ 64 KB (%s) |\n", mb(s.RSSBeforeBytes), mb(s.RSSDuringBytes), mb(s.RSSAfterBytes),
		kb(s.RSSPerStreamBytes), ok(r.Targets["rssPerStreamAtMost64KB"]))
	fmt.Fprintf(&b, "| heap in use + stacks (after a GC) | %s | %s | %s | %s | |\n", mb(s.HeapInuseBeforeBytes), mb(s.HeapInuseDuringBytes),
		mb(s.HeapInuseAfterBytes), kb(s.HeapPerStreamBytes))
	fmt.Fprintf(&b, "| goroutines | %d | %d | %d | %.1f | none left (%s: %+d) |\n\n", s.GoroutinesBefore, s.GoroutinesDuring, s.GoroutinesAfter,
		s.GoroutinesPerStream, ok(r.Targets["noGoroutineLeftAfterClose"]), s.GoroutinesLeftover)
	fmt.Fprintf(&b, "A line written while they were held reached every stream: %v.\n", s.LineReachedAllStreams)
	return b.String()
}
