package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/vcsyncer/syncer/pkg/localcluster"
)

// tenantsConfig are the flags of the tenants experiment.
type tenantsConfig struct {
	steps          []int
	objects, nodes int
	podShare       float64
	burstPods      int
	settle, window time.Duration
	minMemFree     int64
	timeout        time.Duration
	out            string
	syncerFlags    []string
}

// tenantsPoint is what the tenants experiment measured with a number of registered tenants,
// all idle (nothing changing in any cluster) during the window.
type tenantsPoint struct {
	Tenants int `json:"tenants"`
	// ObjectsPerTenant is 0 for the idle steps and --objects for the last point.
	ObjectsPerTenant int `json:"objectsPerTenant"`
	// RSSBytes etc. are read in steady state after the window (a GC, then --settle for the
	// scavenger), as the memory experiment does.
	RSSBytes   int64 `json:"rssBytes"`
	AnonBytes  int64 `json:"rssAnonBytes"`
	HeapAlloc  int64 `json:"heapAllocBytes"`
	Goroutines int   `json:"goroutines"`
	// CPUSecondsPerMinute is the syncer's utime+stime over the window, per minute.
	CPUSecondsPerMinute float64 `json:"cpuSecondsPerMinute"`
	// TenantRequestsPerMinute and SuperRequestsPerMinute are the syncer's own requests
	// (client-go's rest_client_requests_total, by host) to all tenant apiservers and to the
	// super apiserver during the window, per minute; ...ByMethod split them by HTTP method
	// (a watch is a GET that stays open, so GETs include watch re-establishments).
	TenantRequestsPerMinute  float64            `json:"tenantRequestsPerMinute"`
	SuperRequestsPerMinute   float64            `json:"superRequestsPerMinute"`
	TenantRequestsByMethod   map[string]float64 `json:"tenantRequestsByMethodPerMinute"`
	SuperRequestsByMethod    map[string]float64 `json:"superRequestsByMethodPerMinute"`
	WatchesPerTenant         float64            `json:"watchesPerTenant"`
	RegisteredToRunningSecs  float64            `json:"registeredToRunningSeconds"`
	MachineMemAvailableBytes int64              `json:"machineMemAvailableBytes"`
	MachineIdleCores         float64            `json:"machineIdleCores"`
}

// runTenants measures what a registered tenant costs the syncer (memory, CPU, requests to the
// tenant and the super apiserver, watches) at a growing number of real tenant control planes,
// idle and with objects, and the syncer's restart and a burst at the largest number.
func runTenants(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("tenants", flag.ExitOnError)
	var c tenantsConfig
	steps := fs.String("steps", "1,5,10,20,30", "cumulative numbers of tenants at which the idle syncer is measured; adding stops early when the machine runs out (see --min-mem-available)")
	fs.IntVar(&c.objects, "objects", 100, "objects per tenant (ConfigMaps and Pods, see --pod-share) for the last point, at the largest number of tenants")
	fs.Float64Var(&c.podShare, "pod-share", 0.1, "share of Pods among --objects")
	fs.IntVar(&c.burstPods, "burst-pods", 5, "Pods per tenant in the burst at the largest number of tenants (0: no burst)")
	fs.IntVar(&c.nodes, "nodes", 10, "kwok Nodes in the super cluster (110 Pods each)")
	fs.DurationVar(&c.settle, "settle", 35*time.Second, "wait after registering before the window, and after the GC before reading RSS (longer than the syncer's --idle-memory-release, 30s)")
	fs.DurationVar(&c.window, "window", time.Minute, "idle window over which CPU and requests are counted")
	fs.Int64Var(&c.minMemFree, "min-mem-available", 2<<30, "stop adding tenants when the machine's MemAvailable (bytes) would fall below this")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up after this long per phase")
	fs.StringVar(&c.out, "out", "bench-out/tenants", "directory for result.json, result.md and the syncer logs")
	fs.Func("syncer-flag", "extra flag for the vc-syncer run (repeatable)", func(v string) error {
		c.syncerFlags = append(c.syncerFlags, v)
		return nil
	})
	_ = fs.Parse(args)
	for _, f := range strings.Split(*steps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 250 || (len(c.steps) > 0 && n <= c.steps[len(c.steps)-1]) {
			return fmt.Errorf("--steps: want increasing numbers between 1 and 250, got %q", f)
		}
		c.steps = append(c.steps, n)
	}
	ctrllog.SetLogger(logr.Discard())
	env, bin, err := startEnvAndSyncer(ctx, c.out, c.nodes, 0)
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	ckptDir, err := os.MkdirTemp("", "vc-syncer-bench-ckpt")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ckptDir)
	pprofAddr := freeAddr()
	withCkpt := append([]string{"--checkpoint-store", "file:" + filepath.Join(ckptDir, "ckpt"),
		"--pprof-bind-address", pprofAddr}, c.syncerFlags...)
	r := &restarter{c: restartConfig{objects: c.objects, podShare: c.podShare, quiet: 5 * time.Second, down: 2 * time.Second, timeout: c.timeout, out: c.out}, env: env, bin: bin}
	if err := r.start(ctx, "initial", withCkpt); err != nil {
		return err
	}
	defer func() { r.p.stop() }()

	var pts []tenantsPoint
	stoppedBy := "the last --steps value"
	perTenantMem := int64(0)
	for _, n := range c.steps {
		add := n - len(env.Tenants)
		if avail := memAvailable(); perTenantMem > 0 && avail-int64(add)*perTenantMem < c.minMemFree {
			stoppedBy = fmt.Sprintf("memory: %d more tenants at %.0f MiB each would leave less than %.1f GiB of %.1f GiB available",
				add, float64(perTenantMem)/(1<<20), float64(c.minMemFree)/(1<<30), float64(avail)/(1<<30))
			logf("%s", stoppedBy)
			break
		}
		before := memAvailable()
		if err := env.AddTenants(ctx, add); err != nil {
			stoppedBy = fmt.Sprintf("starting tenant control planes failed: %v", err)
			logf("%s", stoppedBy)
			break
		}
		perTenantMem = max(perTenantMem, (before-memAvailable())/int64(add))
		newTenants := env.Tenants[len(env.Tenants)-add:]
		w0, err := tenantWatches(ctx, newTenants)
		if err != nil {
			return err
		}
		t0 := time.Now()
		if err := registerTenants(ctx, env); err != nil {
			return err
		}
		registered := time.Since(t0).Seconds()
		time.Sleep(c.settle)
		pt, err := measureIdle(ctx, r, pprofAddr, c)
		if err != nil {
			return err
		}
		w1, err := tenantWatches(ctx, newTenants)
		if err != nil {
			return err
		}
		pt.WatchesPerTenant = (w1 - w0) / float64(add)
		pt.RegisteredToRunningSecs = registered
		pts = append(pts, pt)
		logf("%d idle tenants: RSS %.1f MiB, heap %.1f MiB, %d goroutines, CPU %.3f s/min, tenant requests %.1f/min, super requests %.1f/min, %.1f watches per tenant",
			n, float64(pt.RSSBytes)/(1<<20), float64(pt.HeapAlloc)/(1<<20), pt.Goroutines, pt.CPUSecondsPerMinute, pt.TenantRequestsPerMinute, pt.SuperRequestsPerMinute, pt.WatchesPerTenant)
	}
	if len(pts) == 0 {
		return fmt.Errorf("no step measured: %s", stoppedBy)
	}
	res := &tenantsResults{c: c, points: pts, maxN: len(env.Tenants), stoppedBy: stoppedBy}
	if err := res.write(); err != nil {
		return err
	}
	// Every later phase writes what it measured at once: a phase that fails at the largest
	// number (the machine is the limit there) keeps the ones before it.
	if err := tenantsAtMax(ctx, env, r, res, pprofAddr, withCkpt); err != nil {
		if werr := res.write(); werr != nil {
			logf("results not written: %v", werr)
		}
		return err
	}
	return res.write()
}

// tenantsAtMax measures, at the largest number of tenants, the idle syncer with objects, its
// restarts (cold and from the checkpoint of a graceful stop) and a burst, filling res.
func tenantsAtMax(ctx context.Context, env *localcluster.Environment, r *restarter, res *tenantsResults, pprofAddr string, withCkpt []string) error {
	c := res.c
	if err := r.populate(ctx); err != nil {
		return fmt.Errorf("%d objects in each of %d tenants: %w", c.objects, res.maxN, err)
	}
	time.Sleep(c.settle)
	full, err := measureIdle(ctx, r, pprofAddr, c)
	if err != nil {
		return err
	}
	full.ObjectsPerTenant = c.objects
	res.full = &full
	logf("%d tenants × %d objects, idle: RSS %.1f MiB, CPU %.3f s/min, tenant requests %.1f/min, super requests %.1f/min",
		res.maxN, c.objects, float64(full.RSSBytes)/(1<<20), full.CPUSecondsPerMinute, full.TenantRequestsPerMinute, full.SuperRequestsPerMinute)
	if err := res.write(); err != nil {
		return err
	}

	cold, err := r.measure(ctx, "cold", "SIGTERM", []string{"--checkpoint-store", "none", "--pprof-bind-address", pprofAddr})
	if err != nil {
		return err
	}
	res.cold = &cold
	r.p.stop()
	if err := r.start(ctx, "refresh", withCkpt); err != nil {
		return err
	}
	if _, _, err := r.drain(ctx, time.Now()); err != nil {
		return err
	}
	warm, err := r.measure(ctx, "checkpoint after SIGTERM", "SIGTERM", withCkpt)
	if err != nil {
		return err
	}
	res.warm = &warm
	if err := res.write(); err != nil {
		return err
	}
	if c.burstPods > 0 {
		if res.burst, err = tenantsBurst(ctx, env, c); err != nil {
			return err
		}
	}
	return nil
}

// tenantsResults is what the tenants experiment measured so far; nil fields were not (yet).
type tenantsResults struct {
	c          tenantsConfig
	points     []tenantsPoint
	maxN       int
	stoppedBy  string
	full       *tenantsPoint  // the largest number with objects
	cold, warm *restartResult // restarts at the largest number
	burst      map[string]any
}

// measureIdle counts the syncer's CPU and requests over c.window, then reads its memory in
// steady state.
func measureIdle(ctx context.Context, r *restarter, pprofAddr string, c tenantsConfig) (tenantsPoint, error) {
	pt := tenantsPoint{Tenants: len(r.env.Tenants)}
	hosts := map[string]string{}
	superURL, err := url.Parse(r.env.Super.RESTConfig.Host)
	if err != nil {
		return pt, err
	}
	hosts[superURL.Host] = "super"
	for _, t := range r.env.Tenants {
		u, err := url.Parse(t.RESTConfig.Host)
		if err != nil {
			return pt, err
		}
		hosts[u.Host] = "tenant"
	}
	m0, err := scrape(ctx, "http://"+r.metrics+"/metrics")
	if err != nil {
		return pt, err
	}
	cpu0, err := cpuSeconds(r.p.pid())
	if err != nil {
		return pt, err
	}
	idle0, t0 := machineIdleSeconds(), time.Now()
	time.Sleep(c.window)
	m1, err := scrape(ctx, "http://"+r.metrics+"/metrics")
	if err != nil {
		return pt, err
	}
	cpu1, _ := cpuSeconds(r.p.pid())
	minutes := time.Since(t0).Minutes()
	pt.MachineIdleCores = (machineIdleSeconds() - idle0) / time.Since(t0).Seconds()
	pt.CPUSecondsPerMinute = (cpu1 - cpu0) / minutes
	pt.TenantRequestsByMethod, pt.SuperRequestsByMethod = map[string]float64{}, map[string]float64{}
	for kind, d := range requestDelta(m0, m1, hosts) {
		side, method, _ := strings.Cut(kind, "/")
		if side == "super" {
			pt.SuperRequestsByMethod[method] += d / minutes
			pt.SuperRequestsPerMinute += d / minutes
		} else {
			pt.TenantRequestsByMethod[method] += d / minutes
			pt.TenantRequestsPerMinute += d / minutes
		}
	}
	if _, err := heapAlloc(ctx, pprofAddr); err != nil {
		return pt, err
	}
	time.Sleep(c.settle)
	if pt.HeapAlloc, err = heapAlloc(ctx, pprofAddr); err != nil {
		return pt, err
	}
	pt.RSSBytes, _ = currentRSS(r.p.pid())
	pt.AnonBytes, _ = procStatusBytes(r.p.pid(), "RssAnon")
	pt.Goroutines, _ = goroutines(ctx, pprofAddr)
	pt.MachineMemAvailableBytes = memAvailable()
	return pt, nil
}

// requestDelta returns the increase of rest_client_requests_total between two scrapes by
// "<super|tenant>/<method>", for the hosts in hosts (host:port → side).
func requestDelta(before, after []metricSample, hosts map[string]string) map[string]float64 {
	prev := map[string]float64{}
	for _, s := range before {
		if s.name == "rest_client_requests_total" {
			prev[s.key()] = s.value
		}
	}
	out := map[string]float64{}
	for _, s := range after {
		side, ok := hosts[s.labels["host"]]
		if ok && s.name == "rest_client_requests_total" {
			out[side+"/"+s.labels["method"]] += s.value - prev[s.key()]
		}
	}
	return out
}

// tenantWatches sums apiserver_longrunning_requests{verb="WATCH"} (watches open now) over the
// given tenants' apiservers.
func tenantWatches(ctx context.Context, tenants []*localcluster.ControlPlane) (float64, error) {
	total := 0.0
	for _, t := range tenants {
		samples, err := apiserverMetrics(ctx, t)
		if err != nil {
			return 0, err
		}
		for _, s := range samples {
			if s.name == "apiserver_longrunning_requests" && s.labels["verb"] == "WATCH" {
				total += s.value
			}
		}
	}
	return total, nil
}

// goroutines returns the syncer's number of goroutines (the first line of
// /debug/pprof/goroutine?debug=1, "goroutine profile: total N").
func goroutines(ctx context.Context, addr string) (int, error) {
	var b strings.Builder
	if err := saveURLTo(ctx, "http://"+addr+"/debug/pprof/goroutine?debug=1", &b); err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(b.String(), "\n")
	return strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(first, "goroutine profile: total")))
}

// memAvailable returns the machine's MemAvailable (proc(5) /proc/meminfo) in bytes, 0 if unknown.
func memAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// machineIdleSeconds returns the idle time of all CPUs since boot in seconds (the idle and
// iowait fields of /proc/stat's cpu line, in 1/100 s).
func machineIdleSeconds() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 {
		return 0
	}
	idle, _ := strconv.ParseFloat(f[4], 64)
	iowait, _ := strconv.ParseFloat(f[5], 64)
	return (idle + iowait) / 100
}

// tenantsBurst creates c.burstPods Pods in every tenant at once, through the syncer, and the
// same number straight into the super cluster (one namespace per tenant, one client), and
// returns both latency summaries and their p99 ratio.
func tenantsBurst(ctx context.Context, env *localcluster.Environment, c tenantsConfig) (map[string]any, error) {
	bc := config{pods: c.burstPods, concurrency: 10, timeout: c.timeout}
	var baseClients, clients []kubernetes.Interface
	var baseNS, ns []string
	for i, t := range env.Tenants {
		b := fmt.Sprintf("tenants-baseline-%d", i+1)
		if err := createNamespace(ctx, env.Super.Client, b); err != nil {
			return nil, err
		}
		if err := createNamespace(ctx, t.Client, "tenants-burst"); err != nil {
			return nil, err
		}
		baseClients, baseNS = append(baseClients, env.Super.Client), append(baseNS, b)
		clients, ns = append(clients, t.Client), append(ns, "tenants-burst")
	}
	logf("burst: %d tenants × %d Pods straight into the super cluster", len(env.Tenants), c.burstPods)
	base, err := burst(ctx, bc, baseClients, baseNS)
	if err != nil {
		return nil, fmt.Errorf("baseline burst: %w", err)
	}
	logf("burst: %d tenants × %d Pods through vc-syncer", len(env.Tenants), c.burstPods)
	synced, err := burst(ctx, bc, clients, ns)
	if err != nil {
		return nil, fmt.Errorf("burst through the syncer: %w", err)
	}
	b, s := summarize(base), summarize(synced)
	return map[string]any{"podsPerTenant": c.burstPods, "baseline": b, "syncer": s, "p99Ratio": s.P99 / b.P99,
		"throughputRatio": s.Throughput / b.Throughput}, nil
}

// perTenantSlope fits y = a + b·tenants over the points by least squares and returns b.
func perTenantSlope(pts []tenantsPoint, y func(tenantsPoint) float64) float64 {
	var xs, ys []float64
	for _, p := range pts {
		xs, ys = append(xs, float64(p.Tenants)), append(ys, y(p))
	}
	if len(xs) < 2 {
		if len(xs) == 1 && xs[0] > 0 {
			return ys[0] / xs[0]
		}
		return 0
	}
	return lsSlope(xs, ys)
}

// write writes result.json and result.md in c.out from what was measured so far.
func (r *tenantsResults) write() error {
	c, pts, maxN, stoppedBy := r.c, r.points, r.maxN, r.stoppedBy
	rss := perTenantSlope(pts, func(p tenantsPoint) float64 { return float64(p.RSSBytes) })
	anon := perTenantSlope(pts, func(p tenantsPoint) float64 { return float64(p.AnonBytes) })
	heap := perTenantSlope(pts, func(p tenantsPoint) float64 { return float64(p.HeapAlloc) })
	gor := perTenantSlope(pts, func(p tenantsPoint) float64 { return float64(p.Goroutines) })
	cpu := perTenantSlope(pts, func(p tenantsPoint) float64 { return p.CPUSecondsPerMinute })
	treq := perTenantSlope(pts, func(p tenantsPoint) float64 { return p.TenantRequestsPerMinute })
	sreq := perTenantSlope(pts, func(p tenantsPoint) float64 { return p.SuperRequestsPerMinute })
	watches := 0.0
	for _, p := range pts {
		watches = max(watches, p.WatchesPerTenant)
	}
	res := map[string]any{
		"date": time.Now().UTC().Format(time.RFC3339), "goVersion": runtime.Version(), "nodes": c.nodes,
		"steps": c.steps, "windowSeconds": c.window.Seconds(), "syncerFlags": c.syncerFlags,
		"points": pts, "objectsPerTenant": c.objects, "podShare": c.podShare,
		"maxTenants": maxN, "maxTenantsLimit": stoppedBy,
		"rssBytesPerIdleTenant": rss, "rssAnonBytesPerIdleTenant": anon, "heapBytesPerIdleTenant": heap,
		"goroutinesPerIdleTenant":              gor,
		"cpuSecondsPerIdleTenantPerMinute":     cpu,
		"tenantRequestsPerIdleTenantPerMinute": treq,
		"superRequestsPerIdleTenantPerMinute":  sreq,
		"watchesPerTenant":                     watches,
	}
	// What the objects add per tenant, at the largest number of tenants.
	var objRSS, objHeap, objCPU, objTReq, objSReq float64
	if full := r.full; full != nil {
		last := pts[len(pts)-1]
		n := float64(last.Tenants)
		objRSS = float64(full.RSSBytes-last.RSSBytes) / n
		objHeap = float64(full.HeapAlloc-last.HeapAlloc) / n
		objCPU = (full.CPUSecondsPerMinute - last.CPUSecondsPerMinute) / n
		objTReq = (full.TenantRequestsPerMinute - last.TenantRequestsPerMinute) / n
		objSReq = (full.SuperRequestsPerMinute - last.SuperRequestsPerMinute) / n
		res["withObjects"] = full
		res["rssBytesPerTenantWithObjects"], res["heapBytesPerTenantWithObjects"] = rss+objRSS, heap+objHeap
		res["objectsAddPerTenant"] = map[string]float64{"rssBytes": objRSS, "heapBytes": objHeap, "cpuSecondsPerMinute": objCPU,
			"tenantRequestsPerMinute": objTReq, "superRequestsPerMinute": objSReq}
	}
	if r.cold != nil && r.warm != nil {
		res["coldStartSecondsAtMaxTenants"] = r.cold.EmptySeconds
		res["checkpointStartSecondsAtMaxTenants"] = r.warm.EmptySeconds
		res["restarts"] = []restartResult{*r.cold, *r.warm}
	}
	if r.burst != nil {
		res["burstAtMaxTenants"] = r.burst
	}
	if err := writeResultJSON(c.out, res); err != nil {
		return err
	}
	var md strings.Builder
	md.WriteString("| tenants | objects per tenant | syncer RSS (MiB) | live heap (MiB) | goroutines | syncer CPU (s/min) | requests to tenants (/min) | requests to super (/min) | watches per tenant | register → Running (s) | machine idle cores |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	rows := slices.Clone(pts)
	if r.full != nil {
		rows = append(rows, *r.full)
	}
	for i, p := range rows {
		watches, registered := fmt.Sprintf("%.1f", p.WatchesPerTenant), fmt.Sprintf("%.1f", p.RegisteredToRunningSecs)
		if i == len(pts) {
			watches, registered = "–", "–" // the same tenants as the row above
		}
		fmt.Fprintf(&md, "| %d | %d | %.1f | %.1f | %d | %.3f | %.1f %s | %.1f %s | %s | %s | %.2f |\n", p.Tenants, p.ObjectsPerTenant,
			float64(p.RSSBytes)/(1<<20), float64(p.HeapAlloc)/(1<<20), p.Goroutines, p.CPUSecondsPerMinute,
			p.TenantRequestsPerMinute, methodsText(p.TenantRequestsByMethod), p.SuperRequestsPerMinute, methodsText(p.SuperRequestsByMethod),
			watches, registered, p.MachineIdleCores)
	}
	fmt.Fprintf(&md, "\nPer idle tenant (least-squares slope over the idle rows): **%.2f MiB RSS** (target ≤ 2), %.2f MiB of it anonymous, %.2f MiB live heap, %.1f goroutines, **%.1f ms CPU per minute** (target ≤ 50), **%.1f requests per minute to its apiserver**, **%.2f requests per minute to the super apiserver** (target ≈ 0), %.0f watches held on its apiserver.\n",
		rss/(1<<20), anon/(1<<20), heap/(1<<20), gor, cpu*1000, treq, sreq, watches)
	if r.full != nil {
		fmt.Fprintf(&md, "\n%d objects per tenant (%.0f%% Pods) add per tenant: %.2f MiB RSS, %.2f MiB live heap, %.1f ms CPU per minute, %.1f tenant and %.2f super requests per minute.\n",
			c.objects, c.podShare*100, objRSS/(1<<20), objHeap/(1<<20), objCPU*1000, objTReq, objSReq)
	}
	fmt.Fprintf(&md, "\nLargest number of tenants: **%d** (stopped by %s).", maxN, stoppedBy)
	if r.cold != nil && r.warm != nil {
		fmt.Fprintf(&md, " At %d tenants × %d objects, a syncer restart drains every tenant's queues in **%.1f s cold** and %.1f s from a checkpoint (%.0f vs %.0f LISTs).",
			maxN, c.objects, r.cold.EmptySeconds, r.warm.EmptySeconds, r.cold.Lists, r.warm.Lists)
	}
	md.WriteString("\n")
	if r.burst != nil {
		b, s := r.burst["baseline"].(stats), r.burst["syncer"].(stats)
		fmt.Fprintf(&md, "\nBurst of %d Pods in each of the %d tenants at once: p99 %.2f s through the syncer vs %.2f s straight into the super cluster (**×%.2f**), throughput ×%.2f.\n",
			c.burstPods, maxN, s.P99, b.P99, s.P99/b.P99, s.Throughput/b.Throughput)
	}
	return os.WriteFile(filepath.Join(c.out, "result.md"), []byte(md.String()), 0o644)
}

// methodsText renders requests per minute by method as "(GET 3.0, PUT 1.0)".
func methodsText(m map[string]float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] >= 0.05 {
			parts = append(parts, fmt.Sprintf("%s %.1f", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
