package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
)

// restartConfig are the flags of the restart experiment.
type restartConfig struct {
	tenants, objects, nodes int
	podShare                float64
	interval, down, quiet   time.Duration
	timeout                 time.Duration
	out                     string
}

// restartResult is what one restart variant measured. Times are seconds from the start of the
// new process.
type restartResult struct {
	Variant string `json:"variant"`
	// Available is false when the variant could not run (the binary has no --checkpoint-store).
	Available bool   `json:"available"`
	Note      string `json:"note,omitempty"`
	// Stop is how the previous process ended: SIGTERM (graceful, final checkpoint) or SIGKILL.
	Stop string   `json:"stop"`
	Args []string `json:"args"`
	// ReadySeconds: process start → /readyz answers 200.
	ReadySeconds float64 `json:"readySeconds"`
	// EmptySeconds: process start → the sum of vcsyncer_queue_depth is 0 for every registered
	// tenant and stays 0 for --quiet (the time of the first 0 after the last non-zero scrape).
	EmptySeconds float64 `json:"emptySeconds"`
	// LastAddSeconds: process start → the last change of vcsyncer_queue_adds_total seen before
	// the queues counted as drained (when the last reconcile was asked for).
	LastAddSeconds float64 `json:"lastAddSeconds"`
	// Reconciles: vcsyncer_queue_adds_total summed over tenants and directions when the queues
	// were quiet (the new process's counters start at 0).
	Reconciles         float64 `json:"reconciles"`
	ReconcilesDownward float64 `json:"reconcilesDownward"`
	ReconcilesUpward   float64 `json:"reconcilesUpward"`
	// ReconcilesBy splits Reconciles by "<tenant>/<direction>".
	ReconcilesBy map[string]float64 `json:"reconcilesBy"`
	// Lists: apiserver_request_total{verb="LIST"} summed over the super cluster's and every
	// tenant's kube-apiserver, from just before the stop to the end of the quiet period.
	Lists         float64            `json:"lists"`
	ListsByServer map[string]float64 `json:"listsByServer"`
	// Watches: the same for verb="WATCH" (a streaming list, KEP-3157, is a WATCH), and
	// InitEvents: apiserver_init_events_total, the objects the apiservers sent as initial
	// events of a watch (what a streaming list costs).
	Watches    float64 `json:"watches"`
	InitEvents float64 `json:"initEvents"`
	// ProbeSuperSeconds: process start → the super copy of a Pod created while the syncer was
	// down exists; ProbeRunningSeconds: → that Pod is Running in its tenant.
	ProbeSuperSeconds   float64 `json:"probeSuperSeconds"`
	ProbeRunningSeconds float64 `json:"probeRunningSeconds"`
	// Checkpoint holds the new process's vcsyncer_checkpoint_* series at the end (when any),
	// ResumeModes the number of informer sources per vcsyncer_source_resume_mode mode (watch:
	// resumed from the checkpoint's position; relist-diff; cold).
	Checkpoint  map[string]float64 `json:"checkpointMetrics,omitempty"`
	ResumeModes map[string]float64 `json:"resumeModes,omitempty"`
	// SourceModes is the resume mode of each source ("<tenant>/<kind>", tenant "_super" for
	// the super cluster's).
	SourceModes map[string]string `json:"sourceModes,omitempty"`
}

// runRestart measures a syncer restart at T tenants × P objects: cold (no checkpoint) versus
// resumed from a checkpoint written at a graceful stop (SIGTERM) and from the last periodic
// checkpoint before a SIGKILL, in one run against the same control planes.
func runRestart(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("restart", flag.ExitOnError)
	var c restartConfig
	fs.IntVar(&c.tenants, "tenants", 3, "tenants")
	fs.IntVar(&c.objects, "objects", 1000, "objects per tenant (ConfigMaps and Pods, see --pod-share)")
	fs.Float64Var(&c.podShare, "pod-share", 0.5, "share of Pods among the objects")
	fs.IntVar(&c.nodes, "nodes", 20, "kwok Nodes in the super cluster (110 Pods each)")
	fs.DurationVar(&c.interval, "checkpoint-interval", 5*time.Second, "--checkpoint-interval of the syncer in the checkpoint variants")
	fs.DurationVar(&c.down, "down", 2*time.Second, "time the syncer stays down between stop and start (a probe Pod is created meanwhile)")
	fs.DurationVar(&c.quiet, "quiet", 5*time.Second, "the queues must stay empty this long to count as drained")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up after this long per phase")
	fs.StringVar(&c.out, "out", "bench-out/restart", "directory for result.json, result.csv, result.md and the syncer logs")
	_ = fs.Parse(args)
	ctrllog.SetLogger(logr.Discard()) // the Tenant reads use a controller-runtime client
	env, bin, err := startEnvAndSyncer(ctx, c.out, c.nodes, c.tenants)
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	help, _ := exec.CommandContext(ctx, bin, "run", "--help").CombinedOutput()
	ckpt := strings.Contains(string(help), "--checkpoint-store")
	ckptDir, err := os.MkdirTemp("", "vc-syncer-bench-ckpt")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ckptDir)
	withCkpt := []string{"--checkpoint-store", "file:" + filepath.Join(ckptDir, "ckpt"), "--checkpoint-interval", c.interval.String()}
	var cold []string
	if ckpt {
		cold = []string{"--checkpoint-store", "none"}
	} else {
		withCkpt = nil
		logf("this vc-syncer has no --checkpoint-store: only the cold restart is measured")
	}

	r := &restarter{c: c, env: env, bin: bin}
	// Initial sync, writing checkpoints when the binary can.
	err = r.initialSync(ctx, "initial", withCkpt)
	defer r.stop()
	if err != nil {
		return err
	}
	idleLists, err := r.idleLists(ctx, 10*time.Second)
	if err != nil {
		return err
	}
	logf("background: %.0f LIST requests over all apiservers in 10 s with the syncer idle", idleLists)

	var results []restartResult
	// 1. Cold: graceful stop, start without a checkpoint.
	res, err := r.measure(ctx, "cold", "SIGTERM", cold)
	if err != nil {
		return err
	}
	results = append(results, res)
	if ckpt {
		// Write a fresh checkpoint: a checkpointing process that then stops gracefully.
		r.p.stop()
		if err := r.start(ctx, "refresh", withCkpt); err != nil {
			return err
		}
		if _, _, err := r.drain(ctx, time.Now()); err != nil {
			return err
		}
		// 2. From the final checkpoint of a graceful stop.
		if res, err = r.measure(ctx, "checkpoint after SIGTERM", "SIGTERM", withCkpt); err != nil {
			return err
		}
		results = append(results, res)
		// 3. From the last periodic checkpoint before a SIGKILL.
		logf("waiting %s (2 checkpoint intervals) before the SIGKILL", 2*c.interval+time.Second)
		time.Sleep(2*c.interval + time.Second)
		if res, err = r.measure(ctx, "checkpoint after SIGKILL", "SIGKILL", withCkpt); err != nil {
			return err
		}
		results = append(results, res)
	} else {
		note := "the binary has no --checkpoint-store (checkpointing not merged yet)"
		results = append(results, restartResult{Variant: "checkpoint after SIGTERM", Stop: "SIGTERM", Note: note},
			restartResult{Variant: "checkpoint after SIGKILL", Stop: "SIGKILL", Note: note})
	}
	return writeRestartResults(c, results, idleLists)
}

// restarter runs and measures the syncer process of the restart experiment.
type restarter struct {
	c       restartConfig
	env     *localcluster.Environment
	bin     string
	p       *syncerProc
	metrics string // host:port of the current process's /metrics
	health  string // host:port of its /readyz
	started time.Time
	n       int
	probes  int
}

// start starts a syncer process with the given extra flags (logs in <out>/syncer-<n>-<name>.log).
func (r *restarter) start(ctx context.Context, name string, extra []string) error {
	r.n++
	r.metrics, r.health = freeAddr(), freeAddr()
	args := append([]string{"--metrics-bind-address", r.metrics, "--metrics-secure=false", "--health-probe-bind-address", r.health}, extra...)
	logPath := filepath.Join(r.c.out, fmt.Sprintf("syncer-%d-%s.log", r.n, strings.ReplaceAll(name, " ", "-")))
	p, err := startSyncer(ctx, r.env, r.bin, true, logPath, args...)
	if err != nil {
		return err
	}
	r.p, r.started = p, time.Now()
	return nil
}

// initialSync starts the first process (start, with name and extra flags), registers the
// tenants, populates them (populate) and waits until its queues are drained. Call stop after
// it, whatever it returns.
func (r *restarter) initialSync(ctx context.Context, name string, extra []string) error {
	if err := r.start(ctx, name, extra); err != nil {
		return err
	}
	if err := registerTenants(ctx, r.env); err != nil {
		return err
	}
	if err := r.populate(ctx); err != nil {
		return err
	}
	_, _, err := r.drain(ctx, time.Now())
	return err
}

// stop stops the current process, if one was started.
func (r *restarter) stop() {
	if r.p != nil {
		r.p.stop()
	}
}

// populate creates c.objects objects per tenant in namespace "bench" (ConfigMaps and Pods) and
// waits until every one has its super copy and every Pod is Running in its tenant.
func (r *restarter) populate(ctx context.Context) error {
	pods := int(float64(r.c.objects) * r.c.podShare)
	cms := r.c.objects - pods
	logf("creating %d tenants × (%d ConfigMaps + %d Pods)", len(r.env.Tenants), cms, pods)
	var loads []load
	for _, t := range r.env.Tenants {
		if err := createNamespace(ctx, t.Client, "bench"); err != nil {
			return err
		}
		loads = append(loads, load{client: t.Client, namespace: "bench", pods: pods, concurrency: 10})
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(r.env.Tenants))
	for _, t := range r.env.Tenants {
		wg.Go(func() {
			for i := range cms {
				_, err := t.Client.CoreV1().ConfigMaps("bench").Create(ctx, &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i)}, Data: map[string]string{"i": strconv.Itoa(i)},
				}, metav1.CreateOptions{})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	if _, err := runLoads(ctx, r.c.timeout, loads); err != nil {
		return err
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	cl, err := client.New(r.env.Super.RESTConfig, client.Options{Scheme: app.Scheme()})
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 2*time.Second, r.c.timeout, true, func(ctx context.Context) (bool, error) {
		for _, t := range r.env.Tenants {
			tn := &tenancyv1alpha1.Tenant{}
			if err := cl.Get(ctx, client.ObjectKey{Name: t.Name}, tn); err != nil {
				return false, nil
			}
			sel := metav1.ListOptions{LabelSelector: conversion.LabelTenantUID + "=" + string(tn.UID)}
			sp, err1 := r.env.Super.Client.CoreV1().Pods("").List(ctx, sel)
			sc, err2 := r.env.Super.Client.CoreV1().ConfigMaps("").List(ctx, sel)
			if err1 != nil || err2 != nil || len(sp.Items) < pods || len(sc.Items) < cms {
				return false, nil
			}
		}
		logf("every object has its super copy")
		return true, nil
	})
}

// drain waits until the current process's queues are empty for c.quiet and returns when they
// became empty and when vcsyncer_queue_adds_total last changed, both measured from since.
func (r *restarter) drain(ctx context.Context, since time.Time) (empty, lastAdd time.Duration, err error) {
	var lastNonZero, firstPresent, firstZeroAfter, lastAddAt time.Time
	prevAdds := -1.0
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, r.c.timeout, true, func(ctx context.Context) (bool, error) {
		if err := r.exited(); err != nil {
			return false, err
		}
		m, err := scrape(ctx, "http://"+r.metrics+"/metrics")
		if err != nil {
			return false, nil // not serving yet
		}
		now := time.Now()
		depth, adds, tenants := 0.0, 0.0, map[string]bool{}
		for _, s := range m {
			switch s.name {
			case "vcsyncer_queue_depth":
				depth += s.value
				tenants[s.labels["tenant"]] = true
			case "vcsyncer_queue_adds_total":
				adds += s.value
			}
		}
		if adds != prevAdds {
			prevAdds, lastAddAt = adds, now
		}
		if len(tenants) < len(r.env.Tenants) {
			return false, nil
		}
		if firstPresent.IsZero() {
			firstPresent = now
		}
		if depth > 0 {
			lastNonZero, firstZeroAfter = now, time.Time{}
			return false, nil
		}
		if firstZeroAfter.IsZero() {
			firstZeroAfter = now
		}
		quietSince := firstPresent
		if !lastNonZero.IsZero() {
			quietSince = firstZeroAfter
		}
		return now.Sub(quietSince) >= r.c.quiet, nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("queues not drained: %w", err)
	}
	if lastAddAt.IsZero() {
		lastAddAt = since
	}
	if lastNonZero.IsZero() {
		return firstPresent.Sub(since), lastAddAt.Sub(since), nil
	}
	return firstZeroAfter.Sub(since), lastAddAt.Sub(since), nil
}

func (r *restarter) exited() error {
	if r.p.cmd.ProcessState != nil {
		return fmt.Errorf("vc-syncer exited: %s (log %s)", r.p.cmd.ProcessState, r.p.log.Name())
	}
	// Nothing waits for the child while it runs, so an exited one is a zombie (proc(5) state Z).
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", r.p.pid()))
	if s := string(b); err != nil || strings.HasPrefix(s[strings.LastIndexByte(s, ')')+1:], " Z") {
		return fmt.Errorf("vc-syncer exited (log %s)", r.p.log.Name())
	}
	return nil
}

// idleLists returns the LIST requests all apiservers served during d with nothing changing.
func (r *restarter) idleLists(ctx context.Context, d time.Duration) (float64, error) {
	before, err := r.apiserverCounters(ctx)
	if err != nil {
		return 0, err
	}
	time.Sleep(d)
	after, err := r.apiserverCounters(ctx)
	if err != nil {
		return 0, err
	}
	total := 0.0
	for k, v := range after {
		total += v.lists - before[k].lists
	}
	return total, nil
}

type serverCounters struct{ lists, watches, initEvents float64 }

// apiserverCounters scrapes every kube-apiserver's /metrics with the admin kubeconfig.
func (r *restarter) apiserverCounters(ctx context.Context) (map[string]serverCounters, error) {
	out := map[string]serverCounters{}
	for _, cp := range r.env.ControlPlanes() {
		samples, err := apiserverMetrics(ctx, cp)
		if err != nil {
			return nil, err
		}
		var c serverCounters
		for _, s := range samples {
			switch {
			case s.name == "apiserver_request_total" && s.labels["verb"] == "LIST":
				c.lists += s.value
			case s.name == "apiserver_request_total" && s.labels["verb"] == "WATCH":
				c.watches += s.value
			case s.name == "apiserver_init_events_total":
				c.initEvents += s.value
			}
		}
		out[cp.Name] = c
	}
	return out, nil
}

// apiserverMetrics scrapes cp's kube-apiserver /metrics with its admin kubeconfig.
func apiserverMetrics(ctx context.Context, cp *localcluster.ControlPlane) ([]metricSample, error) {
	raw, err := cp.Client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s /metrics: %w", cp.Name, err)
	}
	return parseMetrics(string(raw)), nil
}

// measure stops the current process (SIGTERM or SIGKILL), creates a probe Pod in the first
// tenant while the syncer is down, starts a new process with extra flags and measures it.
func (r *restarter) measure(ctx context.Context, variant, stop string, extra []string) (restartResult, error) {
	res := restartResult{Variant: variant, Available: true, Stop: stop, Args: extra, ListsByServer: map[string]float64{}}
	logf("%s: stopping the syncer with %s", variant, stop)
	before, err := r.apiserverCounters(ctx)
	if err != nil {
		return res, err
	}
	if stop == "SIGKILL" {
		r.p.kill()
	} else {
		r.p.stop()
	}
	tenant := r.env.Tenants[0]
	r.probes++
	probe := fmt.Sprintf("probe-%d", r.probes)
	if _, err := tenant.Client.CoreV1().Pods("bench").Create(ctx, benchPod(probe), metav1.CreateOptions{}); err != nil {
		return res, err
	}
	time.Sleep(r.c.down)
	if err := r.start(ctx, variant, extra); err != nil {
		return res, err
	}
	start := r.started

	// /readyz.
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, r.c.timeout, true, func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.health+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, r.exited()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	}); err != nil {
		return res, fmt.Errorf("%s: /readyz: %w", variant, err)
	}
	res.ReadySeconds = time.Since(start).Seconds()

	// The probe Pod, in parallel with the drain.
	probeDone := make(chan error, 1)
	go func() { probeDone <- r.watchProbe(ctx, tenant, probe, start, &res) }()
	empty, lastAdd, err := r.drain(ctx, start)
	if err != nil {
		return res, fmt.Errorf("%s: %w", variant, err)
	}
	res.EmptySeconds, res.LastAddSeconds = empty.Seconds(), lastAdd.Seconds()
	if err := <-probeDone; err != nil {
		return res, fmt.Errorf("%s: probe Pod: %w", variant, err)
	}
	m, err := scrape(ctx, "http://"+r.metrics+"/metrics")
	if err != nil {
		return res, err
	}
	res.Checkpoint, res.ResumeModes, res.SourceModes = map[string]float64{}, map[string]float64{}, map[string]string{}
	res.ReconcilesBy = map[string]float64{}
	for _, s := range m {
		switch {
		case s.name == "vcsyncer_queue_adds_total" && s.labels["direction"] == "downward":
			res.ReconcilesDownward += s.value
			res.ReconcilesBy[s.labels["tenant"]+"/downward"] += s.value
		case s.name == "vcsyncer_queue_adds_total" && s.labels["direction"] == "upward":
			res.ReconcilesUpward += s.value
			res.ReconcilesBy[s.labels["tenant"]+"/upward"] += s.value
		case s.name == "vcsyncer_source_resume_mode":
			res.ResumeModes[s.labels["mode"]] += s.value
			if s.value == 1 {
				res.SourceModes[s.labels["tenant"]+"/"+s.labels["kind"]] = s.labels["mode"]
			}
		case strings.HasPrefix(s.name, "vcsyncer_checkpoint") && !strings.Contains(s.name, "_bucket"):
			res.Checkpoint[s.key()] = s.value
		}
	}
	res.Reconciles = res.ReconcilesDownward + res.ReconcilesUpward
	after, err := r.apiserverCounters(ctx)
	if err != nil {
		return res, err
	}
	for k, v := range after {
		d := v.lists - before[k].lists
		res.ListsByServer[k] = d
		res.Lists += d
		res.Watches += v.watches - before[k].watches
		res.InitEvents += v.initEvents - before[k].initEvents
	}
	logf("%s: resume modes %v, checkpoint metrics %v", variant, res.ResumeModes, res.Checkpoint)
	logf("%s: ready %.2fs, queues empty %.2fs, %.0f reconciles, %.0f LISTs (%v), %.0f WATCHes, %.0f initial watch events, probe Pod in super %.2fs, Running in tenant %.2fs",
		variant, res.ReadySeconds, res.EmptySeconds, res.Reconciles, res.Lists, res.ListsByServer, res.Watches, res.InitEvents, res.ProbeSuperSeconds, res.ProbeRunningSeconds)
	return res, nil
}

// watchProbe polls (GET, not LIST, so the apiserver LIST counters stay the syncer's) until the
// probe Pod's super copy exists and the tenant Pod is Running.
func (r *restarter) watchProbe(ctx context.Context, tenant *localcluster.ControlPlane, name string, start time.Time, res *restartResult) error {
	cl, err := client.New(r.env.Super.RESTConfig, client.Options{Scheme: app.Scheme()})
	if err != nil {
		return err
	}
	tn := &tenancyv1alpha1.Tenant{}
	if err := cl.Get(ctx, client.ObjectKey{Name: tenant.Name}, tn); err != nil {
		return err
	}
	superNS := conversion.SuperNamespace(tenant.Name, string(tn.UID), "bench")
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, r.c.timeout, true, func(ctx context.Context) (bool, error) {
		if res.ProbeSuperSeconds == 0 {
			if _, err := r.env.Super.Client.CoreV1().Pods(superNS).Get(ctx, name, metav1.GetOptions{}); err == nil {
				res.ProbeSuperSeconds = time.Since(start).Seconds()
			} else if !apierrors.IsNotFound(err) {
				return false, nil
			}
		}
		p, err := tenant.Client.CoreV1().Pods("bench").Get(ctx, name, metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			res.ProbeRunningSeconds = time.Since(start).Seconds()
			return res.ProbeSuperSeconds > 0, nil
		}
		return false, nil
	})
}

// kill SIGKILLs the process and waits for it.
func (p *syncerProc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
	p.log.Close()
}

// sample of a Prometheus text exposition.
type metricSample struct {
	name   string
	labels map[string]string
	value  float64
}

func (s metricSample) key() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s.labels)) {
		parts = append(parts, k+"="+s.labels[k])
	}
	return s.name + "{" + strings.Join(parts, ",") + "}"
}

func scrape(ctx context.Context, url string) ([]metricSample, error) {
	body, err := get(ctx, url)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	return parseMetrics(b.String()), sc.Err()
}

// parseMetrics parses the Prometheus text format's sample lines `name{k="v",...} value` (no
// timestamps, escaped quotes unsupported: the series read here have none).
func parseMetrics(text string) []metricSample {
	var out []metricSample
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		s := metricSample{name: line[:sp], labels: map[string]string{}, value: v}
		if i := strings.IndexByte(s.name, '{'); i >= 0 {
			for _, kv := range strings.Split(strings.TrimSuffix(s.name[i+1:], "}"), ",") {
				if k, val, ok := strings.Cut(kv, "="); ok {
					s.labels[k] = strings.Trim(val, `"`)
				}
			}
			s.name = s.name[:i]
		}
		out = append(out, s)
	}
	return out
}

func writeRestartResults(c restartConfig, results []restartResult, idleLists float64) error {
	if err := writeResultJSON(c.out, map[string]any{
		"date": time.Now().UTC().Format(time.RFC3339), "tenants": c.tenants, "objectsPerTenant": c.objects,
		"podShare": c.podShare, "nodes": c.nodes, "checkpointInterval": c.interval.String(), "down": c.down.String(),
		"quiet": c.quiet.String(), "idleListsIn10s": idleLists, "variants": results,
	}); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(c.out, "result.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"variant", "available", "stop", "ready_s", "queues_empty_s", "last_add_s", "reconciles", "reconciles_downward", "reconciles_upward",
		"lists", "watches", "init_events", "probe_super_s", "probe_running_s"})
	for _, r := range results {
		_ = w.Write([]string{r.Variant, strconv.FormatBool(r.Available), r.Stop, ff(r.ReadySeconds), ff(r.EmptySeconds), ff(r.LastAddSeconds), ff(r.Reconciles),
			ff(r.ReconcilesDownward), ff(r.ReconcilesUpward), ff(r.Lists), ff(r.Watches), ff(r.InitEvents), ff(r.ProbeSuperSeconds), ff(r.ProbeRunningSeconds)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}

	total := float64(c.tenants * c.objects)
	md := fmt.Sprintf("Restart of vc-syncer with %d tenants × %d objects (%.0f%% Pods, the rest ConfigMaps; %.0f objects in all), %d kwok Nodes, down %s, a probe Pod created while down; queues count as empty after %s at 0. Checkpoint interval %s.\n\n",
		c.tenants, c.objects, 100*c.podShare, total, c.nodes, c.down, c.quiet, c.interval)
	md += "| metric |"
	sep := "|---|"
	for _, r := range results {
		md += " " + r.Variant + " |"
		sep += "---|"
	}
	for _, r := range results[1:] {
		md += " " + r.Variant + " / cold |"
		sep += "---|"
	}
	md += "\n" + sep + "\n"
	row := func(name string, get func(restartResult) float64, format string) {
		md += "| " + name + " |"
		for _, r := range results {
			if r.Available {
				md += " " + fmt.Sprintf(format, get(r)) + " |"
			} else {
				md += " n/a |"
			}
		}
		for _, r := range results[1:] {
			if r.Available && results[0].Available && get(results[0]) != 0 {
				md += fmt.Sprintf(" %.3f |", get(r)/get(results[0]))
			} else {
				md += " – |"
			}
		}
		md += "\n"
	}
	row("process start → /readyz (s)", func(r restartResult) float64 { return r.ReadySeconds }, "%.2f")
	row("process start → queues empty (s)", func(r restartResult) float64 { return r.EmptySeconds }, "%.2f")
	row("process start → last queue add (s)", func(r restartResult) float64 { return r.LastAddSeconds }, "%.2f")
	row("reconciles after restart (queue adds)", func(r restartResult) float64 { return r.Reconciles }, "%.0f")
	row("reconciles / objects (%)", func(r restartResult) float64 { return 100 * r.Reconciles / total }, "%.1f")
	row("LIST requests, all apiservers", func(r restartResult) float64 { return r.Lists }, "%.0f")
	row("WATCH requests, all apiservers", func(r restartResult) float64 { return r.Watches }, "%.0f")
	row("initial watch events sent (apiserver_init_events_total)", func(r restartResult) float64 { return r.InitEvents }, "%.0f")
	row("Pod created while down: in super (s after start)", func(r restartResult) float64 { return r.ProbeSuperSeconds }, "%.2f")
	row("Pod created while down: Running in tenant (s after start)", func(r restartResult) float64 { return r.ProbeRunningSeconds }, "%.2f")
	md += "| informer sources by resume mode |"
	for _, r := range results {
		var modes []string
		for _, m := range []string{"watch", "relist-diff", "cold"} {
			if v, ok := r.ResumeModes[m]; ok {
				modes = append(modes, fmt.Sprintf("%s %.0f", m, v))
			}
		}
		md += " " + strings.Join(modes, ", ") + " |"
	}
	md += strings.Repeat(" |", len(results)-1) + "\n"
	md += fmt.Sprintf("\nBackground: %.0f LIST requests over all apiservers in 10 s with the syncer idle (controllers of the control planes themselves).\n", idleLists)
	for _, r := range results {
		if !r.Available {
			md += fmt.Sprintf("\n%s: not measured, %s.\n", r.Variant, r.Note)
		}
	}
	return os.WriteFile(filepath.Join(c.out, "result.md"), []byte(md), 0o644)
}

func ff(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
