package kubeletproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
)

// superMetrics is a super Node's resource metrics with Pods of tenant-a (web/frontend,
// memory 1000), tenant-b (web/frontend, memory 2000) and an unsynced Pod of the super
// cluster itself (memory 4000), node totals and families a tenant must not see.
func superMetrics() string {
	a := conversion.SuperNamespace("tenant-a", "tuid-a", "web")
	b := conversion.SuperNamespace("tenant-b", "tuid-b", "web")
	var s strings.Builder
	s.WriteString("# HELP scrape_error 1 if there was an error while getting metrics from the node, 0 otherwise\n# TYPE scrape_error gauge\nscrape_error 0\n")
	s.WriteString("# TYPE container_cpu_usage_seconds_total counter\n")
	for ns, v := range map[string]string{a: "1.5", b: "2.5", "kube-system": "4.5"} {
		fmt.Fprintf(&s, "container_cpu_usage_seconds_total{container=\"app\",namespace=%q,pod=\"frontend\",uid=\"super-uid\"} %s 1700000000000\n", ns, v)
	}
	s.WriteString("# TYPE container_memory_working_set_bytes gauge\n")
	for ns, v := range map[string]string{a: "1000", b: "2000", "kube-system": "4000"} {
		fmt.Fprintf(&s, "container_memory_working_set_bytes{container=\"app\",namespace=%q,pod=\"frontend\"} %s 1700000000000\n", ns, v)
	}
	s.WriteString("# TYPE container_start_time_seconds gauge\n")
	fmt.Fprintf(&s, "container_start_time_seconds{container=\"app\",namespace=%q,pod=\"frontend\"} 1.6e+09\n", a)
	s.WriteString("# TYPE pod_cpu_usage_seconds_total counter\n")
	for ns, v := range map[string]string{a: "1.5", b: "2.5", "kube-system": "4.5"} {
		fmt.Fprintf(&s, "pod_cpu_usage_seconds_total{namespace=%q,pod=\"frontend\"} %s 1700000000000\n", ns, v)
	}
	s.WriteString("# TYPE pod_memory_working_set_bytes gauge\n")
	for ns, v := range map[string]string{a: "1000", b: "2000", "kube-system": "4000"} {
		fmt.Fprintf(&s, "pod_memory_working_set_bytes{namespace=%q,pod=\"frontend\"} %s 1700000000000\n", ns, v)
	}
	s.WriteString("# TYPE node_cpu_usage_seconds_total counter\nnode_cpu_usage_seconds_total 99.5 1700000000000\n")
	s.WriteString("# TYPE node_memory_working_set_bytes gauge\nnode_memory_working_set_bytes 99999 1700000000000\n")
	s.WriteString("# TYPE node_swap_usage_bytes gauge\nnode_swap_usage_bytes 77777\n")
	fmt.Fprintf(&s, "# TYPE pod_latency_seconds histogram\npod_latency_seconds_bucket{namespace=%q,pod=\"frontend\",le=\"+Inf\"} 1\npod_latency_seconds_sum{namespace=%q,pod=\"frontend\"} 3\npod_latency_seconds_count{namespace=%q,pod=\"frontend\"} 1\n", a, a, a)
	return s.String()
}

// statsFixture is a fixture whose super apiserver serves body as the resource metrics of
// every Node (kwok's path), and whose tenants' Pods run on node n1.
type statsFixture struct {
	*fixture
	mu   sync.Mutex
	saw  []*http.Request
	body string
}

func newStatsFixture(t *testing.T) *statsFixture {
	sf := &statsFixture{body: superMetrics()}
	super := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sf.mu.Lock()
		sf.saw = append(sf.saw, r.Clone(r.Context()))
		body := sf.body
		sf.mu.Unlock()
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(super.Close)
	sf.fixture = newFixtureWith(t, func(o *Options) {
		o.Super = &rest.Config{Host: super.URL, BearerToken: "super-token", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
		o.SuperMetricsPath = "/metrics/nodes/{nodeName}/metrics/resource"
		o.NodeStats = true
	})
	for _, p := range []*corev1.Pod{sf.aPod, sf.aPod2, sf.bPod} {
		p.Spec.NodeName = "n1"
	}
	pods := map[string][]*corev1.Pod{"tenant-a": {sf.aPod, sf.aPod2}, "tenant-b": {sf.bPod}}
	for i := range sf.tenants {
		name := sf.tenants[i].Name
		sf.tenants[i].Pods = func() ([]*corev1.Pod, error) { return pods[name], nil }
	}
	return sf
}

func (sf *statsFixture) seenStats() []*http.Request {
	sf.mu.Lock()
	defer sf.mu.Unlock()
	return append([]*http.Request(nil), sf.saw...)
}

// viaNode is the header a tenant apiserver's nodes/<node>/proxy/<path> sets.
func viaNode(node, path string) map[string]string {
	return map[string]string{"X-Forwarded-Uri": "/api/v1/nodes/" + node + "/proxy" + path, "Authorization": "Bearer tenant-user-token"}
}

func TestMetricsResourceShowsOnlyTheTenantsPodsUnderTenantNames(t *testing.T) {
	sf := newStatsFixture(t)
	before := metrics.KubeletRequests("tenant-a", EndpointMetricsResource, resultForwarded)
	sent := metrics.KubeletBytesCount("tenant-a", EndpointMetricsResource, metrics.KubeletToTenant)
	w := sf.do("/metrics/resource", sf.certA, viaNode("n1", "/metrics/resource"))
	if w.Code != http.StatusOK {
		t.Fatalf("code %d body %q", w.Code, w.Body.String())
	}
	got := w.Body.String()
	for _, want := range []string{
		`container_memory_working_set_bytes{container="app",namespace="web",pod="frontend"} 1000 1700000000000`,
		`container_cpu_usage_seconds_total{container="app",namespace="web",pod="frontend"} 1.5 1700000000000`,
		`pod_memory_working_set_bytes{namespace="web",pod="frontend"} 1000 1700000000000`,
		// The node's totals would show the other tenants' usage: the tenant's own sum instead.
		"node_memory_working_set_bytes 1000 1700000000000",
		"node_cpu_usage_seconds_total 1.5 1700000000000",
		"scrape_error 0",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("metrics lack %q:\n%s", want, got)
		}
	}
	for _, leak := range []string{"2000", "2.5", "4000", "4.5", "99999", "99.5", "77777", "kube-system", "tenant-b", "tuid", "super-uid", "node_swap", "pod_latency", "uid="} {
		if strings.Contains(got, leak) {
			t.Errorf("metrics leak %q:\n%s", leak, got)
		}
	}
	saw := sf.seenStats()
	if len(saw) != 1 {
		t.Fatalf("super apiserver got %d requests, want 1", len(saw))
	}
	if want := "/api/v1/nodes/n1/proxy/metrics/nodes/n1/metrics/resource"; saw[0].URL.Path != want {
		t.Errorf("super path %q, want %q", saw[0].URL.Path, want)
	}
	if a := saw[0].Header.Get("Authorization"); a != "Bearer super-token" {
		t.Errorf("Authorization %q, want the syncer's own", a)
	}
	if d := metrics.KubeletRequests("tenant-a", EndpointMetricsResource, resultForwarded) - before; d != 1 {
		t.Errorf("vcsyncer_kubelet_requests_total{endpoint=metricsResource,result=forwarded} rose by %v, want 1", d)
	}
	if d := metrics.KubeletBytesCount("tenant-a", EndpointMetricsResource, metrics.KubeletToTenant) - sent; d != float64(len(got)) {
		t.Errorf("vcsyncer_kubelet_bytes_total{endpoint=metricsResource,direction=to_tenant} rose by %v, want %d", d, len(got))
	}
}

func TestStatsSummaryShowsOnlyTheTenantsPodsUnderTenantNames(t *testing.T) {
	sf := newStatsFixture(t)
	w := sf.do("/stats/summary?only_cpu_and_memory=true", sf.certB, viaNode("n1", "/stats/summary"))
	if w.Code != http.StatusOK {
		t.Fatalf("code %d body %q", w.Code, w.Body.String())
	}
	var s statsv1alpha1.Summary
	if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil {
		t.Fatalf("%v: %s", err, w.Body.String())
	}
	if s.Node.NodeName != "n1" || s.Node.Memory == nil || *s.Node.Memory.WorkingSetBytes != 2000 || s.Node.CPU == nil || *s.Node.CPU.UsageCoreNanoSeconds != 2_500_000_000 {
		t.Errorf("node %+v, want n1 with tenant-b's own usage (2000 bytes, 2.5 core-seconds)", s.Node)
	}
	if len(s.Pods) != 1 {
		t.Fatalf("pods %+v, want tenant-b's web/frontend only", s.Pods)
	}
	p := s.Pods[0]
	if p.PodRef != (statsv1alpha1.PodReference{Name: "frontend", Namespace: "web", UID: "uid-b1"}) {
		t.Errorf("podRef %+v", p.PodRef)
	}
	if p.Memory == nil || *p.Memory.WorkingSetBytes != 2000 || len(p.Containers) != 1 || p.Containers[0].Name != "app" ||
		p.Containers[0].Memory == nil || *p.Containers[0].Memory.WorkingSetBytes != 2000 ||
		p.Containers[0].CPU == nil || *p.Containers[0].CPU.UsageCoreNanoSeconds != 2_500_000_000 {
		t.Errorf("pod stats %s", w.Body.String())
	}
	if strings.Contains(w.Body.String(), "kube-system") || strings.Contains(w.Body.String(), "tenant-a") {
		t.Errorf("summary leaks: %s", w.Body.String())
	}
}

func TestStatsRefusals(t *testing.T) {
	cases := map[string]struct {
		path       string
		hdr        map[string]string
		method     string
		superBody  string
		wantCode   int
		wantReason string
		wantSuper  int
	}{
		"no node named (not through nodes/<node>/proxy)": {path: "/stats/summary", wantCode: 404, wantReason: reasonNoNode},
		"node with scheme and port":                      {path: "/stats/summary", hdr: viaNode("https:n1:10250", "/stats/summary"), wantCode: 404, wantReason: reasonNoNode},
		"node name of another path":                      {path: "/stats/summary", hdr: viaNode("n1", "/metrics/resource"), wantCode: 404, wantReason: reasonNoNode},
		"nodes/<node>/proxy nested in the header": {path: "/stats/summary", hdr: map[string]string{"X-Forwarded-Uri": "/api/v1/nodes/n1/proxy/nodes/n2/proxy/stats/summary"},
			wantCode: 404, wantReason: reasonNoNode},
		"header not of the apiserver's form": {path: "/stats/summary", hdr: map[string]string{"X-Forwarded-Uri": "/x/nodes/n1/proxy/stats/summary"},
			wantCode: 404, wantReason: reasonNoNode},
		"encoded node name":                  {path: "/metrics/resource", hdr: viaNode("n1%2Fx", "/metrics/resource"), wantCode: 404, wantReason: reasonNoNode},
		"POST":                               {path: "/stats/summary", method: http.MethodPost, hdr: viaNode("n1", "/stats/summary"), wantCode: 405, wantReason: reasonBadMethod},
		"trailing slash is another endpoint": {path: "/stats/summary/", hdr: viaNode("n1", "/stats/summary/"), wantCode: 404, wantReason: reasonBadPath},
		"super answers garbage": {path: "/metrics/resource", hdr: viaNode("n1", "/metrics/resource"), superBody: "{not prometheus\n",
			wantCode: 502, wantReason: reasonSuperError, wantSuper: 1},
		"super answers more than the cap": {path: "/metrics/resource", hdr: viaNode("n1", "/metrics/resource"),
			superBody: strings.Repeat("# a comment line of junk\n", MaxSuperMetricsBytes/24), wantCode: 502, wantReason: reasonSuperError, wantSuper: 1},
		"node without the tenant's Pods: zero usage, the super Node is not read": {path: "/metrics/resource", hdr: viaNode("n2", "/metrics/resource"),
			wantCode: 200, wantReason: resultForwarded},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sf := newStatsFixture(t)
			if tc.superBody != "" {
				sf.body = tc.superBody
			}
			endpoint := statsEndpoints[tc.path]
			if endpoint == "" {
				endpoint = "other"
			}
			before := metrics.KubeletRequests("tenant-a", endpoint, tc.wantReason)
			var w *httptest.ResponseRecorder
			if tc.method == http.MethodPost {
				w = sf.doMethod(http.MethodPost, tc.path, sf.certA, tc.hdr)
			} else {
				w = sf.do(tc.path, sf.certA, tc.hdr)
			}
			if w.Code != tc.wantCode {
				t.Errorf("code %d, want %d (body %q)", w.Code, tc.wantCode, w.Body.String())
			}
			if d := metrics.KubeletRequests("tenant-a", endpoint, tc.wantReason) - before; d != 1 {
				t.Errorf("vcsyncer_kubelet_requests_total{endpoint=%s,result=%s} rose by %v, want 1", endpoint, tc.wantReason, d)
			}
			if n := len(sf.seenStats()); n != tc.wantSuper {
				t.Errorf("super apiserver got %d requests, want %d", n, tc.wantSuper)
			}
			if strings.Contains(w.Body.String(), "99999") || strings.Contains(w.Body.String(), "frontend") {
				t.Errorf("body leaks: %q", w.Body.String())
			}
		})
	}
}

func TestSuperMetricsPathValidated(t *testing.T) {
	for _, p := range []string{"metrics", "/metrics/../pods", "/metrics?x=1", "/metrics/%2e%2e", "/a//b", "/a/./b"} {
		if ValidateSuperMetricsPath(p) == nil {
			t.Errorf("%q accepted", p)
		}
	}
	for _, p := range []string{DefaultSuperMetricsPath, "/metrics/nodes/{nodeName}/metrics/resource"} {
		if err := ValidateSuperMetricsPath(p); err != nil {
			t.Errorf("%q refused: %v", p, err)
		}
	}
}

func TestSuperMetricsURLIsDialledDirectlyWithoutTheToken(t *testing.T) {
	sf := newStatsFixture(t)
	u := sf.srv.opts.Super.Host + "/metrics/nodes/{nodeName}/metrics/resource"
	srv, err := New(func() Options { o := sf.srv.opts; o.SuperMetricsURL = u; return o }())
	if err != nil {
		t.Fatal(err)
	}
	sf.srv = srv
	w := sf.do("/metrics/resource", sf.certA, viaNode("n1", "/metrics/resource"))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `pod="frontend"`) {
		t.Fatalf("code %d body %q", w.Code, w.Body.String())
	}
	saw := sf.seenStats()
	if len(saw) != 1 || saw[0].URL.Path != "/metrics/nodes/n1/metrics/resource" || saw[0].Header.Get("Authorization") != "" {
		t.Errorf("super saw %d requests, first %v", len(saw), saw)
	}
	for _, bad := range []string{"http://x/metrics", "https:///metrics", "https://x/metrics?a=b", "https://u:p@x/metrics", "https://x/../metrics"} {
		if ValidateSuperMetricsURL(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestNodeStatsOffByDefault(t *testing.T) {
	sf := newStatsFixture(t)
	srv, err := New(func() Options { o := sf.srv.opts; o.NodeStats = false; return o }())
	if err != nil {
		t.Fatal(err)
	}
	sf.srv = srv
	for path, endpoint := range statsEndpoints {
		before := metrics.KubeletRequests("tenant-a", endpoint, reasonNodeStatsOff)
		w := sf.do(path, sf.certA, viaNode("n1", path))
		if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "--kubelet-node-stats") {
			t.Errorf("%s: code %d body %q, want 404 naming --kubelet-node-stats", path, w.Code, w.Body.String())
		}
		if d := metrics.KubeletRequests("tenant-a", endpoint, reasonNodeStatsOff) - before; d != 1 {
			t.Errorf("%s: vcsyncer_kubelet_requests_total{result=node_stats_off} rose by %v, want 1", path, d)
		}
	}
	if n := len(sf.seenStats()); n != 0 {
		t.Errorf("the super cluster was asked %d times, want never", n)
	}
}

// TestNodeReadsAreShared: requests for one Node that arrive while its read is in flight
// share that read; reads of different Nodes are bounded by maxNodeReads.
func TestNodeReadsAreShared(t *testing.T) {
	var n nodeReads
	var reads, inFlight, most atomic.Int32
	release := make(chan struct{})
	fetch := func(context.Context, string) (map[string]*dto.MetricFamily, error) { //nolint:unparam // nodeReads.read's fetch signature
		reads.Add(1)
		cur := inFlight.Add(1)
		for {
			m := most.Load()
			if cur <= m || most.CompareAndSwap(m, cur) {
				break
			}
		}
		<-release
		inFlight.Add(-1)
		return emptyNodeFamilies(), nil
	}
	var wg, arrived sync.WaitGroup
	for i := 0; i < 3*maxNodeReads; i++ {
		for range 5 { // five tenants ask for the same Node at once
			wg.Add(1)
			arrived.Add(1)
			go func() {
				defer wg.Done()
				arrived.Done()
				if _, err := n.read(context.Background(), fmt.Sprintf("node-%d", i), fetch); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	// Wait until every caller has started (on a loaded machine some start late, after their
	// Node's shared read would have ended) and the slots are full, then let everything finish.
	arrived.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for inFlight.Load() < maxNodeReads && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if r := reads.Load(); r < 3*maxNodeReads || r > 5*3*maxNodeReads/2 {
		t.Errorf("%d reads for %d Nodes asked 5 times each at once, want about one per Node", r, 3*maxNodeReads)
	}
	if m := most.Load(); m > maxNodeReads {
		t.Errorf("%d reads in flight at once, want at most %d", m, maxNodeReads)
	}
	// A caller that gives up does not wait for the shared read.
	block := make(chan struct{})
	defer close(block)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := n.read(ctx, "slow", func(context.Context, string) (map[string]*dto.MetricFamily, error) {
		<-block
		return nil, nil
	}); err == nil {
		t.Error("a caller whose context ended got no error")
	}
}
