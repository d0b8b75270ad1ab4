package kubeletstats_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// t2Pod is tenant 2's Pod in its namespace web (tenant 1's is frontend).
const t2Pod = "backend"

// kubeletClient is an HTTP client with tenant tc's kubelet client certificate, as its
// apiserver has.
func kubeletClient(t *testing.T, tc *localcluster.ControlPlane) *http.Client {
	t.Helper()
	pair, err := tls.X509KeyPair(tc.KubeletClientCert, tc.KubeletClientKey)
	if err != nil {
		t.Fatal(err)
	}
	//nolint:gosec // the test trusts the syncer's self-signed serving certificate
	cfg := &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{pair}}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}, Timeout: 30 * time.Second}
}

// nodeGet reads path (/stats/summary, /metrics/resource) of vNode node as tenant tc sees it.
type nodeGet func(ctx context.Context, tc *localcluster.ControlPlane, node, path string) ([]byte, error)

// throughTenantAPIServer is `kubectl get --raw /api/v1/nodes/<node>/proxy<path>` with the
// tenant's admin kubeconfig.
func throughTenantAPIServer(ctx context.Context, tc *localcluster.ControlPlane, node, path string) ([]byte, error) {
	raw, err := tc.Client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/" + node + "/proxy" + path).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, raw)
	}
	return raw, nil
}

// asTenantAPIServer returns a nodeGet that sends what a tenant apiserver sends for
// nodes/<node>/proxy<path>: its kubelet client certificate and X-Forwarded-Uri, straight to
// the kubelet API at url (a tenant apiserver refuses to proxy to a loopback address).
func asTenantAPIServer(t *testing.T, url string) nodeGet {
	return func(ctx context.Context, tc *localcluster.ControlPlane, node, path string) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+path, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("X-Forwarded-Uri", "/api/v1/nodes/"+node+"/proxy"+path)
		resp, err := kubeletClient(t, tc).Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s", resp.Status, raw)
		}
		return raw, err
	}
}

// testStats: each tenant's stats/summary and metrics/resource of the vNode its Pod runs on
// show that tenant's own Pod under its tenant name, namespace and UID, with kwok's usage, and
// not the other tenant's Pod on the same super Node; the vNode's node-level usage is the
// tenant's own, less than the super Node's.
func testStats(t *testing.T, get nodeGet, super, t1, t2 *localcluster.ControlPlane, pod1, pod2 string) {
	ctx := context.Background()
	mem := resource.MustParse(localcluster.KwokContainerMemory)
	for _, v := range []struct {
		cp         *localcluster.ControlPlane
		own, other string
	}{{t1, pod1, pod2}, {t2, pod2, pod1}} {
		tp, err := v.cp.Client.CoreV1().Pods("web").Get(ctx, v.own, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		node := tp.Spec.NodeName
		before := metrics.KubeletRequests(v.cp.Name, "statsSummary", "forwarded")
		var summary statsv1alpha1.Summary
		var raw []byte
		itest.Eventually(t, time.Minute, v.cp.Name+": stats/summary of vNode "+node, func(ctx context.Context) error {
			if raw, err = get(ctx, v.cp, node, "/stats/summary"); err != nil {
				return err
			}
			summary = statsv1alpha1.Summary{}
			if err := json.Unmarshal(raw, &summary); err != nil {
				return fmt.Errorf("summary %q: %w", raw, err)
			}
			for _, p := range summary.Pods {
				if p.PodRef.Name == v.own && p.PodRef.Namespace == "web" && p.PodRef.UID == string(tp.UID) &&
					p.Memory != nil && p.Memory.WorkingSetBytes != nil && *p.Memory.WorkingSetBytes == uint64(mem.Value()) {
					return nil
				}
			}
			return itest.Errorf("summary has no web/%s of UID %s with %s working set: %s", v.own, tp.UID, localcluster.KwokContainerMemory, raw)
		})
		var podsMem uint64
		for _, p := range summary.Pods {
			if p.PodRef.Name == v.other || p.PodRef.Namespace != "web" {
				t.Errorf("%s: summary shows a Pod not its own: %+v", v.cp.Name, p.PodRef)
			}
			if p.Memory != nil && p.Memory.WorkingSetBytes != nil {
				podsMem += *p.Memory.WorkingSetBytes
			}
		}
		// Super namespaces begin with the tenant's name.
		if strings.Contains(string(raw), t1.Name) || strings.Contains(string(raw), t2.Name) {
			t.Errorf("%s: summary names a super namespace: %s", v.cp.Name, raw)
		}
		if summary.Node.NodeName != node || summary.Node.Memory == nil || summary.Node.Memory.WorkingSetBytes == nil || *summary.Node.Memory.WorkingSetBytes != podsMem {
			t.Errorf("%s: node stats %+v, want %s with the working set of the tenant's own Pods (%d)", v.cp.Name, summary.Node, node, podsMem)
		}
		if d := metrics.KubeletRequests(v.cp.Name, "statsSummary", "forwarded") - before; d < 1 {
			t.Errorf("vcsyncer_kubelet_requests_total{endpoint=statsSummary,result=forwarded} rose by %v", d)
		}

		text, err := get(ctx, v.cp, node, "/metrics/resource")
		if err != nil {
			t.Fatalf("%s: metrics/resource: %v", v.cp.Name, err)
		}
		if !hasPodMemory(t, text, v.own, float64(mem.Value())) {
			t.Errorf("%s: metrics/resource lacks pod_memory_working_set_bytes{namespace=\"web\",pod=%q} %d:\n%s", v.cp.Name, v.own, mem.Value(), text)
		}
		if strings.Contains(string(text), `pod="`+v.other+`"`) || strings.Contains(string(text), t1.Name) || strings.Contains(string(text), t2.Name) {
			t.Errorf("%s: metrics/resource shows another Pod or a super namespace:\n%s", v.cp.Name, text)
		}

		// The super Node's own total counts both tenants' Pods: the vNode shows less.
		superMem, err := superNodeMemory(ctx, super, node)
		if err != nil {
			t.Fatal(err)
		}
		if superMem <= podsMem {
			t.Errorf("super Node's working set %d, want more than tenant %s's %d (the other tenant's Pod runs there too)", superMem, v.cp.Name, podsMem)
		}
	}
}

// hasPodMemory reports whether the Prometheus text has pod_memory_working_set_bytes of Pod
// web/pod equal to want.
func hasPodMemory(t *testing.T, text []byte, pod string, want float64) bool {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(text)))
	if err != nil {
		t.Fatalf("metrics/resource: %v:\n%s", err, text)
	}
	for _, m := range fams["pod_memory_working_set_bytes"].GetMetric() {
		var ns, name string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "namespace":
				ns = l.GetValue()
			case "pod":
				name = l.GetValue()
			}
		}
		if ns == "web" && name == pod && m.GetGauge().GetValue() == want {
			return true
		}
	}
	return false
}

// superNodeMemory returns node_memory_working_set_bytes of super Node node, read from kwok.
func superNodeMemory(ctx context.Context, super *localcluster.ControlPlane, node string) (uint64, error) {
	tlsCfg, err := rest.TLSConfigFor(super.RESTConfig)
	if err != nil {
		return 0, err
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}, Timeout: 30 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.ReplaceAll(super.KwokMetricsURL(), "{nodeName}", node), nil)
	if err != nil {
		return 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", resp.Status, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		return 0, err
	}
	f := fams["node_memory_working_set_bytes"]
	if f == nil || len(f.GetMetric()) != 1 {
		return 0, itest.Errorf("super Node %s has no node_memory_working_set_bytes: %s", node, body)
	}
	return uint64(f.GetMetric()[0].GetGauge().GetValue()), nil
}

// proxyableHostIP returns an IPv4 address of this machine that kube-apiserver proxies
// nodes/<node>/proxy to (a global unicast one; it refuses loopback), or "".
func proxyableHostIP() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// TestKubeletStats: a tenant user's `kubectl get --raw /api/v1/nodes/<vNode>/proxy/stats/summary`
// and .../metrics/resource through the tenant apiserver (see the package doc for machines
// without a global unicast address).
func TestKubeletStats(t *testing.T) {
	ip, get := proxyableHostIP(), nodeGet(throughTenantAPIServer)
	if ip == "" {
		ip = "127.0.0.1"
	}
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 1}, 2)
	// kwok serves the super Node's resource metrics, and its total counts every Pod.
	itest.Eventually(t, time.Minute, "kwok serves the super Node's resource metrics", func(ctx context.Context) error {
		_, err := superNodeMemory(ctx, env.Super, "kwok-node-0")
		return err
	})
	port := itest.FreePort(t)
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	if ip == "127.0.0.1" {
		t.Logf("no global unicast IPv4 address here: the kubelet API is called as the tenant apiserver would call it")
		get = asTenantAPIServer(t, "https://"+addr)
	}
	c := itest.StartSyncer(t, env.Super.RESTConfig, func(o *options.Options) {
		// On a global unicast address it is reachable from the network while the test runs;
		// every request needs a tenant's kubelet client certificate.
		o.KubeletBindAddress = addr
		o.KubeletSuperMetricsURL = env.Super.KwokMetricsURL()
		o.KubeletNodeStats = true
	})
	ctx := context.Background()
	t1, t2 := env.Tenants[0], env.Tenants[1]
	pods := map[*localcluster.ControlPlane]string{t1: "frontend", t2: t2Pod}
	for tc := range pods {
		if err := itest.AddTenant(ctx, c, itest.KubeconfigNS, tc, 1); err != nil {
			t.Fatal(err)
		}
	}
	for tc, name := range pods {
		itest.WaitRunning(t, c, tc.Name)
		itest.MustCreateNS(t, tc.Client, "web")
		itest.Created(t)(tc.Client.CoreV1().Pods("web").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
		}, metav1.CreateOptions{}))
	}
	for tc, name := range pods {
		itest.Eventually(t, 2*time.Minute, tc.Name+": Pod Running on a vNode advertising "+ip, func(ctx context.Context) error {
			tp, err := tc.Client.CoreV1().Pods("web").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if tp.Status.Phase != corev1.PodRunning || tp.Spec.NodeName == "" {
				return itest.Errorf("tenant Pod %s on %q", tp.Status.Phase, tp.Spec.NodeName)
			}
			n, err := tc.Client.CoreV1().Nodes().Get(ctx, tp.Spec.NodeName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(n.Status.Addresses) != 1 || n.Status.Addresses[0].Address != ip {
				return itest.Errorf("vNode advertises %v", n.Status.Addresses)
			}
			return nil
		})
	}
	t.Run("stats-summary-through-the-tenant-apiserver", func(t *testing.T) {
		testStats(t, get, env.Super, t1, t2, "frontend", t2Pod)
	})
}
