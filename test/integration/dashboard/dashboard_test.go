package dashboard_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/metrics/dashboard"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

const (
	podsPerTenant = 12
	// downTenant is registered with an apiserver address nothing listens on: it never
	// connects, so the health and remediation-skip panels have a disconnected tenant to show.
	downTenant = "down"
	// rateInterval and rangeInterval stand in for Grafana's $__rate_interval / $__interval and
	// $__range: wide enough to cover the whole load phase of the test.
	rateInterval  = "5m"
	rangeInterval = "15m"
)

// expectTenants overrides, by panel title, which tenants a panel grouped by tenant must show
// (default: every connected tenant).
var expectTenants = map[string][]string{
	"Skipped tenants": {downTenant}, // only a tenant whose caches cannot be trusted is skipped
}

func TestDashboardPanelsReturnData(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real control planes and Prometheus")
	}
	promBin := prometheusBinary(t)
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 2}, 3)
	metricsAddr, kubeletAddr := freeAddr(t), freeAddr(t)
	c := itest.StartSyncer(t, env.Super.RESTConfig, func(o *options.Options) {
		o.KubeletBindAddress = kubeletAddr
		o.MetricsBindAddress = metricsAddr
		o.MetricsSecure = false // Prometheus scrapes plain HTTP on loopback
		o.RemediationInterval = time.Second
		o.CheckpointStore = "file:" + filepath.Join(t.TempDir(), "checkpoint")
		o.CheckpointInterval = time.Second
	})
	ctx := context.Background()
	var tenants []string
	for _, tc := range env.Tenants {
		if err := itest.AddTenant(ctx, c, itest.KubeconfigNS, tc, 1); err != nil {
			t.Fatal(err)
		}
		tenants = append(tenants, tc.Name)
	}
	if err := app.AddTenant(ctx, c, itest.KubeconfigNS, downTenant, itest.Unreachable(t, env.Tenants[0].Kubeconfig), 1); err != nil {
		t.Fatal(err)
	}
	for _, name := range tenants {
		itest.WaitRunning(t, c, name)
	}
	prom := startPrometheus(t, promBin, metricsAddr)

	// Load: every tenant gets ConfigMaps, Pods (created, scheduled in the super cluster and bound
	// back), a Pod the super cluster refuses (sync errors and retries), and a Pod status changed
	// behind the syncer's back (a remediation mismatch, then its fix). ConfigMaps keep changing
	// until the panels have been evaluated.
	var wg sync.WaitGroup
	for _, tc := range env.Tenants {
		wg.Go(func() { load(t, tc.Client) })
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	kubeletTraffic(t, env, "https://"+kubeletAddr)
	churnCtx, stopChurn := context.WithTimeout(ctx, 10*time.Minute)
	for _, tc := range env.Tenants {
		wg.Go(func() { churn(churnCtx, tc.Client) })
	}
	stopped := false
	stopLoad := func() {
		if !stopped {
			stopChurn()
			wg.Wait()
			stopped = true
		}
	}
	defer stopLoad()
	for _, tc := range env.Tenants {
		tamperPodStatus(t, tc.Client)
	}

	// Wait until Prometheus holds the slowest series for every tenant: the remediation fixes
	// (two scans after the repair), sync errors, and Pod creations (and upward syncs) that
	// Prometheus saw happen, not only appear: rate() needs a series to grow after its first scrape.
	for _, q := range []string{
		`sum by (tenant) (vcsyncer_remediation_fixes_total)`,
		`sum by (tenant) (vcsyncer_sync_duration_seconds_count{result="error"})`,
		`sum by (tenant) (increase(vcsyncer_pod_creation_duration_seconds_count[1m])) > 0`,
		`sum by (tenant) (increase(vcsyncer_sync_lag_seconds_count{direction="upward"}[1m])) > 0`,
	} {
		itest.Eventually(t, 2*time.Minute, "Prometheus has "+q+" for every tenant", func(ctx context.Context) error {
			res, err := prom.query(ctx, q)
			if err != nil {
				return err
			}
			if missing := missingTenants(res, tenants); len(missing) > 0 {
				return fmt.Errorf("no series for %v in %v", missing, res)
			}
			return nil
		})
	}
	time.Sleep(3 * time.Second) // a few more scrapes of the churn

	raw, err := os.ReadFile(filepath.Join("..", "..", "..", dashboard.JSONPath))
	if err != nil {
		t.Fatal(err)
	}
	var model dashboardModel
	if err := json.Unmarshal(raw, &model); err != nil {
		t.Fatal(err)
	}

	t.Run("variable tenant lists the tenants", func(t *testing.T) {
		q := variableQuery(t, model, "tenant")
		m := regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`).FindStringSubmatch(q)
		if m == nil {
			t.Fatalf("tenant variable query %q is not label_values(metric, label)", q)
		}
		values, err := prom.labelValues(ctx, m[2], m[1])
		if err != nil {
			t.Fatal(err)
		}
		for _, tn := range append(slices.Clone(tenants), downTenant) {
			if !slices.Contains(values, tn) {
				t.Errorf("%s = %v, missing %s", q, values, tn)
			}
		}
	})

	panels := 0
	for _, p := range model.Panels {
		if p.Type == "row" {
			continue
		}
		panels++
		t.Run(p.Title, func(t *testing.T) {
			if len(p.Targets) == 0 {
				t.Fatal("panel has no query")
			}
			want := tenants
			if o, ok := expectTenants[p.Title]; ok {
				want = o
			}
			for _, tg := range p.Targets {
				checkTarget(t, prom, tg.Expr, want)
			}
		})
	}
	t.Logf("evaluated %d panels against Prometheus", panels)
	if res, err := prom.query(ctx, `count by (tenant) ({__name__=~"vcsyncer_.+",tenant!=""})`); err == nil {
		for _, r := range res {
			t.Logf("series of tenant %s: %.0f", r.Metric["tenant"], r.value())
		}
	}

	t.Run("five Pod-creation phases for every tenant", func(t *testing.T) {
		res, err := prom.query(ctx, `count by (tenant, phase) (vcsyncer_pod_creation_phase_duration_seconds_count > 0)`)
		if err != nil {
			t.Fatal(err)
		}
		for _, tn := range tenants {
			var phases []string
			for _, s := range res {
				if s.Metric["tenant"] == tn {
					phases = append(phases, s.Metric["phase"])
				}
			}
			slices.Sort(phases)
			want := []string{"downward_process", "downward_queue", "super_scheduling", "upward_process", "upward_queue"}
			if !slices.Equal(phases, want) {
				t.Errorf("tenant %s has phases %v, want %v", tn, phases, want)
			}
		}
		means, err := prom.query(ctx, `sum by (phase) (vcsyncer_pod_creation_phase_duration_seconds_sum) / sum by (phase) (vcsyncer_pod_creation_phase_duration_seconds_count)`)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range means {
			t.Logf("mean %s: %.1f ms", s.Metric["phase"], 1000*s.value())
		}
	})

	t.Run("a removed tenant's series are forgotten", func(t *testing.T) {
		stopLoad()
		gone, kept := tenants[len(tenants)-1], tenants[0]
		tn := &tenancyv1alpha1.Tenant{}
		tn.Name = gone
		if err := c.Delete(ctx, tn); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, 2*time.Minute, "Tenant "+gone+" removed", func(ctx context.Context) error {
			err := c.Get(ctx, client.ObjectKey{Name: gone}, &tenancyv1alpha1.Tenant{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err == nil {
				return fmt.Errorf("still there")
			}
			return err
		})
		itest.Eventually(t, 30*time.Second, "no series of "+gone+" served at /metrics", func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+metricsAddr+"/metrics", nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				return err
			}
			var left []string
			for line := range strings.Lines(string(body)) {
				if strings.Contains(line, `tenant="`+gone+`"`) {
					left = append(left, strings.TrimSpace(line))
				}
			}
			if len(left) > 0 {
				return fmt.Errorf("%d series left, e.g. %v", len(left), left[:min(len(left), 5)])
			}
			if !strings.Contains(string(body), `tenant="`+kept+`"`) {
				return fmt.Errorf("the remaining tenant %s has no series either", kept)
			}
			return nil
		})
		itest.Eventually(t, 30*time.Second, "Prometheus sees "+gone+"'s series go stale", func(ctx context.Context) error {
			res, err := prom.query(ctx, `count by (__name__) ({__name__=~"vcsyncer_.+",tenant="`+gone+`"})`)
			if err != nil {
				return err
			}
			if len(res) > 0 {
				return fmt.Errorf("still current: %v", res)
			}
			return nil
		})
	})
}

// checkTarget evaluates one panel query. A query using $tenant is evaluated once per tenant
// (the variable set to that tenant) and must return a series with a finite value each time; a
// query grouping by tenant must return a finite series for every tenant in want; any other
// query must return a finite series.
func checkTarget(t *testing.T, prom *prometheus, expr string, want []string) {
	t.Helper()
	ctx := context.Background()
	if strings.Contains(expr, "$tenant") || strings.Contains(expr, "${tenant}") {
		for _, tn := range want {
			q := substitute(expr, regexp.QuoteMeta(tn))
			res, err := prom.query(ctx, q)
			if err != nil {
				t.Errorf("%s: %v", q, err)
				continue
			}
			if finite(res) == 0 {
				t.Errorf("tenant %s: %s returned no series with a value: %v", tn, q, res)
			}
		}
		return
	}
	q := substitute(expr, "")
	res, err := prom.query(ctx, q)
	if err != nil {
		t.Errorf("%s: %v", q, err)
		return
	}
	if regexp.MustCompile(`by \([^)]*\btenant\b`).MatchString(expr) {
		if missing := missingTenants(res, want); len(missing) > 0 {
			t.Errorf("%s: no series with a value for tenants %v; got %v", q, missing, res)
		}
		return
	}
	if finite(res) == 0 {
		t.Errorf("%s returned no series with a value: %v", q, res)
	}
}

// substitute replaces Grafana's variables in expr as Grafana would before sending it.
func substitute(expr, tenant string) string {
	return strings.NewReplacer(
		"${tenant}", tenant, "$tenant", tenant,
		"$__rate_interval", rateInterval, "$__interval", rateInterval, "$__range", rangeInterval,
	).Replace(expr)
}

type series struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s series) value() float64 {
	str, _ := s.Value[1].(string)
	v, err := strconv.ParseFloat(str, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

func finite(res []series) int {
	n := 0
	for _, s := range res {
		if v := s.value(); !math.IsNaN(v) && !math.IsInf(v, 0) {
			n++
		}
	}
	return n
}

func missingTenants(res []series, want []string) []string {
	var missing []string
	for _, tn := range want {
		var mine []series
		for _, s := range res {
			if s.Metric["tenant"] == tn {
				mine = append(mine, s)
			}
		}
		if finite(mine) == 0 {
			missing = append(missing, tn)
		}
	}
	return missing
}

type dashboardModel struct {
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type panel struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

func variableQuery(t *testing.T, m dashboardModel, name string) string {
	t.Helper()
	for _, v := range m.Templating.List {
		if v.Name != name {
			continue
		}
		switch q := v.Query.(type) {
		case string:
			return q
		case map[string]any:
			if s, ok := q["query"].(string); ok {
				return s
			}
		}
	}
	t.Fatalf("dashboard has no query variable %q", name)
	return ""
}

// load creates the test's objects in one tenant and waits until its Pods are bound and Running.
func load(t *testing.T, c kubernetes.Interface) {
	ctx := context.Background()
	itest.MustCreateNS(t, c, "load")
	for i := range 10 {
		if _, err := c.CoreV1().ConfigMaps("load").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cfg-%d", i)}, Data: map[string]string{"n": "0"},
		}, metav1.CreateOptions{}); err != nil {
			t.Error(err)
			return
		}
	}
	for i := range podsPerTenant {
		if _, err := c.CoreV1().Pods("load").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Error(err)
			return
		}
	}
	// Privileged: the super cluster's Pod Security (baseline) refuses its super copy, so its
	// downward reconcile fails and is retried.
	priv := true
	if _, err := c.CoreV1().Pods("load").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "refused"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
			SecurityContext: &corev1.SecurityContext{Privileged: &priv}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Error(err)
		return
	}
	err := poll(2*time.Minute, func() error {
		pods, err := c.CoreV1().Pods("load").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		if running < podsPerTenant {
			return fmt.Errorf("%d/%d Pods bound and Running", running, podsPerTenant)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// churn keeps a tenant busy until ctx is done: it updates a ConfigMap every 300ms and, every
// 2.1s, creates a Pod and deletes the one created three rounds before (so Pod creations keep
// happening after Prometheus has seen each series).
func churn(ctx context.Context, c kubernetes.Interface) {
	for n := 1; ctx.Err() == nil; n++ {
		cm, err := c.CoreV1().ConfigMaps("load").Get(ctx, fmt.Sprintf("cfg-%d", n%10), metav1.GetOptions{})
		if err == nil {
			cm.Data["n"] = strconv.Itoa(n)
			_, _ = c.CoreV1().ConfigMaps("load").Update(ctx, cm, metav1.UpdateOptions{})
		}
		if n%7 == 0 {
			_, _ = c.CoreV1().Pods("load").Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("churn-%d", n/7), Labels: map[string]string{"app": "churn"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
			}, metav1.CreateOptions{})
			if n/7 > 3 {
				_ = c.CoreV1().Pods("load").Delete(ctx, fmt.Sprintf("churn-%d", n/7-3), metav1.DeleteOptions{})
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// tamperPodStatus marks a Running tenant Pod not Ready behind the syncer's back: only a
// remediation scan notices (a tenant status change drives no sync), counts a mismatch and,
// once the upward reconcile restored the status, a fix.
func tamperPodStatus(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	p, err := c.CoreV1().Pods("load").Get(ctx, "web-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			p.Status.Conditions[i].Status = corev1.ConditionFalse
			p.Status.Conditions[i].Reason = "Tampered"
		}
	}
	if _, err := c.CoreV1().Pods("load").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func poll(timeout time.Duration, f func() error) error {
	end := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil || time.Now().After(end) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// kubeletTraffic gives the kubelet API panels data for every tenant: a tenant user's `kubectl
// logs` through the tenant apiserver (forwarded, bytes), a request for a container the Pod does
// not declare (refused), a `logs -f` held open until the test ends (open streams), and a
// request without a client certificate (401).
func kubeletTraffic(t *testing.T, env *localcluster.Environment, kubeletURL string) {
	t.Helper()
	if err := env.Super.AppendPodLog("hello from the super cluster"); err != nil {
		t.Fatal(err)
	}
	get := func(hc *http.Client, path string) *http.Response {
		t.Helper()
		resp, err := hc.Get(kubeletURL + path)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, tc := range env.Tenants {
		itest.Eventually(t, time.Minute, tc.Name+": kubectl logs through the tenant apiserver", func(ctx context.Context) error {
			_, err := tc.Client.CoreV1().Pods("load").GetLogs("web-0", &corev1.PodLogOptions{Container: "web"}).DoRaw(ctx)
			return err
		})
		pair, err := tls.X509KeyPair(tc.KubeletClientCert, tc.KubeletClientKey)
		if err != nil {
			t.Fatal(err)
		}
		//nolint:gosec // the test trusts the syncer's self-signed serving certificate
		hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{pair}}}}
		refused := get(hc, "/containerLogs/load/web-0/not-declared")
		_ = refused.Body.Close()
		if refused.StatusCode != http.StatusNotFound {
			t.Fatalf("%s: a container the Pod does not declare: %d, want 404", tc.Name, refused.StatusCode)
		}
		follow := get(hc, "/containerLogs/load/web-0/web?follow=true")
		t.Cleanup(func() { _ = follow.Body.Close() })
		if follow.StatusCode != http.StatusOK {
			t.Fatalf("%s: logs -f: %d", tc.Name, follow.StatusCode)
		}
	}
	//nolint:gosec // as above
	anon := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if resp := get(anon, "/containerLogs/load/web-0/web"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no client certificate: %d, want 401", resp.StatusCode)
	} else {
		_ = resp.Body.Close()
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// prometheusBinary finds the prometheus binary (Debian package prometheus; `make test`
// installs it through hack/ensure-prometheus.sh).
func prometheusBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("VCSYNCER_PROMETHEUS"); p != "" {
		return p
	}
	p, err := exec.LookPath("prometheus")
	if err != nil {
		msg := "prometheus not found in PATH: run hack/ensure-prometheus.sh (apt-get install prometheus) or set VCSYNCER_PROMETHEUS"
		if os.Getenv("VCSYNCER_SKIP_IF_NO_TOOLS") != "" {
			t.Skip(msg)
		}
		t.Fatal(msg)
	}
	return p
}

type prometheus struct{ base string }

// startPrometheus runs Prometheus scraping target every second until the test ends.
func startPrometheus(t *testing.T, bin, target string) *prometheus {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: vc-syncer
    static_configs:
      - targets: [%q]
`, target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	logPath := filepath.Join(dir, "prometheus.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logf.Close()
		if t.Failed() {
			if data, err := os.ReadFile(logPath); err == nil {
				t.Logf("prometheus log:\n%s", tail(string(data), 4000))
			}
		}
	})
	p := &prometheus{base: "http://" + addr}
	itest.Eventually(t, time.Minute, "Prometheus ready and scraping the syncer", func(ctx context.Context) error {
		select {
		case <-exited:
			t.Fatalf("prometheus exited; see its log")
		default:
		}
		res, err := p.query(ctx, `up{job="vc-syncer"} == 1`)
		if err != nil {
			return err
		}
		if len(res) == 0 {
			return fmt.Errorf("target not up yet")
		}
		return nil
	})
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (p *prometheus) get(ctx context.Context, path string, params url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path+"?"+params.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("%s: HTTP %d: %s", path, resp.StatusCode, tail(string(body), 300))
	}
	if env.Status != "success" {
		return fmt.Errorf("%s: %s", path, env.Error)
	}
	return json.Unmarshal(env.Data, out)
}

// query evaluates an instant PromQL query now (GET /api/v1/query) and returns its vector.
func (p *prometheus) query(ctx context.Context, q string) ([]series, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := p.get(ctx, "/api/v1/query", url.Values{"query": {q}}, &data); err != nil {
		return nil, err
	}
	switch data.ResultType {
	case "vector":
		var res []series
		return res, json.Unmarshal(data.Result, &res)
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(data.Result, &v); err != nil {
			return nil, err
		}
		return []series{{Metric: map[string]string{}, Value: v}}, nil
	default:
		return nil, fmt.Errorf("result type %s, want vector", data.ResultType)
	}
}

// labelValues returns the values of label over the series matching match
// (GET /api/v1/label/<label>/values, what Grafana's label_values(metric, label) calls).
func (p *prometheus) labelValues(ctx context.Context, label, match string) ([]string, error) {
	var out []string
	err := p.get(ctx, "/api/v1/label/"+label+"/values", url.Values{"match[]": {match}}, &out)
	return out, err
}
