package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/policy"
)

// fairnessConfig holds the fairness experiment's sizes.
type fairnessConfig struct {
	syncerFlags         []string      // extra vc-syncer flags (--syncer-flag)
	regularRate         float64       // Pods/s of each regular tenant (open loop)
	regularDuration     time.Duration // how long each regular tenant creates Pods
	greedyPods          int           // Pods of each greedy tenant, created at once
	concurrency         int           // concurrent create calls of each bursting tenant
	slowRate            float64       // Pods/s of the slow tenant (open loop, until the regular Pods run)
	webhookDelay        time.Duration // the slow tenant's webhook answers after this long
	weightedPods        int           // Pods of each weighted tenant, created at once
	weights             []int32       // weights of the weighted tenants
	nodes               int
	repeat              int // runs of every case; result.json's top-level keys are the runs' medians
	out                 string
	timeout             time.Duration
	command             string
	startedAt, finished time.Time
}

// The fairness experiment's five tenant control planes and their roles.
const (
	fairRegular1 = iota // regular in (a)–(d), weight 1; third weighted tenant in (e)
	fairRegular2        // regular in (a)–(d)
	fairGreedy1         // greedy in (b), (c); first weighted tenant in (e)
	fairGreedy2         // greedy in (b), (c); second weighted tenant in (e)
	fairSlow            // slow in (d)
	fairTenants
)

// weightedTenants are the indices of the tenants of case (e), in the order of --weights.
var weightedTenants = []int{fairGreedy1, fairGreedy2, fairRegular1}

// fairnessCase is one case's outcome. Latencies count from each Pod's scheduled arrival (open
// loop) or the start of its create call (bursts) to Running as seen in its tenant.
type fairnessCase struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	FairQueuing bool   `json:"fairQueuing"`
	// Regular: the two regular tenants' Pods together (zero in case (e)).
	Regular stats `json:"regular"`
	// Others: the greedy tenants' Pods, the slow tenant's Pods that were Running when the
	// regular ones were, or the weighted tenants' Pods.
	Others stats `json:"others"`
	// All: every Pod of the case that became Running; its throughput is the super cluster's.
	All stats `json:"all"`
	// OthersCreated counts the greedy/slow/weighted Pods created (the slow tenant's keep
	// coming until the regular ones are Running).
	OthersCreated   int     `json:"othersCreated"`
	DurationSeconds float64 `json:"durationSeconds"`
	// CleanupSeconds is the time from deleting the case's namespaces until the super cluster
	// had none of them left (0 for the last case, whose control planes are stopped instead).
	CleanupSeconds float64 `json:"cleanupSeconds"`
	// RegularPhases and OthersPhases split the latency (p50 and p99, seconds) into: tenant
	// create → super Pod seen ("downward": syncer queue and processing), super Pod seen →
	// super Pod Running ("super": super scheduler and kwok), super Running → tenant Running
	// ("upward": syncer queue, binding and status).
	RegularPhases map[string][2]float64 `json:"regularPhasesP50P99Seconds"`
	OthersPhases  map[string][2]float64 `json:"othersPhasesP50P99Seconds"`
	// RegularSyncerPhases and OthersSyncerPhases are the syncer's own split of the Pods'
	// creation (vcsyncer_pod_creation_phase_duration_seconds during the case: Δsum ÷ Δcount
	// over the group's tenants, mean seconds by phase: downward_queue, downward_process,
	// super_scheduling, upward_queue, upward_process).
	RegularSyncerPhases map[string]float64 `json:"regularSyncerPhaseMeanSeconds"`
	OthersSyncerPhases  map[string]float64 `json:"othersSyncerPhaseMeanSeconds"`
	// RegularSyncerCalls and OthersSyncerCalls split downward_process further: the mean time
	// the group's Pods' downward reconciles waited for the tenant's TokenRequests
	// (token_request) and the super create (super_create), and then for the super watch to
	// deliver the created Pod to the syncer's informer (super_watch) and the informer to its
	// handler (super_informer), from vcsyncer_pod_creation_call_duration_seconds during the
	// case.
	RegularSyncerCalls map[string]float64 `json:"regularSyncerCallMeanSeconds"`
	OthersSyncerCalls  map[string]float64 `json:"othersSyncerCallMeanSeconds"`
	// RegularSyncerHeld is the time the regular tenants' new Pods spent inside the syncer
	// during the case (vcsyncer_pod_creation_syncer_held_seconds of those tenants, Δ of the
	// histogram between scrapes before and after the case; p50/p99 read from its buckets);
	// zero in (b-direct), where no syncer is involved.
	RegularSyncerHeld phaseStats `json:"regularSyncerHeld"`
	// Direct is true for a case run straight against the super cluster (no tenant, no syncer).
	Direct  bool `json:"direct,omitempty"`
	short   string
	regular []float64
	// scrapes are the syncer's metrics every 0.5 s during the case (case (e) only).
	scrapes []timedScrape
}

// weightedShare is one tenant's share of the Pods that became Running in the saturated
// interval of case (e).
type weightedShare struct {
	Tenant  string  `json:"tenant"`
	Weight  int32   `json:"weight"`
	Share   float64 `json:"share"`
	Target  float64 `json:"target"`
	Running int     `json:"running"`
	// Error is share ÷ target − 1.
	Error float64 `json:"error"`
}

// fairnessRun is one run of the cases. Its first keys are a contract read by other tools; in
// result.json they appear at the top level (the runs' medians) and in runs[] (each run).
type fairnessRun struct {
	RegularP99Alone         float64         `json:"regularP99AloneSeconds"`
	RegularP99GreedyFair    float64         `json:"regularP99GreedyFairSeconds"`
	RegularP99GreedyFIFO    float64         `json:"regularP99GreedyFIFOSeconds"`
	RegularP99SlowNeighbour float64         `json:"regularP99SlowNeighbourSeconds"`
	WeightedShares          []weightedShare `json:"weightedShares"`
	// RegularP99GreedyDirect is the regular Pods' p99 in (b-direct): the same regular and
	// greedy Pods created straight into the super cluster, the fairness tenants get from one
	// shared cluster without virtual clusters.
	RegularP99GreedyDirect float64 `json:"regularP99GreedyDirectSeconds"`
	// RegularSyncerHeldP99* are the regular Pods' syncer-held p99 (fairnessCase.RegularSyncerHeld)
	// in (a), (b) and (d).
	RegularSyncerHeldP99Alone         float64 `json:"regularSyncerHeldP99AloneSeconds"`
	RegularSyncerHeldP99GreedyFair    float64 `json:"regularSyncerHeldP99GreedyFairSeconds"`
	RegularSyncerHeldP99SlowNeighbour float64 `json:"regularSyncerHeldP99SlowNeighbourSeconds"`

	RegularP50Alone         float64 `json:"regularP50AloneSeconds"`
	RegularP50GreedyDirect  float64 `json:"regularP50GreedyDirectSeconds"`
	RegularP50GreedyFair    float64 `json:"regularP50GreedyFairSeconds"`
	RegularP50GreedyFIFO    float64 `json:"regularP50GreedyFIFOSeconds"`
	RegularP50SlowNeighbour float64 `json:"regularP50SlowNeighbourSeconds"`
	// Ratios of the regular tenants' p99 to case (a)'s, in the same run.
	RatioGreedyFairToAloneP99    float64 `json:"ratioGreedyFairToAloneP99"`
	RatioGreedyFIFOToAloneP99    float64 `json:"ratioGreedyFIFOToAloneP99"`
	RatioSlowNeighbourToAloneP99 float64 `json:"ratioSlowNeighbourToAloneP99"`
	// RatioGreedyFairToGreedyDirectP99 is (b) ÷ (b-direct) at p99, in the same run: sharing
	// through vc-syncer against sharing one cluster.
	RatioGreedyFairToGreedyDirectP99 float64 `json:"ratioGreedyFairToGreedyDirectP99"`
	// MaxWeightedShareRelativeError is the largest |share ÷ target − 1| of case (e); at the top
	// level, the largest over the runs.
	MaxWeightedShareRelativeError float64 `json:"maxWeightedShareRelativeError"`
	// WeightedInterval is the saturated interval of case (e), in seconds from the case's start:
	// from the first instant every weighted tenant had a backlog (a Pod created and not yet
	// Running) to the first instant after it that one had none.
	WeightedInterval *weightedInterval `json:"weightedInterval,omitempty"`
	// AdmittedShares are case (e)'s shares of what the syncer decides: the Pods whose super
	// copies were created while every weighted tenant had Pods waiting in the syncer (created
	// in the tenant, no super copy yet), from the first instant all had one to the first
	// instant one had none; Running counts those super copies. WeightedShares count Running
	// Pods while every tenant had a Pod not yet Running, which includes the end of a tenant's
	// burst, when all its Pods are in the super cluster and the syncer, having none of its
	// Pods to send, gives its share to the others (work-conserving).
	// MaxAdmittedShareRelativeError is the largest |share ÷ target − 1| of them (at the top
	// level, of any run); AdmittedInterval their interval.
	AdmittedShares                []weightedShare   `json:"admittedShares,omitempty"`
	MaxAdmittedShareRelativeError float64           `json:"maxAdmittedShareRelativeError"`
	AdmittedInterval              *weightedInterval `json:"admittedInterval,omitempty"`
	// WeightedTenantSamples say where each weighted tenant's new Pods were inside the syncer
	// during the admitted interval (queue, workers, admission window), from the syncer's gauges
	// every 0.5 s; AdmissionWindowMean is the window's mean size over the same scrapes.
	WeightedTenantSamples []weightedTenantSample `json:"weightedTenantSamples,omitempty"`
	AdmissionWindowMean   float64                `json:"admissionWindowMean,omitempty"`
	Cases                 []fairnessCase         `json:"cases,omitempty"`
	WebhookAnswered       map[string]int         `json:"webhookAnswered,omitempty"`
	SyncerCPUSeconds      map[string]float64     `json:"syncerCPUSecondsByProcess,omitempty"`
	Seconds               float64                `json:"seconds,omitempty"`
}

type weightedInterval struct {
	Start   float64 `json:"startSeconds"`
	End     float64 `json:"endSeconds"`
	Running int     `json:"running"`
}

// fairnessResult is result.json of the fairness experiment: with --repeat 1 the one run's keys
// at the top level; with more, the top-level keys are the medians over runs (each ratio the
// median of the runs' ratios; maxWeightedShareRelativeError the largest of any run; a
// weighted tenant's share and error their medians) and runs[] holds every run.
type fairnessResult struct {
	fairnessRun
	Repeat int           `json:"repeat"`
	Runs   []fairnessRun `json:"runs,omitempty"`

	Date         string            `json:"date"`
	Command      string            `json:"command"`
	TotalSeconds float64           `json:"totalSeconds"`
	Nodes        int               `json:"nodes"`
	RegularRate  float64           `json:"regularRatePodsPerSecond"`
	RegularPods  int               `json:"regularPodsPerTenant"`
	GreedyPods   int               `json:"greedyPodsPerTenant"`
	Concurrency  int               `json:"concurrencyPerBurstingTenant"`
	SlowRate     float64           `json:"slowRatePodsPerSecond"`
	WebhookDelay float64           `json:"webhookDelaySeconds"`
	WeightedPods int               `json:"weightedPodsPerTenant"`
	Policy       string            `json:"policy"`
	PolicyQuota  map[string]string `json:"policyQuota"`
	SyncerArgs   string            `json:"syncerArgs"`
}

// medianRun returns the run of result.json's top level for runs (see fairnessResult): runs[0]
// itself for one run, else the medians; nil runs give the zero value.
func medianRun(runs []fairnessRun) fairnessRun {
	if len(runs) <= 1 {
		if len(runs) == 0 {
			return fairnessRun{}
		}
		return runs[0]
	}
	med := func(get func(r *fairnessRun) float64) float64 {
		v := make([]float64, len(runs))
		for i := range runs {
			v[i] = get(&runs[i])
		}
		return median(v)
	}
	m := fairnessRun{
		RegularP99Alone:                   med(func(r *fairnessRun) float64 { return r.RegularP99Alone }),
		RegularP99GreedyFair:              med(func(r *fairnessRun) float64 { return r.RegularP99GreedyFair }),
		RegularP99GreedyFIFO:              med(func(r *fairnessRun) float64 { return r.RegularP99GreedyFIFO }),
		RegularP99SlowNeighbour:           med(func(r *fairnessRun) float64 { return r.RegularP99SlowNeighbour }),
		RegularP99GreedyDirect:            med(func(r *fairnessRun) float64 { return r.RegularP99GreedyDirect }),
		RegularSyncerHeldP99Alone:         med(func(r *fairnessRun) float64 { return r.RegularSyncerHeldP99Alone }),
		RegularSyncerHeldP99GreedyFair:    med(func(r *fairnessRun) float64 { return r.RegularSyncerHeldP99GreedyFair }),
		RegularSyncerHeldP99SlowNeighbour: med(func(r *fairnessRun) float64 { return r.RegularSyncerHeldP99SlowNeighbour }),
		RegularP50Alone:                   med(func(r *fairnessRun) float64 { return r.RegularP50Alone }),
		RegularP50GreedyDirect:            med(func(r *fairnessRun) float64 { return r.RegularP50GreedyDirect }),
		RegularP50GreedyFair:              med(func(r *fairnessRun) float64 { return r.RegularP50GreedyFair }),
		RegularP50GreedyFIFO:              med(func(r *fairnessRun) float64 { return r.RegularP50GreedyFIFO }),
		RegularP50SlowNeighbour:           med(func(r *fairnessRun) float64 { return r.RegularP50SlowNeighbour }),
		RatioGreedyFairToAloneP99:         med(func(r *fairnessRun) float64 { return r.RatioGreedyFairToAloneP99 }),
		RatioGreedyFIFOToAloneP99:         med(func(r *fairnessRun) float64 { return r.RatioGreedyFIFOToAloneP99 }),
		RatioSlowNeighbourToAloneP99:      med(func(r *fairnessRun) float64 { return r.RatioSlowNeighbourToAloneP99 }),
		RatioGreedyFairToGreedyDirectP99:  med(func(r *fairnessRun) float64 { return r.RatioGreedyFairToGreedyDirectP99 }),
	}
	for _, r := range runs {
		m.MaxWeightedShareRelativeError = max(m.MaxWeightedShareRelativeError, r.MaxWeightedShareRelativeError)
		m.MaxAdmittedShareRelativeError = max(m.MaxAdmittedShareRelativeError, r.MaxAdmittedShareRelativeError)
	}
	m.WeightedShares = medianShares(runs, func(r *fairnessRun) []weightedShare { return r.WeightedShares })
	m.AdmittedShares = medianShares(runs, func(r *fairnessRun) []weightedShare { return r.AdmittedShares })
	return m
}

// medianShares returns, per tenant of the first run's shares (of), the median share, error and
// count over the runs.
func medianShares(runs []fairnessRun, of func(*fairnessRun) []weightedShare) []weightedShare {
	var out []weightedShare
	for i, w := range of(&runs[0]) {
		share, errs, running := make([]float64, 0, len(runs)), make([]float64, 0, len(runs)), make([]float64, 0, len(runs))
		for j := range runs {
			if ws := of(&runs[j]); i < len(ws) {
				share = append(share, ws[i].Share)
				errs = append(errs, ws[i].Error)
				running = append(running, float64(ws[i].Running))
			}
		}
		w.Share, w.Error, w.Running = median(share), median(errs), int(median(running))
		out = append(out, w)
	}
	return out
}

// admittedSamples returns byTenant's samples with their super time as the end of their wait
// (running), so that saturatedInterval and sharesIn measure the Pods waiting in the syncer and
// the super copies it created; Pods whose super copy was never seen are left out.
func admittedSamples(byTenant [][]sample) [][]sample {
	out := make([][]sample, len(byTenant))
	for i, l := range byTenant {
		for _, s := range l {
			if !s.super.IsZero() {
				out[i] = append(out[i], sample{key: s.key, created: s.created, running: s.super})
			}
		}
	}
	return out
}

// median returns the median of v (the mean of the middle two for an even count), 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// runFairness runs the fairness experiment: cases (a)–(e) one after the other on the same
// control planes with the syncer's default settings, then writes result.json, result.md and
// latency.png (see the usage text).
func runFairness(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("fairness", flag.ExitOnError)
	c := fairnessConfig{startedAt: time.Now(), command: strings.Join(append([]string{"go run ./test/bench fairness"}, args...), " ")}
	fs.Float64Var(&c.regularRate, "regular-rate", 5, "Pods/s of each of the 2 regular tenants (open loop)")
	fs.DurationVar(&c.regularDuration, "regular-duration", 20*time.Second, "how long each regular tenant creates Pods")
	fs.IntVar(&c.greedyPods, "greedy-pods", 500, "Pods of each of the 2 greedy tenants in (b) and (c), created at once")
	fs.IntVar(&c.concurrency, "concurrency", 30, "concurrent create calls of each greedy and weighted tenant")
	fs.Float64Var(&c.slowRate, "slow-rate", 15, "Pods/s the slow tenant of (d) creates until the regular Pods are Running")
	fs.DurationVar(&c.webhookDelay, "webhook-delay", 2*time.Second, "the slow tenant's webhook answers pods/binding, serviceaccounts/token and pods/status after this long")
	fs.IntVar(&c.weightedPods, "weighted-pods", 400, "Pods of each weighted tenant in (e), created at once")
	weights := fs.String("weights", "3,1,1", "weights of the 3 tenants of (e)")
	fs.IntVar(&c.repeat, "repeat", 1, "run every case this many times on the same control planes; result.json's top-level keys are then the medians, runs[] each run")
	fs.IntVar(&c.nodes, "nodes", 14, "kwok Nodes (110 Pods each; every case's Pods are deleted before the next)")
	fs.StringVar(&c.out, "out", "bench-out/fairness", "directory for result.json, result.md, latency.png and the syncer logs")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "give up after this long per case")
	fs.Func("syncer-flag", "extra flag for every vc-syncer run (repeatable; the committed results use none: default settings)", func(v string) error {
		c.syncerFlags = append(c.syncerFlags, v)
		return nil
	})
	_ = fs.Parse(args)
	if c.repeat < 1 {
		return fmt.Errorf("--repeat: want at least 1, got %d", c.repeat)
	}
	for _, w := range strings.Split(*weights, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(w), 10, 32)
		if err != nil || v < 1 {
			return fmt.Errorf("--weights: %q is not a positive integer", w)
		}
		c.weights = append(c.weights, int32(v))
	}
	if len(c.weights) != len(weightedTenants) {
		return fmt.Errorf("--weights: want %d weights, got %d", len(weightedTenants), len(c.weights))
	}
	ctrllog.SetLogger(logr.Discard()) // the Tenant reads use a controller-runtime client
	env, bin, err := startEnvAndSyncer(ctx, c.out, c.nodes, fairTenants)
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	if err := app.InstallCRD(ctx, env.Super.RESTConfig); err != nil {
		return err
	}
	cl, err := client.New(env.Super.RESTConfig, client.Options{Scheme: app.Scheme()})
	if err != nil {
		return err
	}
	quota, err := createBenchPolicy(ctx, cl)
	if err != nil {
		return err
	}
	f := &fairness{c: c, env: env, bin: bin, cl: cl}
	defer f.stopSyncer()
	hook, err := startSlowWebhook(c.webhookDelay)
	if err != nil {
		return err
	}
	defer hook.stop()
	res := fairnessResult{Policy: "TenantPolicy default: the built-in bounds (pkg/policy Builtin) with limits.quota raised so that no case is capped",
		PolicyQuota: quota, Repeat: c.repeat}
	for n := 1; n <= c.repeat; n++ {
		r, err := f.runOnce(ctx, n, hook)
		if err != nil {
			if c.repeat > 1 {
				return fmt.Errorf("run %d: %w", n, err)
			}
			return err
		}
		res.Runs = append(res.Runs, r)
	}
	res.fairnessRun = medianRun(res.Runs)
	if c.repeat == 1 {
		res.Runs = nil
	}
	c.finished = time.Now()
	res.Date, res.Command, res.TotalSeconds = c.startedAt.UTC().Format(time.RFC3339), c.command, c.finished.Sub(c.startedAt).Seconds()
	res.Nodes, res.RegularRate, res.RegularPods = c.nodes, c.regularRate, int(c.regularRate*c.regularDuration.Seconds())
	res.GreedyPods, res.Concurrency, res.SlowRate, res.WebhookDelay, res.WeightedPods = c.greedyPods, c.concurrency, c.slowRate, c.webhookDelay.Seconds(), c.weightedPods
	res.SyncerArgs = "defaults (no worker flags)"
	if len(c.syncerFlags) > 0 {
		res.SyncerArgs = strings.Join(c.syncerFlags, " ") + " (--syncer-flag)"
	}
	res.SyncerArgs += "; --fair-queuing=false in (c) only; --metrics-bind-address <free port> --metrics-secure=false to read the syncer's phase histogram"
	if err := writeFairnessResults(c, res); err != nil {
		return err
	}
	m := res.fairnessRun
	logf("done in %s (%d runs; medians): regular p99 (a) %.2fs (b-direct) %.2fs (b) %.2fs (c) %.2fs (d) %.2fs; (b)/(b-direct) %.2f (d)/(a) %.2f; held p99 (a) %.3fs (b) %.3fs (d) %.3fs; max share error %.1f%%; results in %s",
		c.finished.Sub(c.startedAt).Round(time.Second), c.repeat, m.RegularP99Alone, m.RegularP99GreedyDirect, m.RegularP99GreedyFair, m.RegularP99GreedyFIFO, m.RegularP99SlowNeighbour,
		m.RatioGreedyFairToGreedyDirectP99, m.RatioSlowNeighbourToAloneP99, m.RegularSyncerHeldP99Alone, m.RegularSyncerHeldP99GreedyFair, m.RegularSyncerHeldP99SlowNeighbour,
		100*m.MaxWeightedShareRelativeError, c.out)
	return nil
}

// runOnce runs the cases once, in order: (a), (b-direct), (b), (c), (d), (e), and returns the
// run's figures. Run n's syncer logs are syncer-<name>.log (run 1) or syncer-<name>-run<n>.log;
// every case's namespaces are deleted before the next, and (e)'s too unless n is the last run.
func (f *fairness) runOnce(ctx context.Context, n int, hook *slowWebhook) (fairnessRun, error) {
	c, env := f.c, f.env
	t0 := time.Now()
	f.cpu, f.run = map[string]float64{}, n
	if c.repeat > 1 {
		logf("run %d of %d", n, c.repeat)
	}
	regularPods := int(c.regularRate * c.regularDuration.Seconds())
	regular := func(ns string, delay time.Duration) []load {
		return []load{
			{client: env.Tenants[fairRegular1].Client, namespace: ns, pods: regularPods, rate: c.regularRate, concurrency: 4, delay: delay},
			{client: env.Tenants[fairRegular2].Client, namespace: ns, pods: regularPods, rate: c.regularRate, concurrency: 4, delay: delay},
		}
	}
	regularNames := []int{fairRegular1, fairRegular2}

	// (a) and (b): fair queuing (the default).
	if err := f.startSyncer(ctx, true, "fair-1", nil); err != nil {
		return fairnessRun{}, err
	}
	a, _, err := f.runCase(ctx, "a", "alone", "regular tenants alone", regularNames, regular("case-a", 0), 2, false, false)
	if err != nil {
		return fairnessRun{}, err
	}
	greedy := func(ns string) []load {
		return []load{
			{client: env.Tenants[fairGreedy1].Client, namespace: ns, pods: c.greedyPods, concurrency: c.concurrency},
			{client: env.Tenants[fairGreedy2].Client, namespace: ns, pods: c.greedyPods, concurrency: c.concurrency},
		}
	}
	// (b-direct): the loads of (b), each tenant's in a namespace of its own, created straight
	// into the super cluster (the syncer runs, idle).
	var direct []load
	for i, l := range append(regular("", 500*time.Millisecond), greedy("")...) {
		l.client, l.namespace = env.Super.Client, fmt.Sprintf("fair-direct-%d", i+1)
		direct = append(direct, l)
	}
	bd, err := f.runDirectCase(ctx, "b-direct", "greedy neighbours, one shared cluster",
		"the Pods of (b) created straight into the super cluster (no virtual clusters)", direct, 2)
	if err != nil {
		return fairnessRun{}, err
	}
	// The regular tenants start just after the greedy burst, when its Pods fill the queues.
	withGreedy := []int{fairRegular1, fairRegular2, fairGreedy1, fairGreedy2}
	b, _, err := f.runCase(ctx, "b", "greedy neighbours, fair queuing", "regular tenants beside 2 greedy bursts, fair queuing", withGreedy,
		append(regular("case-b", 500*time.Millisecond), greedy("case-b")...), 2, false, false)
	if err != nil {
		return fairnessRun{}, err
	}
	// (c): one FIFO, no admission window.
	if err := f.startSyncer(ctx, false, "fifo", nil); err != nil {
		return fairnessRun{}, err
	}
	cc, _, err := f.runCase(ctx, "c", "greedy neighbours, one FIFO", "regular tenants beside 2 greedy bursts, --fair-queuing=false", withGreedy,
		append(regular("case-c", 500*time.Millisecond), greedy("case-c")...), 2, false, false)
	if err != nil {
		return fairnessRun{}, err
	}
	// (d) and (e): fair queuing again, with the weights of (e) (tenants idle in (d)).
	tw := map[string]int32{}
	for i, ti := range weightedTenants {
		tw[env.Tenants[ti].Name] = c.weights[i]
	}
	if err := f.startSyncer(ctx, true, "fair-2", tw); err != nil {
		return fairnessRun{}, err
	}
	slow := env.Tenants[fairSlow]
	if err := createNamespace(ctx, slow.Client, "case-d"); err != nil {
		return fairnessRun{}, err
	}
	if err := hook.install(ctx, slow.Client, "case-d"); err != nil {
		return fairnessRun{}, err
	}
	logf("(d): webhook %s installed in %s (%s per request)", hook.url(), slow.Name, c.webhookDelay)
	answered0 := hook.answered()
	// The regular tenants start once the slow tenant's Pods hold the workers.
	slowLoad := load{client: slow.Client, namespace: "case-d", pods: int(c.slowRate*c.timeout.Seconds()) + 1, rate: c.slowRate, concurrency: 8, background: true}
	d, _, err := f.runCase(ctx, "d", "slow neighbour", "regular tenants beside a slow tenant (webhook)", []int{fairRegular1, fairRegular2, fairSlow},
		append(regular("case-d", 3*time.Second), slowLoad), 2, false, false, func(ctx context.Context) error { return uninstall(ctx, slow.Client) })
	if err != nil {
		return fairnessRun{}, err
	}
	r := fairnessRun{WebhookAnswered: map[string]int{}}
	for k, v := range hook.answered() {
		if dv := v - answered0[k]; dv > 0 {
			r.WebhookAnswered[k] = dv
		}
	}
	// (e): weighted, all saturated.
	var wl []load
	for _, ti := range weightedTenants {
		wl = append(wl, load{client: env.Tenants[ti].Client, namespace: "case-e", pods: c.weightedPods, concurrency: c.concurrency})
	}
	e, byLoad, err := f.runCase(ctx, "e", "weighted", "3 weighted tenants, all saturated", weightedTenants, wl, 0, n == c.repeat, true)
	if err != nil {
		return fairnessRun{}, err
	}
	f.stopSyncer()
	start, end, ok := saturatedInterval(byLoad)
	if !ok {
		return fairnessRun{}, fmt.Errorf("(e): the weighted tenants never all had a backlog at once")
	}
	shares, counts, running := sharesIn(byLoad, start, end)
	sum := int32(0)
	for _, w := range c.weights {
		sum += w
	}
	first := byLoad[0][0].created
	for _, l := range byLoad {
		for _, s := range l {
			if s.created.Before(first) {
				first = s.created
			}
		}
	}
	r.WeightedInterval = &weightedInterval{Start: start.Sub(first).Seconds(), End: end.Sub(first).Seconds(), Running: running}
	// toShares turns sharesIn's figures into weightedShares and their largest relative error.
	toShares := func(shares []float64, counts []int) ([]weightedShare, float64) {
		var out []weightedShare
		worst := 0.0
		for i, ti := range weightedTenants {
			target := float64(c.weights[i]) / float64(sum)
			ws := weightedShare{Tenant: env.Tenants[ti].Name, Weight: c.weights[i], Share: shares[i], Target: target,
				Running: counts[i], Error: shares[i]/target - 1}
			out = append(out, ws)
			worst = max(worst, math.Abs(ws.Error))
		}
		return out, worst
	}
	r.WeightedShares, r.MaxWeightedShareRelativeError = toShares(shares, counts)
	admitted := admittedSamples(byLoad)
	if start, end, ok := saturatedInterval(admitted); ok {
		shares, counts, n := sharesIn(admitted, start, end)
		r.AdmittedInterval = &weightedInterval{Start: start.Sub(first).Seconds(), End: end.Sub(first).Seconds(), Running: n}
		r.AdmittedShares, r.MaxAdmittedShareRelativeError = toShares(shares, counts)
		var names []string
		for _, ti := range weightedTenants {
			names = append(names, env.Tenants[ti].Name)
		}
		r.WeightedTenantSamples, r.AdmissionWindowMean = tenantSamplesIn(e.scrapes, start, end, names)
	} else {
		logf("(e): the weighted tenants never all had Pods waiting in the syncer at once")
	}

	e.scrapes = nil // summarised above; not kept in r.Cases
	r.Cases = []fairnessCase{a, bd, b, cc, d, e}
	r.RegularP99Alone, r.RegularP50Alone = a.Regular.P99, a.Regular.P50
	r.RegularP99GreedyDirect, r.RegularP50GreedyDirect = bd.Regular.P99, bd.Regular.P50
	r.RegularP99GreedyFair, r.RegularP50GreedyFair = b.Regular.P99, b.Regular.P50
	r.RegularP99GreedyFIFO, r.RegularP50GreedyFIFO = cc.Regular.P99, cc.Regular.P50
	r.RegularP99SlowNeighbour, r.RegularP50SlowNeighbour = d.Regular.P99, d.Regular.P50
	r.RegularSyncerHeldP99Alone, r.RegularSyncerHeldP99GreedyFair, r.RegularSyncerHeldP99SlowNeighbour = a.RegularSyncerHeld.P99, b.RegularSyncerHeld.P99, d.RegularSyncerHeld.P99
	r.RatioGreedyFairToAloneP99 = b.Regular.P99 / a.Regular.P99
	r.RatioGreedyFIFOToAloneP99 = cc.Regular.P99 / a.Regular.P99
	r.RatioSlowNeighbourToAloneP99 = d.Regular.P99 / a.Regular.P99
	r.RatioGreedyFairToGreedyDirectP99 = b.Regular.P99 / bd.Regular.P99
	r.SyncerCPUSeconds, r.Seconds = f.cpu, time.Since(t0).Seconds()
	logf("run %d done in %s: regular p99 (a) %.2fs (b-direct) %.2fs (b) %.2fs (c) %.2fs (d) %.2fs; (b)/(b-direct) %.2f (d)/(a) %.2f; held p99 (a) %.3fs (b) %.3fs (d) %.3fs; shares %s; admitted shares %s",
		n, time.Since(t0).Round(time.Second), a.Regular.P99, bd.Regular.P99, b.Regular.P99, cc.Regular.P99, d.Regular.P99,
		r.RatioGreedyFairToGreedyDirectP99, r.RatioSlowNeighbourToAloneP99, r.RegularSyncerHeldP99Alone, r.RegularSyncerHeldP99GreedyFair, r.RegularSyncerHeldP99SlowNeighbour,
		sharesText(r.WeightedShares), sharesText(r.AdmittedShares))
	return r, nil
}

// benchPolicyQuota returns the built-in limits.quota with the Pod count, CPU and memory raised
// far above what the experiment creates in one namespace, so that the bounds cost what they
// cost in production (one ResourceQuota and one LimitRange per super namespace) but cap nothing.
func benchPolicyQuota() corev1.ResourceList {
	q := policy.Builtin().Limits.Quota
	for name, v := range map[corev1.ResourceName]string{
		corev1.ResourcePods: "100000", corev1.ResourceRequestsCPU: "10000", corev1.ResourceLimitsCPU: "100000",
		corev1.ResourceRequestsMemory: "100Ti", corev1.ResourceLimitsMemory: "1000Ti",
	} {
		q[name] = resource.MustParse(v)
	}
	return q
}

// createBenchPolicy creates the TenantPolicy "default" with benchPolicyQuota (every other field
// unset, so built-in) and returns the quota as strings.
func createBenchPolicy(ctx context.Context, cl client.Client) (map[string]string, error) {
	q := benchPolicyQuota()
	p := &tenancyv1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: tenancyv1alpha1.DefaultPolicyName},
		Spec: tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{Quota: q}}}
	if err := cl.Create(ctx, p); err != nil {
		return nil, fmt.Errorf("create TenantPolicy default: %w", err)
	}
	out := map[string]string{}
	for k, v := range q {
		out[string(k)] = v.String()
	}
	return out, nil
}

// fairness runs the cases of the fairness experiment.
type fairness struct {
	c       fairnessConfig
	env     *localcluster.Environment
	bin     string
	cl      client.Client
	p       *syncerProc
	cpu     map[string]float64 // CPU seconds of each syncer process of the current run, by log name
	run     int                // the current run, from 1
	pn      string
	fair    bool   // the running syncer's --fair-queuing
	metrics string // the running syncer's metrics host:port
}

// startSyncer (re)starts the syncer (default flags but --fair-queuing), with Tenant weights by
// name (1 for the others), and waits until it has synced every tenant's caches.
func (f *fairness) startSyncer(ctx context.Context, fair bool, name string, weights map[string]int32) error {
	f.stopSyncer()
	f.metrics = freeAddr()
	logName := "syncer-" + name
	if f.run > 1 {
		logName += fmt.Sprintf("-run%d", f.run)
	}
	p, err := startSyncer(ctx, f.env, f.bin, fair, filepath.Join(f.c.out, logName+".log"), append([]string{"--metrics-bind-address", f.metrics, "--metrics-secure=false"}, f.c.syncerFlags...)...)
	if err != nil {
		return err
	}
	f.p, f.pn, f.fair = p, name, fair
	// The Tenants' status may still say Running from the previous syncer: wait for this
	// syncer's own caches too.
	if err := registerWeightedTenants(ctx, f.env, weights); err != nil {
		return err
	}
	if err := p.waitLog(ctx, "Tenant caches synced", len(f.env.Tenants)); err != nil {
		return fmt.Errorf("syncer %s: %w", name, err)
	}
	logf("syncer %s started (fair queuing %t, weights %v)", name, fair, weights)
	return nil
}

func (f *fairness) stopSyncer() {
	if f.p == nil {
		return
	}
	if v, err := cpuSeconds(f.p.pid()); err == nil {
		f.cpu[f.pn] = v
	}
	f.p.stop()
	f.p = nil
}

// runCase creates the case's namespace in every tenant of tenants (indices into env.Tenants),
// runs loads (loads[i] in env.Tenants[tenants[i]]), and summarises: the first nRegular loads
// are the regular tenants. Then it runs before (e.g. uninstalling a webhook) and, unless it is
// the last case, deletes the namespaces and waits until the super cluster has none of them
// left. It also returns the samples of each load.
func (f *fairness) runCase(ctx context.Context, name, short, desc string, tenants []int, loads []load, nRegular int, last, sampled bool, before ...func(context.Context) error) (fairnessCase, [][]sample, error) {
	ns := loads[0].namespace
	for _, ti := range tenants {
		t := f.env.Tenants[ti]
		if _, err := t.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
			continue // created by the caller
		}
		if err := createNamespace(ctx, t.Client, ns); err != nil {
			return fairnessCase{}, nil, err
		}
	}
	logf("(%s) %s", name, desc)
	tenantIndex := map[string]int{} // super Pod's tenant → load index (one load per tenant)
	for i, ti := range tenants[:len(loads)] {
		tenantIndex[f.env.Tenants[ti].Name] = i
	}
	superTimes, stopSuper, err := trackSuperPods(ctx, f.env.Super.Client, tenantIndex)
	if err != nil {
		return fairnessCase{}, nil, err
	}
	metricsURL := "http://" + f.metrics + "/metrics"
	m0, err0 := scrape(ctx, metricsURL)
	var stopSampling func() []timedScrape
	if sampled {
		stopSampling = sampleSyncer(ctx, metricsURL, 500*time.Millisecond)
	}
	t0 := time.Now()
	samples, err := runLoads(ctx, f.c.timeout, loads)
	stopSuper()
	var scrapes []timedScrape
	if stopSampling != nil {
		scrapes = stopSampling()
	}
	m1, err1 := scrape(ctx, metricsURL)
	if err != nil {
		return fairnessCase{}, nil, fmt.Errorf("(%s): %w", name, err)
	}
	fc := fairnessCase{Name: name, Description: desc, short: short, FairQueuing: f.fair, DurationSeconds: time.Since(t0).Seconds(), scrapes: scrapes}
	byLoad := make([][]sample, len(loads))
	for _, s := range samples {
		i, _ := strconv.Atoi(s.key[:strings.IndexByte(s.key, '/')])
		byLoad[i] = append(byLoad[i], s)
	}
	var reg, oth []sample
	for i, l := range byLoad {
		if i < nRegular {
			reg = append(reg, l...)
		} else {
			oth = append(oth, l...)
		}
	}
	fc.Regular, fc.Others, fc.All, fc.regular = summarize(reg), summarize(oth), summarize(samples), latencies(reg)
	fc.RegularPhases, fc.OthersPhases = phaseBreakdown(reg, superTimes), phaseBreakdown(oth, superTimes)
	for _, l := range byLoad {
		superTimes.fill(l)
	}
	if err0 == nil && err1 == nil {
		var regT, othT []string
		for i, ti := range tenants[:len(loads)] {
			if i < nRegular {
				regT = append(regT, f.env.Tenants[ti].Name)
			} else {
				othT = append(othT, f.env.Tenants[ti].Name)
			}
		}
		fc.RegularSyncerPhases, fc.OthersSyncerPhases = syncerPhaseMeans(m0, m1, regT), syncerPhaseMeans(m0, m1, othT)
		fc.RegularSyncerCalls, fc.OthersSyncerCalls = syncerCallMeans(m0, m1, regT), syncerCallMeans(m0, m1, othT)
		fc.RegularSyncerHeld = heldStats(m0, m1, regT...)
	} else {
		logf("(%s) no syncer metrics: %v %v", name, err0, err1)
	}
	// Created but not Running (the slow tenant's): count from its Pods in the tenant.
	fc.OthersCreated = len(oth)
	for i := nRegular; i < len(loads); i++ {
		if loads[i].background {
			if pods, err := loads[i].client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"}); err == nil {
				fc.OthersCreated += len(pods.Items) - len(byLoad[i])
			}
		}
	}
	logf("(%s) regular p50 %.2fs p99 %.2fs; others %d Running (%d created) p50 %.2fs p99 %.2fs; all %.1f Pods/s",
		name, fc.Regular.P50, fc.Regular.P99, fc.Others.Pods, fc.OthersCreated, fc.Others.P50, fc.Others.P99, fc.All.Throughput)
	for _, fn := range before {
		if err := fn(ctx); err != nil {
			return fairnessCase{}, nil, err
		}
	}
	if last {
		return fc, byLoad, nil
	}
	t1 := time.Now()
	if err := f.cleanup(ctx, ns, tenants); err != nil {
		return fairnessCase{}, nil, fmt.Errorf("(%s) cleanup: %w", name, err)
	}
	fc.CleanupSeconds = time.Since(t1).Seconds()
	logf("(%s) cleaned up in %s", name, time.Since(t1).Round(100*time.Millisecond))
	return fc, byLoad, nil
}

// runDirectCase runs loads straight against the super cluster, each in its own namespace
// (created here; no tenant and no syncer involved), summarises them as runCase does (the first
// nRegular loads are the regular ones) and deletes the namespaces, waiting until they are gone.
func (f *fairness) runDirectCase(ctx context.Context, name, short, desc string, loads []load, nRegular int) (fairnessCase, error) {
	var nss []string
	for _, l := range loads {
		if err := createNamespace(ctx, l.client, l.namespace); err != nil {
			return fairnessCase{}, fmt.Errorf("(%s): %w", name, err)
		}
		nss = append(nss, l.namespace)
	}
	logf("(%s) %s", name, desc)
	t0 := time.Now()
	samples, err := runLoads(ctx, f.c.timeout, loads)
	if err != nil {
		return fairnessCase{}, fmt.Errorf("(%s): %w", name, err)
	}
	fc := fairnessCase{Name: name, Description: desc, short: short, Direct: true, DurationSeconds: time.Since(t0).Seconds()}
	reg, oth := splitRegular(samples, nRegular)
	fc.Regular, fc.Others, fc.All, fc.regular = summarize(reg), summarize(oth), summarize(samples), latencies(reg)
	fc.OthersCreated = len(oth)
	logf("(%s) regular p50 %.2fs p99 %.2fs; others %d Running p50 %.2fs p99 %.2fs; all %.1f Pods/s",
		name, fc.Regular.P50, fc.Regular.P99, fc.Others.Pods, fc.Others.P50, fc.Others.P99, fc.All.Throughput)
	t1 := time.Now()
	for _, ns := range nss {
		if err := f.env.Super.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fairnessCase{}, err
		}
	}
	if err := waitNamespacesGone(ctx, f.env.Super.Client, nss); err != nil {
		return fairnessCase{}, fmt.Errorf("(%s) cleanup: %w", name, err)
	}
	fc.CleanupSeconds = time.Since(t1).Seconds()
	logf("(%s) cleaned up in %s", name, time.Since(t1).Round(100*time.Millisecond))
	return fc, nil
}

// splitRegular splits samples (keys "<load index>/<name>") into those of the first nRegular
// loads and the others.
func splitRegular(samples []sample, nRegular int) (regular, others []sample) {
	for _, s := range samples {
		if i, _ := strconv.Atoi(s.key[:strings.IndexByte(s.key, '/')]); i < nRegular {
			regular = append(regular, s)
		} else {
			others = append(others, s)
		}
	}
	return regular, others
}

// cleanup deletes namespace ns in the given tenants and waits (up to 3 minutes) until neither
// they nor their super namespaces exist any more.
func (f *fairness) cleanup(ctx context.Context, ns string, tenants []int) error {
	var superNS []string
	for _, ti := range tenants {
		t := f.env.Tenants[ti]
		if err := t.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		tn := &tenancyv1alpha1.Tenant{}
		if err := f.cl.Get(ctx, client.ObjectKey{Name: t.Name}, tn); err != nil {
			return err
		}
		superNS = append(superNS, conversion.SuperNamespace(t.Name, string(tn.UID), ns))
	}
	var left []string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		left = left[:0]
		for i, ti := range tenants {
			if _, err := f.env.Tenants[ti].Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left = append(left, f.env.Tenants[ti].Name+"/"+ns)
			}
			if _, err := f.env.Super.Client.CoreV1().Namespaces().Get(ctx, superNS[i], metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left = append(left, "super/"+superNS[i])
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("namespaces still there: %v: %w", left, err)
	}
	return nil
}

// syncerPhaseMeans returns, from two scrapes of the syncer's metrics, the mean time (seconds)
// the Pods of the given tenants created in between spent in each phase of
// vcsyncer_pod_creation_phase_duration_seconds (Δsum ÷ Δcount over those tenants); phases
// without new observations are left out.
func syncerPhaseMeans(before, after []metricSample, tenants []string) map[string]float64 {
	return histogramMeans(before, after, tenants, "vcsyncer_pod_creation_phase_duration_seconds", "phase")
}

// syncerCallMeans returns, like syncerPhaseMeans, the mean time (seconds) the downward
// reconciles of the given tenants' new Pods waited for each call of
// vcsyncer_pod_creation_call_duration_seconds (syncerCalls).
func syncerCallMeans(before, after []metricSample, tenants []string) map[string]float64 {
	return histogramMeans(before, after, tenants, "vcsyncer_pod_creation_call_duration_seconds", "call")
}

// histogramMeans returns, from two scrapes, the mean of the observations of histogram h made
// in between by each value of its label (Δsum ÷ Δcount over the series of the given tenants);
// values without new observations are left out, and nil when none has any.
func histogramMeans(before, after []metricSample, tenants []string, h, label string) map[string]float64 {
	values := map[string]bool{}
	for _, m := range after {
		if m.name == h+"_count" && slices.Contains(tenants, m.labels["tenant"]) {
			values[m.labels[label]] = true
		}
	}
	var out map[string]float64
	for v := range values {
		st := histogramDelta(before, after, h, func(l map[string]string) bool {
			return l[label] == v && slices.Contains(tenants, l["tenant"])
		})
		if st.Count > 0 {
			if out == nil {
				out = map[string]float64{}
			}
			out[v] = st.Mean
		}
	}
	return out
}

// saturatedInterval returns the saturated interval of per-tenant samples (created and Running
// times): start is the first instant at which every tenant has a backlog (a Pod created and
// not yet Running), end the first instant after start at which some tenant has none. ok is
// false when the tenants never all have a backlog at once. At equal times creations count
// before Runnings.
func saturatedInterval(byTenant [][]sample) (start, end time.Time, ok bool) {
	type event struct {
		t      time.Time
		tenant int
		delta  int
	}
	var evs []event
	for i, l := range byTenant {
		for _, s := range l {
			evs = append(evs, event{s.created, i, +1}, event{s.running, i, -1})
		}
	}
	slices.SortStableFunc(evs, func(a, b event) int {
		if c := a.t.Compare(b.t); c != 0 {
			return c
		}
		return b.delta - a.delta // creations first
	})
	backlog := make([]int, len(byTenant))
	for _, e := range evs {
		backlog[e.tenant] += e.delta
		all, none := true, false
		for _, b := range backlog {
			all = all && b > 0
			none = none || b == 0
		}
		if !ok && all {
			start, ok = e.t, true
		} else if ok && none {
			return start, e.t, true
		}
	}
	return start, end, ok && !end.IsZero()
}

// sharesIn returns each tenant's fraction and number of the Pods that became Running in
// (start, end], and their total number (fractions are 0 when it is 0).
func sharesIn(byTenant [][]sample, start, end time.Time) ([]float64, []int, int) {
	counts := make([]int, len(byTenant))
	n := 0
	for i, l := range byTenant {
		for _, s := range l {
			if s.running.After(start) && !s.running.After(end) {
				counts[i]++
				n++
			}
		}
	}
	out := make([]float64, len(byTenant))
	for i, c := range counts {
		if n > 0 {
			out[i] = float64(c) / float64(n)
		}
	}
	return out, counts, n
}

func sharesText(ws []weightedShare) string {
	var parts []string
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("%s (w%d) %.3f", w.Tenant, w.Weight, w.Share))
	}
	return strings.Join(parts, ", ")
}

// verdict returns "met" or "missed" for a measured value against a bound (≤).
func verdict(v, bound float64) string {
	if v <= bound {
		return "met"
	}
	return "missed"
}

// writeFairnessResults writes result.json, result.md (a table of the runs and their medians,
// the targets, each run's tables) and latency.png (the first run's regular latencies) to c.out.
func writeFairnessResults(c fairnessConfig, r fairnessResult) error {
	if err := writeResultJSON(c.out, r); err != nil {
		return err
	}
	runs := r.Runs
	if len(runs) == 0 {
		runs = []fairnessRun{r.fairnessRun}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Fairness: one tenant never slows another\n\n`%s` (%s, %.0f s in all, %d run(s)).\n\n", r.Command, r.Date, r.TotalSeconds, len(runs))
	fmt.Fprintf(&b, "Regular tenants' p99 (s) by case, the ratios the targets name, and their syncer-held p99 (s: the time their new Pods spent inside the syncer, both directions):\n\n")
	fmt.Fprintf(&b, "| run | (a) | (b-direct) | (b) | (c) | (d) | (b) ÷ (b-direct) | (b) ÷ (a) | (d) ÷ (a) | held (a) | held (b) | held (d) | max share error |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	row := func(name string, x fairnessRun) {
		fmt.Fprintf(&b, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f | %.3f | %.3f | %.3f | %.1f%% |\n", name,
			x.RegularP99Alone, x.RegularP99GreedyDirect, x.RegularP99GreedyFair, x.RegularP99GreedyFIFO, x.RegularP99SlowNeighbour,
			x.RatioGreedyFairToGreedyDirectP99, x.RatioGreedyFairToAloneP99, x.RatioSlowNeighbourToAloneP99,
			x.RegularSyncerHeldP99Alone, x.RegularSyncerHeldP99GreedyFair, x.RegularSyncerHeldP99SlowNeighbour, 100*x.MaxWeightedShareRelativeError)
	}
	for i, x := range runs {
		row(fmt.Sprint(i+1), x)
	}
	if len(runs) > 1 {
		row("**median**", r.fairnessRun)
	}
	m := r.fairnessRun
	heldBound := 1.2*m.RegularSyncerHeldP99Alone + 0.020
	of := "in this run"
	if len(runs) > 1 {
		of = fmt.Sprintf("medians of %d runs; the share error the largest of any run", len(runs))
	}
	fmt.Fprintf(&b, `
## Targets (%s)

| target | measured | |
|---|---|---|
| (b) ≤ (b-direct) at p99: sharing through vc-syncer at least as fair as sharing one cluster | (b) ÷ (b-direct) %.2f | %s |
| regular syncer-held p99 in (b) ≤ 1.2 × (a) + 20 ms | %.3f s ≤ %.3f s | %s |
| (d) ÷ (a) ≤ 1.2 at p99 | %.2f | %s |
| every weighted share within ±10%% of weight ÷ Σ weights (relative: share ÷ target − 1 within ±0.10) | max %.1f%% | %s |
| … of the super Pods the syncer created while every weighted tenant had Pods waiting in it (admittedShares) | max %.1f%% | %s |
| (b) ÷ (a) at p99 (reported: the greedy bursts saturate the machine, so (b-direct) is the baseline) | %.2f | |
| (c) ÷ (a) at p99 (reported, no target: the problem the admission window solves) | %.2f | |
`, of, m.RatioGreedyFairToGreedyDirectP99, verdict(m.RatioGreedyFairToGreedyDirectP99, 1),
		m.RegularSyncerHeldP99GreedyFair, heldBound, verdict(m.RegularSyncerHeldP99GreedyFair, heldBound),
		m.RatioSlowNeighbourToAloneP99, verdict(m.RatioSlowNeighbourToAloneP99, 1.2),
		100*m.MaxWeightedShareRelativeError, verdict(m.MaxWeightedShareRelativeError, 0.10),
		100*m.MaxAdmittedShareRelativeError, verdict(m.MaxAdmittedShareRelativeError, 0.10), m.RatioGreedyFairToAloneP99, m.RatioGreedyFIFOToAloneP99)
	for i, x := range runs {
		title := "The run's cases"
		if len(runs) > 1 {
			title = fmt.Sprintf("Run %d (%.0f s)", i+1, x.Seconds)
		}
		fmt.Fprintf(&b, "\n## %s\n\n", title)
		writeFairnessRunTables(&b, x)
	}
	first := runs[0]
	fmt.Fprintf(&b, `
## What runs

One super cluster (kube-scheduler, kwok, %d kwok Nodes of 110 Pods) and 5 tenant control planes
on this machine; the vc-syncer binary built from this tree (or $VC_SYNCER_BENCH_BIN), flags:
%s; restarted between (b) and (c) and between (c) and (d). Cases run in order on the
same control planes; after each case (but the last case of the last run) its namespaces are
deleted and the bench waits until they and their super namespaces are gone (column cleanup), so
no case leaks load into the next. With --repeat N the six cases run N times in a row.

- (a) tenant-1 and tenant-2 (regular) each create %d Pods at %.0f Pods/s (open loop: a Pod's
  latency counts from its scheduled arrival, so waiting in the client counts too).
- (b-direct) the loads of (b), created straight into the super cluster by its admin, each
  tenant's in a namespace of its own (fair-direct-1..4): what these tenants would get from
  sharing one cluster without virtual clusters (the super apiserver's priority and fairness
  puts them all in one flow; the syncer runs, idle).
- (b) the same, starting 0.5 s after tenant-3 and tenant-4 (greedy) each create %d Pods at once
  (%d concurrent create calls each); fair queuing on.
- (c) as (b) with --fair-queuing=false (one FIFO; also no admission window where there is one).
- (d) the regular tenants, starting 3 s after tenant-5 (slow) begins creating %.0f Pods/s, which
  it keeps doing until every regular Pod is Running. tenant-5 has a ValidatingWebhookConfiguration
  (failurePolicy Fail, timeoutSeconds 5) for CREATE of pods/binding and serviceaccounts/token and
  UPDATE of pods/status in its namespace, pointing at a webhook the bench serves on
  https://127.0.0.1 (a self-signed CA generated in-process, caBundle in the configuration) that
  answers every request after %.1f s and allows it. Requests it answered in run 1 (with the
  bench's own token requests that wait until the apiserver calls it): %s.
- (e) tenant-3, tenant-4 and tenant-1 with Tenant.spec.weight %d, %d, %d (set before the syncer of
  (d) started; tenant-3 and tenant-4 are idle in (d)) each create %d Pods at once.
  Saturated interval: from the first instant at which all three have a backlog (a Pod created,
  i.e. its create call started, and not yet seen Running in its tenant) to the first instant
  after it at which one of them has none (in practice: the first tenant whose Pods are all
  Running). A tenant's share is its fraction of the Pods that became Running in that interval.

Policy: %s (%s); limits.limitRange, maxObjects and everything else are the built-in values
(pkg/policy Builtin: containers without requests get 100m CPU and 128Mi).

## Why these sizes

- Regular: %.0f Pods/s per tenant is a few per second, well below the ~66 Pods/s the burst
  experiment reaches here, so alone they do not queue; %d Pods per tenant (%d in all) make the
  p99 the %s-worst Pod rather than the worst one.
- Greedy: 2 × %d Pods at ~66 Pods/s (the burst experiment's throughput here) are ~%.0f s of
  backlog, about the regular tenants' %s, so the regular Pods arrive into a saturated system
  (run 1: %.1f Pods/s in (b) and the greedy Pods' p50 %.1f s; the tables above show
  whether the backlog sat in the syncer's queue or in the super cluster).
- Slow: %.0f Pods/s each needing a %.0f s token request hold %.0f downward workers' worth of time per
  second, more than the 20 workers there are, so without a per-tenant bound the slow tenant
  takes every worker.
- Weighted: %d Pods each (%d in all) are ~%.0f s of work at ~66 Pods/s: long enough that the
  interval holds hundreds of Pods (a share's sampling error of a few %%), short enough for the
  time box.
- Nodes: %d × 110 = %d Pod slots for at most %d Pods alive at once ((b), (c) and (e)).
- The whole run (control planes, build, %d × six cases, cleanups) took %.0f s here (2 cores).

latency.png: the regular tenants' latency distributions (empirical CDF, log scale) in run 1's (a)–(d).
`, r.Nodes, r.SyncerArgs, r.RegularPods, r.RegularRate, r.GreedyPods, r.Concurrency, r.SlowRate, r.WebhookDelay, answeredText(first.WebhookAnswered),
		c.weights[0], c.weights[1], c.weights[2], r.WeightedPods, r.Policy, quotaText(r.PolicyQuota),
		r.RegularRate, r.RegularPods, 2*r.RegularPods, ordinal(2*r.RegularPods-int(0.99*float64(2*r.RegularPods))), r.GreedyPods, float64(2*r.GreedyPods+2*r.RegularPods)/66, c.regularDuration,
		caseNamed(first.Cases, "b").All.Throughput, caseNamed(first.Cases, "b").Others.P50,
		r.SlowRate, r.WebhookDelay, r.SlowRate*r.WebhookDelay,
		r.WeightedPods, 3*r.WeightedPods, float64(3*r.WeightedPods)/66,
		r.Nodes, 110*r.Nodes, max(2*r.GreedyPods+2*r.RegularPods, 3*r.WeightedPods), len(runs), r.TotalSeconds)
	if err := os.WriteFile(filepath.Join(c.out, "result.md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	var series []namedValues
	for _, fc := range first.Cases {
		if len(fc.regular) > 0 {
			series = append(series, namedValues{name: fmt.Sprintf("(%s) %s: p99 %.2f s", fc.Name, fc.short, fc.Regular.P99), v: fc.regular})
		}
	}
	return plotCDFs(filepath.Join(c.out, "latency.png"), "Regular tenants: Pod creation to Running latency", series)
}

// caseNamed returns the case of cases named name, the zero value when there is none.
func caseNamed(cases []fairnessCase, name string) fairnessCase {
	for _, fc := range cases {
		if fc.Name == name {
			return fc
		}
	}
	return fairnessCase{}
}

// writeFairnessRunTables writes one run's tables: the cases, where the time goes, the syncer's
// own split and held time, and the weighted shares of (e).
func writeFairnessRunTables(b *strings.Builder, r fairnessRun) {
	fmt.Fprintf(b, "| case | regular Pods | regular p50 (s) | regular p99 (s) | p99 ÷ (a) | other Pods Running (created) | other p50 / p99 (s) | all Pods/s | case (s) | cleanup (s) |\n|---|---|---|---|---|---|---|---|---|---|\n")
	a := caseNamed(r.Cases, "a").Regular.P99
	for _, fc := range r.Cases {
		ratio, reg50, reg99 := "", "", ""
		if fc.Regular.Pods > 0 {
			ratio = fmt.Sprintf("%.2f", fc.Regular.P99/a)
			reg50, reg99 = fmt.Sprintf("%.3f", fc.Regular.P50), fmt.Sprintf("%.3f", fc.Regular.P99)
		}
		oth := ""
		if fc.Others.Pods > 0 {
			oth = fmt.Sprintf("%.2f / %.2f", fc.Others.P50, fc.Others.P99)
		}
		fmt.Fprintf(b, "| (%s) %s | %d | %s | %s | %s | %d (%d) | %s | %.1f | %.0f | %.0f |\n", fc.Name, fc.Description, fc.Regular.Pods,
			reg50, reg99, ratio, fc.Others.Pods, fc.OthersCreated, oth, fc.All.Throughput, fc.DurationSeconds, fc.CleanupSeconds)
	}
	fmt.Fprintf(b, "\nWhere the time goes (p50 / p99, seconds): downward = tenant create → super Pod seen, super = super Pod seen → Running in the super cluster, upward = super Running → Running in the tenant.\n\n")
	fmt.Fprintf(b, "| case | regular downward | regular super | regular upward | other downward | other super | other upward |\n|---|---|---|---|---|---|---|\n")
	ph := func(m map[string][2]float64, k string) string {
		if v, ok := m[k]; ok {
			return fmt.Sprintf("%.2f / %.2f", v[0], v[1])
		}
		return ""
	}
	for _, fc := range r.Cases {
		if fc.Direct {
			continue
		}
		fmt.Fprintf(b, "| (%s) | %s | %s | %s | %s | %s | %s |\n", fc.Name, ph(fc.RegularPhases, "downward"), ph(fc.RegularPhases, "super"), ph(fc.RegularPhases, "upward"),
			ph(fc.OthersPhases, "downward"), ph(fc.OthersPhases, "super"), ph(fc.OthersPhases, "upward"))
	}
	fmt.Fprintf(b, "\nThe syncer's own split (vcsyncer_pod_creation_phase_duration_seconds during the case, mean seconds) and the regular Pods' syncer-held time (vcsyncer_pod_creation_syncer_held_seconds, p50 / p99 from its buckets):\n\n")
	fmt.Fprintf(b, "| case | Pods of | downward_queue | downward_process | … of which token_request / super_create / super_watch / super_informer | super_scheduling | upward_queue | upward_process | syncer-held p50 / p99 |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, fc := range r.Cases {
		for _, g := range []struct {
			who   string
			m     map[string]float64
			calls map[string]float64
			held  string
		}{{"regular", fc.RegularSyncerPhases, fc.RegularSyncerCalls, fmt.Sprintf("%.3f / %.3f", fc.RegularSyncerHeld.P50, fc.RegularSyncerHeld.P99)}, {"others", fc.OthersSyncerPhases, fc.OthersSyncerCalls, ""}} {
			if len(g.m) == 0 {
				continue
			}
			fmt.Fprintf(b, "| (%s) | %s | %.3f | %.3f | %.3f / %.3f / %.3f / %.3f | %.3f | %.3f | %.3f | %s |\n", fc.Name, g.who, g.m["downward_queue"], g.m["downward_process"],
				g.calls["token_request"], g.calls["super_create"], g.calls["super_watch"], g.calls["super_informer"], g.m["super_scheduling"], g.m["upward_queue"], g.m["upward_process"], g.held)
		}
	}
	if w := r.WeightedInterval; w != nil {
		fmt.Fprintf(b, "\nWeighted (e): saturated interval %.2f s – %.2f s after the first create of (e), %d Pods became Running in it.\n\n", w.Start, w.End, w.Running)
	}
	fmt.Fprintf(b, "| tenant | weight | target share | share | Running in interval | share ÷ target − 1 |\n|---|---|---|---|---|---|\n")
	for _, w := range r.WeightedShares {
		fmt.Fprintf(b, "| %s | %d | %.3f | %.3f | %d | %+.1f%% |\n", w.Tenant, w.Weight, w.Target, w.Share, w.Running, 100*w.Error)
	}
	if w := r.AdmittedInterval; w != nil {
		fmt.Fprintf(b, "\nAdmitted (e): every weighted tenant had Pods waiting in the syncer %.2f s – %.2f s after the first create of (e); the syncer created %d super Pods in it.\n\n", w.Start, w.End, w.Running)
		fmt.Fprintf(b, "| tenant | weight | target share | share | super Pods created in interval | share ÷ target − 1 |\n|---|---|---|---|---|---|\n")
		for _, w := range r.AdmittedShares {
			fmt.Fprintf(b, "| %s | %d | %.3f | %.3f | %d | %+.1f%% |\n", w.Tenant, w.Weight, w.Target, w.Share, w.Running, 100*w.Error)
		}
	}
	if len(r.WeightedTenantSamples) > 0 {
		fmt.Fprintf(b, "\nWhere the weighted tenants' Pods were in the syncer during that interval (means of its gauges every 0.5 s; admission window %.0f Pods on average): "+
			"requests queued for and held by the downward workers, the workers' hold time, Pods waiting in and slots held of the admission window, the Pods' downward reconciles, "+
			"the super Pods created and the worker time per create, the mean super create and TokenRequest times, and the time the tenant's share of --super-write-qps held it back.\n\n", r.AdmissionWindowMean)
		fmt.Fprintf(b, "| tenant | window admissions | queued | in flight | worker hold (s) | window waiting | window held | Pod reconciles | mean (s) | super creates | worker s per create | super create (s) | TokenRequest (s) | write-share delay (s) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, w := range r.WeightedTenantSamples {
			fmt.Fprintf(b, "| %s | %.0f | %.1f | %.1f | %.3f | %.1f | %.1f | %.0f | %.3f | %.0f | %.3f | %.3f | %.3f | %.2f |\n", w.Tenant, w.Admitted, w.QueueDepth, w.InFlight,
				w.WorkerHoldSeconds, w.WindowWaiting, w.WindowHeld, w.PodReconciles, w.PodReconcileSeconds, w.SuperCreates, w.PodWorkerSecondsPerCreate,
				w.SuperCreateSeconds, w.TokenRequestSeconds, w.WriteShareDelaySeconds)
		}
	}
}

func ordinal(n int) string {
	switch {
	case n%100/10 == 1:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

func answeredText(m map[string]int) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	slices.Sort(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func quotaText(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+" "+v)
	}
	slices.Sort(parts)
	return "limits.quota: " + strings.Join(parts, ", ")
}
