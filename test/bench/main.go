package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/localcluster"
)

type config struct {
	tenants, pods, nodes, concurrency int
	rate                              float64
	fair                              bool
	out                               string
	timeout                           time.Duration
	syncerFlags                       []string      // extra vc-syncer flags (--syncer-flag)
	profile                           time.Duration // syncer CPU profile length from the burst's start; 0 = none
	eventsSettle                      time.Duration // after the burst, wait this long for tenant Events (counted by reason)
	heldPods                          int           // Pods per tenant of the open-loop run at heldFraction of the ceiling; 0 = no such run
	heldFraction                      float64       // that run's rate as a fraction of the throughput the CPUs allow through the syncer
}

const usage = `usage: go run ./test/bench EXPERIMENT [flags]   (EXPERIMENT -h lists its flags)

experiments:
  burst    tenants × pods through vc-syncer vs. the same Pods straight into the super cluster
  fairness regular tenants' latency alone, beside greedy bursts (fair queuing and one FIFO) and beside a
           slow tenant (webhook), and weighted tenants' shares of Running Pods when all are saturated
  greedy   a greedy tenant's burst vs. a regular tenant's trickle, with fair queuing and with one FIFO
  memory   the syncer's RSS at several numbers of synced Pods (bytes per Pod = slope)
  restart  a syncer restart at tenants × objects: cold vs. from a checkpoint (after SIGTERM and after SIGKILL)
  tenants  what one more tenant costs the syncer (memory, CPU, requests, watches) at 1..N idle tenants,
           with objects, and restart and burst at the largest N
  shards   1, 2, 3 --sharding replicas on the same tenants: cold start, burst, RSS per replica, restart
           from checkpoints, and a SIGKILLed replica's tenants served again
  conformance  the Kubernetes conformance tests (e2e.test) against the super cluster and against a tenant
           of vc-syncer dev; result.json lists the tests that pass on the super cluster only

  chaos    a seeded fault-injection soak (issue 37): load in every tenant, syncer SIGKILL/SIGTERM, tenant
           apiserver SIGSTOP, super copies deleted or edited, checkpoint Secrets deleted; invariants checked
           all along and after a bounded settle; --replay <faults.jsonl> reruns a fault log

  upgrade  the syncer of an earlier commit (--from; default the first with HEAD's CheckpointSchema)
           replaced by HEAD, beside a same-version restart, a rollback and a cold start: LISTs per
           tenant, reconciles, seconds until every tenant is synced

  kubelet  the vNodes' kubelet API: a 100 MB Pod log read and followed, 200 execs and 100 follow
           streams held 60 s, through a tenant apiserver and vc-syncer vs. straight from the super cluster

environment: VC_SYNCER_BENCH_BIN=/path/to/vc-syncer runs that prebuilt syncer (e.g. of an earlier
commit) instead of building ./cmd/vc-syncer`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "burst":
		err = runBurst(ctx, os.Args[2:])
	case "fairness":
		err = runFairness(ctx, os.Args[2:])
	case "greedy":
		err = runGreedy(ctx, os.Args[2:])
	case "memory":
		err = runMemory(ctx, os.Args[2:])
	case "restart":
		err = runRestart(ctx, os.Args[2:])
	case "tenants":
		err = runTenants(ctx, os.Args[2:])
	case "shards":
		err = runShards(ctx, os.Args[2:])
	case "conformance":
		err = runConformance(ctx, os.Args[2:])
	case "chaos":
		err = runChaos(ctx, os.Args[2:])
	case "upgrade":
		err = runUpgrade(ctx, os.Args[2:])
	case "kubelet":
		err = runKubelet(ctx, os.Args[2:])
	default:
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func runBurst(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("burst", flag.ExitOnError)
	var c config
	fs.IntVar(&c.tenants, "tenants", 2, "number of tenants, each creating --pods Pods at once")
	fs.IntVar(&c.pods, "pods", 200, "Pods per tenant")
	fs.IntVar(&c.nodes, "nodes", 10, "kwok Nodes in the super cluster (110 Pods each)")
	fs.IntVar(&c.concurrency, "concurrency", 50, "concurrent create calls per tenant (and per baseline tenant); 50 is about how fast a Helm install or a Job controller creates Pods, 10 the earlier, gentler variant")
	fs.Float64Var(&c.rate, "rate", 0, "open-loop arrival rate in Pods/s over all tenants (each Pod's latency then counts from its scheduled arrival, so client-side waiting counts too); 0 = closed-loop burst, latency from the create call")
	fs.BoolVar(&c.fair, "fair-queuing", true, "run the syncer with --fair-queuing")
	fs.StringVar(&c.out, "out", "bench-out", "directory for result.json, result.md and latency.png")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up after this long per phase")
	fs.Func("syncer-flag", "extra flag for the vc-syncer run (repeatable), e.g. --syncer-flag=--disabled-kinds=Event", func(v string) error {
		c.syncerFlags = append(c.syncerFlags, v)
		return nil
	})
	fs.DurationVar(&c.profile, "cpu-profile", 0, "record a CPU profile of the syncer for this long from the start of its burst (syncer-cpu.pprof in --out; read with go tool pprof); 0 = none")
	fs.DurationVar(&c.eventsSettle, "events-settle", 5*time.Second, "after the burst through the syncer, wait this long, then count the tenants' Events by type and reason (result.json tenantEvents) and save the syncer's /metrics (metrics.txt)")
	fs.IntVar(&c.heldPods, "held-pods", 100, "after the saturated bursts, Pods per tenant created open loop at --held-fraction of the throughput the machine's CPUs allow through the syncer (namespace bench-held), for syncerHeldSecondsP99; fewer when the Nodes would not hold them; 0 = skip")
	fs.Float64Var(&c.heldFraction, "held-fraction", 0.5, "the rate of the --held-pods run as a fraction of the measured ceiling")
	_ = fs.Parse(args)
	return run(ctx, c)
}

// startEnv starts the local super cluster with nodes kwok Nodes and the given number of
// tenants, logging progress.
// startEnv makes the output directory out and starts the local control planes: a super cluster
// with nodes kwok Nodes and tenants tenants. The caller stops the environment.
func startEnv(ctx context.Context, out string, nodes, tenants int) (*localcluster.Environment, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	return localcluster.Start(ctx, localcluster.SuperOptions{Options: localcluster.Options{Progress: func(s string) { logf("%s", s) }}, Nodes: nodes}, tenants)
}

// startEnvAndSyncer is startEnv followed by buildSyncer, the first steps of the experiments
// that run the syncer binary: it returns the environment (the caller stops it) and the path of
// the syncer binary. On error nothing is left running.
func startEnvAndSyncer(ctx context.Context, out string, nodes, tenants int) (*localcluster.Environment, string, error) {
	env, err := startEnv(ctx, out, nodes, tenants)
	if err != nil {
		return nil, "", err
	}
	bin, err := buildSyncer(ctx)
	if err != nil {
		_ = env.Stop()
		return nil, "", err
	}
	return env, bin, nil
}

func logf(format string, args ...any) {
	fmt.Printf("[bench %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run(ctx context.Context, c config) error {
	env, err := startEnv(ctx, c.out, c.nodes, c.tenants)
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()

	// Baseline first: the same number of Pods, created the same way, straight into the super cluster.
	logf("baseline: %d × %d Pods straight into the super cluster", c.tenants, c.pods)
	baseClients, baseNS, err := baselineNamespaces(ctx, env, c.tenants)
	if err != nil {
		return err
	}
	cpuBase0, tBase0 := componentCPU(env), time.Now()
	baseReqA, _ := apiserverRequests(ctx, env.Super)
	base, err := burst(ctx, c, baseClients, baseNS)
	cpuBase, baseCPUWall := diffCPU(componentCPU(env), cpuBase0), time.Since(tBase0).Seconds()
	baseReqB, _ := apiserverRequests(ctx, env.Super)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	// The baseline Pods are alike in every namespace: the first one's stand for all.
	baseBytes, baseParts := superPodBytes(ctx, env.Super.Client, baseNS[0], metav1.ListOptions{})
	for _, ns := range baseNS {
		_ = env.Super.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	}
	// The baseline's Pods are deleted before the run through the syncer starts: their
	// deletion (0.24 super DELETEs per Pod, and the work of every super component) would
	// otherwise be counted as the syncer run's.
	if err := waitNamespacesGone(ctx, env.Super.Client, baseNS); err != nil {
		return fmt.Errorf("baseline namespaces: %w", err)
	}

	// Then through the syncer.
	bin, err := buildSyncer(ctx)
	if err != nil {
		return err
	}
	metricsAddr, pprofAddr := freeAddr(), freeAddr()
	p, err := startSyncer(ctx, env, bin, c.fair, filepath.Join(c.out, "syncer.log"),
		append([]string{"--metrics-bind-address", metricsAddr, "--metrics-secure=false", "--pprof-bind-address", pprofAddr}, c.syncerFlags...)...)
	if err != nil {
		return err
	}
	defer p.stop()
	if err := registerTenants(ctx, env); err != nil {
		return err
	}
	var tenantClients []kubernetes.Interface
	var tenantNS []string
	for _, t := range env.Tenants {
		if err := createNamespace(ctx, t.Client, "bench"); err != nil {
			return err
		}
		tenantClients, tenantNS = append(tenantClients, t.Client), append(tenantNS, "bench")
	}
	tenantIndex := map[string]int{}
	for i, t := range env.Tenants {
		tenantIndex[t.Name] = i
	}
	superTimes, stopSuper, err := trackSuperPods(ctx, env.Super.Client, tenantIndex)
	if err != nil {
		return err
	}
	defer stopSuper()
	cpu0, err := cpuSeconds(p.pid())
	if err != nil {
		return err
	}
	logf("syncer: %d tenants × %d Pods through vc-syncer (fair queuing %t)", c.tenants, c.pods, c.fair)
	cpuSync0, tSync0 := componentCPU(env), time.Now()
	syncReqA, _ := apiserverRequests(ctx, env.Super)
	tenantReqA := tenantRequests(ctx, env)
	tenantReqEachA := tenantRequestsEach(ctx, env)
	alloc0 := syncerGoStats(ctx, metricsAddr)
	if c.profile > 0 {
		if err := saveURL(ctx, "http://"+pprofAddr+"/debug/pprof/allocs", filepath.Join(c.out, "syncer-allocs-before.pprof")); err != nil {
			logf("allocation profile: %v", err)
		}
	}
	profDone := make(chan error, 1)
	if c.profile > 0 {
		go func() {
			profDone <- saveCPUProfile(ctx, pprofAddr, c.profile, filepath.Join(c.out, "syncer-cpu.pprof"))
		}()
	}
	synced, err := burst(ctx, c, tenantClients, tenantNS)
	cpuSync, syncCPUWall := diffCPU(componentCPU(env), cpuSync0), time.Since(tSync0).Seconds()
	syncReqB, _ := apiserverRequests(ctx, env.Super)
	tenantReqB := tenantRequests(ctx, env)
	tenantReqEachB := tenantRequestsEach(ctx, env)
	if err != nil {
		return fmt.Errorf("through the syncer: %w", err)
	}
	cpu1, _ := cpuSeconds(p.pid())
	cpuSync["vc-syncer"] = cpu1 - cpu0
	alloc1 := syncerGoStats(ctx, metricsAddr)
	if c.profile > 0 {
		if err := saveURL(ctx, "http://"+pprofAddr+"/debug/pprof/allocs", filepath.Join(c.out, "syncer-allocs.pprof")); err != nil {
			logf("allocation profile: %v", err)
		}
	}
	rss, _ := peakRSS(p.pid())
	if c.profile > 0 {
		if err := <-profDone; err != nil {
			logf("CPU profile: %v", err)
		}
	}
	tenantEvents := countTenantEvents(ctx, c.eventsSettle, tenantClients, tenantNS)
	var syncerPhaseBreakdown map[string]phaseStats
	if err := saveMetrics(ctx, metricsAddr, filepath.Join(c.out, "metrics.txt")); err != nil {
		logf("metrics: %v", err)
	} else if syncerPhaseBreakdown, err = syncerPhaseStats(filepath.Join(c.out, "metrics.txt")); err != nil {
		logf("phases: %v", err)
	}

	res := result{
		Date: time.Now().UTC().Format(time.RFC3339), Tenants: c.tenants, PodsPerTenant: c.pods, Nodes: c.nodes,
		FairQueuing: c.fair, Concurrency: c.concurrency, Rate: c.rate,
		Baseline: summarize(base), Syncer: summarize(synced),
		SyncerCPUSeconds: cpu1 - cpu0, SyncerPeakRSSBytes: rss,
		SyncerFlags: c.syncerFlags, TenantEvents: tenantEvents,
	}
	res.P99Ratio = res.Syncer.P99 / res.Baseline.P99
	res.Phases = phaseBreakdown(synced, superTimes)
	res.ComponentCPUSeconds = map[string]map[string]float64{"baseline": cpuBase, "syncer": cpuSync}
	res.SyncerPhases = syncerPhaseBreakdown
	res.Super429s = map[string]float64{"baseline": baseReqB["429"] - baseReqA["429"], "syncer": syncReqB["429"] - syncReqA["429"]}
	res.SuperRequestsPerPod = map[string]map[string]float64{
		"baseline": requestsPerPod(baseReqA, baseReqB, len(base)),
		"syncer":   requestsPerPod(syncReqA, syncReqB, len(synced)),
	}
	res.TenantRequestsPerPod = requestsPerPod(tenantReqA, tenantReqB, len(synced))
	res.TenantRequestsPerPodByTenant = map[string]map[string]float64{}
	for t, after := range tenantReqEachB {
		// Per Pod of that tenant: every tenant created c.pods.
		res.TenantRequestsPerPodByTenant[t] = requestsPerPod(tenantReqEachA[t], after, c.pods)
	}
	syncBytes, syncParts := superPodBytes(ctx, env.Super.Client, "", metav1.ListOptions{LabelSelector: "tenancy.vcsyncer.io/managed-by=vc-syncer"})
	res.BytesStoredPerSuperPod = map[string]float64{"baseline": baseBytes, "syncer": syncBytes}
	res.SuperPodBytesByPart = map[string]map[string]float64{"baseline": baseParts, "syncer": syncParts}
	cost := costPerPod(cpuBase, cpuSync, len(base), len(synced))
	res.SuperCPUPerPodRatio, res.SuperCPUSecondsPerPod = cost.SuperCPUPerPodRatio, cost.SuperCPUSecondsPerPod
	res.SyncerCPUSecondsPerPod, res.TenantAPIServerCPUSecondsPerPod = cost.SyncerCPUSecondsPerPod, cost.TenantAPIServerCPUSecondsPerPod
	res.SuperAPIServerCPUSecondsPerPod, res.SuperAPIServerCPUSecondsPerPodDirect = cost.SuperAPIServerCPUSecondsPerPod, cost.SuperAPIServerCPUSecondsPerPodDirect
	if alloc0.ok && alloc1.ok && len(synced) > 0 {
		res.SyncerAllocBytesPerPod = (alloc1.allocBytes - alloc0.allocBytes) / float64(len(synced))
		res.SyncerGCCyclesPerPod = (alloc1.gcCycles - alloc0.gcCycles) / float64(len(synced))
	}
	// Cores over the whole measured window (informers' start to the last Pod Running), the
	// interval the CPU seconds were taken over.
	res.CPU = map[string][]cpuUse{"baseline": busiest(cpuBase, baseCPUWall), "syncer": busiest(cpuSync, syncCPUWall)}
	res.Bottleneck = map[string]string{
		"baseline": bottleneck(res.CPU["baseline"], baseCPUWall, runtime.NumCPU(), nil),
		"syncer":   bottleneck(res.CPU["syncer"], syncCPUWall, runtime.NumCPU(), syncerPhaseBreakdown),
	}
	res.ThroughputRatio = res.Syncer.Throughput / res.Baseline.Throughput
	res.CPUPerPod = map[string]float64{"baseline": cpuPerPodMillis(cpuBase, len(base)), "syncer": cpuPerPodMillis(cpuSync, len(synced))}
	res.ThroughputCeilingRatio = throughputCeiling(res.CPUPerPod["syncer"], runtime.NumCPU()) / res.Baseline.Throughput
	if c.heldPods > 0 {
		h, err := heldPhase(ctx, c, env, metricsAddr, throughputCeiling(res.CPUPerPod["syncer"], runtime.NumCPU()))
		if err != nil {
			return fmt.Errorf("held run: %w", err)
		}
		res.HeldRun, res.SyncerHeldSecondsP99 = &h, h.Held.P99
	}
	if err := writeResults(c.out, res, base, synced); err != nil {
		return err
	}
	if err := writeRetries(c.out, filepath.Join(c.out, "syncer.log")); err != nil {
		return err
	}
	logf("done: p99 %.2fs vs baseline %.2fs (×%.2f), throughput %.1f vs %.1f Pods/s (×%.2f), tenant Events %v; results in %s",
		res.Syncer.P99, res.Baseline.P99, res.P99Ratio, res.Syncer.Throughput, res.Baseline.Throughput, res.ThroughputRatio, tenantEvents, c.out)
	return nil
}

// baselineNamespaces creates n namespaces baseline-1..baseline-n in the super cluster, where a
// baseline burst creates the same Pods as the tenants do through the syncer, and returns the
// super client once per namespace with them (burst's arguments).
func baselineNamespaces(ctx context.Context, env *localcluster.Environment, n int) ([]kubernetes.Interface, []string, error) {
	return superNamespaces(ctx, env, "baseline", n)
}

// superNamespaces creates n namespaces <prefix>-1 … <prefix>-n in the super cluster and
// returns the super client once per namespace, and their names.
func superNamespaces(ctx context.Context, env *localcluster.Environment, prefix string, n int) ([]kubernetes.Interface, []string, error) {
	var clients []kubernetes.Interface
	var nss []string
	for i := range n {
		ns := fmt.Sprintf("%s-%d", prefix, i+1)
		if err := createNamespace(ctx, env.Super.Client, ns); err != nil {
			return nil, nil, err
		}
		clients, nss = append(clients, env.Super.Client), append(nss, ns)
	}
	return clients, nss, nil
}

// syncerBin ($VC_SYNCER_BENCH_BIN) is a prebuilt vc-syncer binary to run instead of building
// ./cmd/vc-syncer, to compare another version of the syncer under the same load tool.
var syncerBin = os.Getenv("VC_SYNCER_BENCH_BIN")

// buildSyncer builds ./cmd/vc-syncer into a temporary directory and returns its path, or
// returns $VC_SYNCER_BENCH_BIN when set (a prebuilt binary, e.g. of an earlier commit).
func buildSyncer(ctx context.Context) (string, error) {
	if syncerBin != "" {
		logf("running the prebuilt syncer %s ($VC_SYNCER_BENCH_BIN)", syncerBin)
		return syncerBin, nil
	}
	dir, err := os.MkdirTemp("", "vc-syncer-bench")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "vc-syncer")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/vc-syncer")
	cmd.Stderr = os.Stderr
	if out, err := cmd.Output(); err != nil {
		return "", fmt.Errorf("go build ./cmd/vc-syncer (run from the repository root): %w %s", err, out)
	}
	return bin, nil
}

func createNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// waitNamespacesGone waits (up to 2 minutes) until none of the namespaces nss exists.
func waitNamespacesGone(ctx context.Context, cs kubernetes.Interface, nss []string) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, ns := range nss {
			if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
				return false, nil
			}
		}
		return true, nil
	})
}

func waitTenantsRunning(ctx context.Context, cl client.Client, tenants []*localcluster.ControlPlane) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, t := range tenants {
			tn := &tenancyv1alpha1.Tenant{}
			if err := cl.Get(ctx, client.ObjectKey{Name: t.Name}, tn); err != nil || tn.Status.Phase != tenancyv1alpha1.TenantRunning {
				return false, nil
			}
		}
		return true, nil
	})
}

// sample is one Pod's create time and the time it was seen Running.
type sample struct {
	key              string
	created, running time.Time
	// super is when the Pod's super copy was first seen (zero when not tracked or never seen).
	super time.Time
	// call is how long the Pod's create call took (the apiserver's answer time, as the
	// client saw it).
	call time.Duration
}

// load is one stream of Pod creations into one namespace.
type load struct {
	client      kubernetes.Interface
	namespace   string
	pods        int
	rate        float64       // Pods/s, open loop; 0 = as fast as concurrency allows
	concurrency int           // concurrent create calls
	delay       time.Duration // start after this long
	// background loads keep creating Pods (at rate) until every other load's Pods are
	// Running; their Pods are not waited for and appear among the samples only if they were
	// seen Running by then.
	background bool
}

// burst creates c.pods Pods in each (client, namespace) pair at once and returns, for every Pod,
// when it was created and when a watch saw it Running.
func burst(ctx context.Context, c config, clients []kubernetes.Interface, namespaces []string) ([]sample, error) {
	loads := make([]load, len(clients))
	for i := range clients {
		rate := 0.0
		if c.rate > 0 {
			rate = c.rate / float64(len(clients))
		}
		loads[i] = load{client: clients[i], namespace: namespaces[i], pods: c.pods, rate: rate, concurrency: c.concurrency}
	}
	return runLoads(ctx, c.timeout, loads)
}

// runLoads runs the loads at once and returns, for every Pod (key "<load index>/<name>"), when
// it was created (its scheduled arrival for open-loop loads, else the start of its create call)
// and when an informer saw it Running. It ends when every Pod of the loads that are not
// background is Running, and fails after timeout.
func runLoads(ctx context.Context, timeout time.Duration, loads []load) ([]sample, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var mu sync.Mutex
	created := map[string]time.Time{}
	calls := map[string]time.Duration{}
	running := map[string]time.Time{}
	total, runningWaited := 0, 0 // Pods of the loads that are not background
	for _, l := range loads {
		if !l.background {
			total += l.pods
		}
	}
	// Informers, not raw watches: under a burst the apiserver closes watchers that fall
	// behind, and a reflector re-establishes its watch where a raw watch would just end.
	for i, l := range loads {
		f := informers.NewSharedInformerFactoryWithOptions(l.client, 0, informers.WithNamespace(l.namespace))
		seen := func(obj any) {
			p, ok := obj.(*corev1.Pod)
			if !ok || p.Status.Phase != corev1.PodRunning {
				return
			}
			key := fmt.Sprint(i, "/", p.Name)
			mu.Lock()
			if _, seen := running[key]; !seen {
				running[key] = time.Now()
				if !l.background {
					runningWaited++
				}
			}
			done := runningWaited == total
			mu.Unlock()
			if done {
				cancel()
			}
		}
		if _, err := f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: seen, UpdateFunc: func(_, n any) { seen(n) },
		}); err != nil {
			return nil, err
		}
		f.Start(ctx.Done())
		f.WaitForCacheSync(ctx.Done())
		defer f.Shutdown()
	}
	start := time.Now()
	var creators sync.WaitGroup
	errs := make(chan error, 1024)
	for i, l := range loads {
		type job struct {
			n   int
			due time.Time
		}
		next := make(chan job)
		for range max(1, l.concurrency) {
			creators.Go(func() {
				for j := range next {
					name := fmt.Sprintf("pod-%05d", j.n)
					t := time.Now()
					if l.rate > 0 {
						t = j.due
					}
					callStart := time.Now()
					_, err := l.client.CoreV1().Pods(l.namespace).Create(ctx, benchPod(name), metav1.CreateOptions{})
					call := time.Since(callStart)
					if err != nil {
						select {
						case errs <- fmt.Errorf("create %s/%s: %w", l.namespace, name, err):
						default:
						}
						return
					}
					mu.Lock()
					created[fmt.Sprint(i, "/", name)] = t
					calls[fmt.Sprint(i, "/", name)] = call
					mu.Unlock()
				}
			})
		}
		go func() {
			defer close(next)
			begin := start.Add(l.delay)
			select {
			case <-time.After(time.Until(begin)):
			case <-ctx.Done():
				return
			}
			for n := range l.pods {
				var due time.Time
				if l.rate > 0 {
					due = begin.Add(time.Duration(float64(n) / l.rate * float64(time.Second)))
					select {
					case <-time.After(time.Until(due)):
					case <-ctx.Done():
						return
					}
				}
				select {
				case next <- job{n, due}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	progressDone := make(chan struct{})
	go func() {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-progressDone:
				return
			case <-t.C:
				mu.Lock()
				logf("  %d/%d created, %d/%d Running, %s", len(created), total, runningWaited, total, time.Since(start).Round(time.Second))
				mu.Unlock()
			}
		}
	}()
	creators.Wait()
	<-ctx.Done() // all Running (cancel) or timeout
	close(progressDone)
	close(errs)
	for err := range errs {
		if !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if runningWaited < total {
		return nil, fmt.Errorf("only %d of %d Pods Running (%d created) after %s: %w", runningWaited, total, len(created), time.Since(start).Round(time.Second), context.Cause(ctx))
	}
	out := make([]sample, 0, len(created))
	for k, c := range created {
		if r, ok := running[k]; ok {
			out = append(out, sample{key: k, created: c, running: r, call: calls[k]})
		}
	}
	return out, nil
}

func benchPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "bench"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: new(int64),
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}},
		},
	}
}

// cpuSeconds returns utime+stime of a process in seconds (proc(5): fields 14 and 15, in clock ticks of 1/100 s).
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100, nil
}

// peakRSS returns VmHWM of a process in bytes.
func peakRSS(pid int) (int64, error) { return procStatusBytes(pid, "VmHWM") }

// stats summarises latencies in seconds.
type stats struct {
	Pods       int     `json:"pods"`
	P50        float64 `json:"p50Seconds"`
	P90        float64 `json:"p90Seconds"`
	P99        float64 `json:"p99Seconds"`
	Max        float64 `json:"maxSeconds"`
	Throughput float64 `json:"throughputPodsPerSecond"`
	// Wall is the time from the first create to the last Pod Running, in seconds.
	Wall float64 `json:"wallSeconds"`
}

type result struct {
	Date               string  `json:"date"`
	Tenants            int     `json:"tenants"`
	PodsPerTenant      int     `json:"podsPerTenant"`
	Nodes              int     `json:"nodes"`
	Concurrency        int     `json:"concurrencyPerTenant"`
	Rate               float64 `json:"ratePodsPerSecond"`
	FairQueuing        bool    `json:"fairQueuing"`
	Baseline           stats   `json:"baseline"`
	Syncer             stats   `json:"syncer"`
	P99Ratio           float64 `json:"p99Ratio"`
	ThroughputRatio    float64 `json:"throughputRatio"`
	SyncerCPUSeconds   float64 `json:"syncerCPUSeconds"`
	SyncerPeakRSSBytes int64   `json:"syncerPeakRSSBytes"`
	// Phases are medians (p50) and p99s, in seconds, of: tenant create → super Pod seen
	// (downward: queue + process), super Pod seen → super Pod Running (super scheduling and
	// kwok), super Running → tenant Running (upward: queue + bind + status).
	Phases map[string][2]float64 `json:"phasesP50P99Seconds"`
	// ComponentCPUSeconds is the CPU time of each control-plane process during each burst
	// ("super/kube-apiserver", "tenant-1/etcd", ...), to see what the machine spent it on.
	ComponentCPUSeconds map[string]map[string]float64 `json:"componentCPUSeconds"`
	// SyncerFlags are the extra vc-syncer flags of the run (--syncer-flag).
	SyncerFlags []string `json:"syncerFlags,omitempty"`
	// TenantEvents counts the Events in the tenants' bench namespaces, by "type/reason",
	// --events-settle after the last Pod was Running.
	TenantEvents map[string]int `json:"tenantEvents"`
	// SyncerPhases is the syncer's own breakdown of each new Pod's creation
	// (vcsyncer_pod_creation_phase_duration_seconds, all tenants): downward_queue,
	// downward_process, super_scheduling, upward_queue, upward_process.
	SyncerPhases map[string]phaseStats `json:"syncerPhases"`
	// CPU lists, for "baseline" and "syncer", every process's CPU during that burst, busiest
	// first, in seconds and cores (seconds per second of the burst's wall time).
	CPU map[string][]cpuUse `json:"cpuByProcess"`
	// Bottleneck names, for "baseline" and "syncer", what limited that burst (bottleneck()).
	Bottleneck map[string]string `json:"bottleneck"`
	// Super429s counts the super apiserver's 429 answers during each burst (all clients).
	Super429s map[string]float64 `json:"superApiserver429s"`
	// SuperRequestsPerPod is, for "baseline" and "syncer", the super apiserver's requests
	// (all clients) during that burst per Pod of the burst, by "VERB resource[/subresource]"
	// (apiserverRequests).
	SuperRequestsPerPod map[string]map[string]float64 `json:"superRequestsPerPod"`
	// TenantRequestsPerPod is the tenant apiservers' requests (all clients, all tenants)
	// during the burst through the syncer, per Pod of the burst, keyed as SuperRequestsPerPod.
	TenantRequestsPerPod map[string]float64 `json:"tenantRequestsPerPod"`
	// CPUPerPod is, for "baseline" and "syncer", the CPU time of every process on the machine
	// (control planes, kwok and the syncer) during that burst per Pod of the burst, in
	// milliseconds (cpuPerPodMillis).
	CPUPerPod map[string]float64 `json:"cpuMillisecondsPerPod"`
	// ThroughputCeilingRatio is the highest throughput ratio this machine's CPUs allow for the
	// work the burst through the syncer did: throughputCeiling of its CPU per Pod over the
	// baseline's throughput. A throughputRatio close to it means the machine, not waiting,
	// limited the run; only less work per Pod raises it.
	ThroughputCeilingRatio float64 `json:"throughputCeilingRatio"`

	// What one Pod costs (costPerPod), CPU from componentCPUSeconds over the Pods of each burst.
	// SuperCPUPerPodRatio: the super cluster's processes (not the syncer) per Pod through the
	// syncer ÷ straight. SuperCPUSecondsPerPod: that CPU per Pod, "baseline" and "syncer".
	SuperCPUPerPodRatio                  float64            `json:"superCPUPerPodRatio"`
	SuperCPUSecondsPerPod                map[string]float64 `json:"superCPUSecondsPerPod"`
	SyncerCPUSecondsPerPod               float64            `json:"syncerCPUSecondsPerPod"`
	TenantAPIServerCPUSecondsPerPod      float64            `json:"tenantAPIServerCPUSecondsPerPod"`
	SuperAPIServerCPUSecondsPerPod       float64            `json:"superAPIServerCPUSecondsPerPod"`
	SuperAPIServerCPUSecondsPerPodDirect float64            `json:"superAPIServerCPUSecondsPerPodDirect"`
	// TenantRequestsPerPodByTenant is each tenant apiserver's requests during the burst through
	// the syncer per Pod of that tenant, keyed as SuperRequestsPerPod.
	TenantRequestsPerPodByTenant map[string]map[string]float64 `json:"tenantRequestsPerPodByTenant"`
	// BytesStoredPerSuperPod is the mean protobuf size of a super Pod (what etcd stores, less
	// the envelope), after the burst, "baseline" (the Pods created straight) and "syncer" (the
	// syncer's super Pods).
	BytesStoredPerSuperPod map[string]float64 `json:"bytesStoredPerSuperPod"`
	// SuperPodBytesByPart splits those bytes (bytesByPart), "baseline" and "syncer".
	SuperPodBytesByPart map[string]map[string]float64 `json:"superPodBytesByPart"`
	// SyncerHeldSecondsP99 is the p99 of the time a new Pod spent inside the syncer
	// (vcsyncer_pod_creation_syncer_held_seconds: both directions' queues and processing,
	// admission wait included) in HeldRun, the open-loop run at half the ceiling.
	SyncerHeldSecondsP99 float64  `json:"syncerHeldSecondsP99"`
	HeldRun              *heldRun `json:"heldRun,omitempty"`
	// SyncerAllocBytesPerPod is what the syncer allocated on its heap during the burst through
	// it, per Pod (go_memstats_alloc_bytes_total), and SyncerGCCyclesPerPod its garbage
	// collections per Pod (go_gc_duration_seconds_count): the garbage behind the GC's share of
	// its CPU, steadier from run to run than the CPU itself. 0 when /metrics could not be read.
	SyncerAllocBytesPerPod float64 `json:"syncerAllocBytesPerPod"`
	SyncerGCCyclesPerPod   float64 `json:"syncerGCCyclesPerPod"`
}

// cpuPerPodMillis returns the CPU seconds summed over cpu (process → seconds) per Pod, in
// milliseconds; 0 for pods ≤ 0.
func cpuPerPodMillis(cpu map[string]float64, pods int) float64 {
	if pods <= 0 {
		return 0
	}
	total := 0.0
	for _, v := range cpu {
		total += v
	}
	return 1000 * total / float64(pods)
}

// throughputCeiling returns the Pods per second a machine with cores CPUs reaches at most when
// each Pod costs millisPerPod milliseconds of CPU and every CPU is busy all the time; 0 for
// millisPerPod ≤ 0.
func throughputCeiling(millisPerPod float64, cores int) float64 {
	if millisPerPod <= 0 {
		return 0
	}
	return 1000 * float64(cores) / millisPerPod
}

// tenantRequestsEach returns apiserverRequests of each of env's tenants, by tenant name (a
// tenant whose /metrics cannot be read is left out).
func tenantRequestsEach(ctx context.Context, env *localcluster.Environment) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for _, t := range env.Tenants {
		if m, err := apiserverRequests(ctx, t); err == nil {
			out[t.Name] = m
		}
	}
	return out
}

// heldPhase runs, after the saturated burst, c.heldPods Pods per tenant (heldPodsPerTenant)
// open loop at c.heldFraction of ceiling (Pods/s over all tenants) into each tenant's namespace
// bench-held, and returns the syncer's held-time histogram over that run (scrapes of its
// /metrics at addr before and after: metrics.txt, then metrics-held.txt in c.out).
func heldPhase(ctx context.Context, c config, env *localcluster.Environment, addr string, ceiling float64) (heldRun, error) {
	h := heldRun{Fraction: c.heldFraction, Rate: c.heldFraction * ceiling,
		PodsPerTenant: heldPodsPerTenant(c.heldPods, c.nodes, c.tenants, c.pods)}
	if h.Rate <= 0 {
		return h, fmt.Errorf("no ceiling measured")
	}
	var clients []kubernetes.Interface
	var nss []string
	for _, t := range env.Tenants {
		if err := createNamespace(ctx, t.Client, "bench-held"); err != nil {
			return h, err
		}
		clients, nss = append(clients, t.Client), append(nss, "bench-held")
	}
	before, err := scrapeFile(ctx, "http://"+addr+"/metrics", filepath.Join(c.out, "metrics-before-held.txt"))
	if err != nil {
		return h, err
	}
	logf("held: %d tenants × %d Pods through vc-syncer, open loop at %.1f Pods/s (%.2f × the ceiling %.1f)", c.tenants, h.PodsPerTenant, h.Rate, c.heldFraction, ceiling)
	hc := c
	hc.pods, hc.rate = h.PodsPerTenant, h.Rate
	samples, err := burst(ctx, hc, clients, nss)
	if err != nil {
		return h, err
	}
	after, err := scrapeFile(ctx, "http://"+addr+"/metrics", filepath.Join(c.out, "metrics-held.txt"))
	if err != nil {
		return h, err
	}
	h.Held, h.EndToEnd = heldStats(before, after), summarize(samples)
	h.Phases, h.Calls = heldBreakdown(before, after)
	h.TenantCreateCall = callStats(samples)
	logf("held: syncer-held p50 %.3fs p99 %.3fs over %.0f Pods; end to end p99 %.2fs", h.Held.P50, h.Held.P99, h.Held.Count, h.EndToEnd.P99)

	// The same Pods straight into the super cluster at the same rate: the super apiserver's
	// answer time to a create at this load, beside the syncer's super_create.
	dclients, dnss, err := superNamespaces(ctx, env, "bench-held-direct", c.tenants)
	if err != nil {
		return h, err
	}
	direct, err := burst(ctx, hc, dclients, dnss)
	if err != nil {
		return h, fmt.Errorf("straight: %w", err)
	}
	h.DirectCreateCall = callStats(direct)
	for _, ns := range dnss {
		_ = env.Super.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	}
	logf("held: create call p50 %.3fs p99 %.3fs on the tenant apiservers, %.3fs / %.3fs straight on the super apiserver; the syncer's super_create %.3fs / %.3fs",
		h.TenantCreateCall.P50, h.TenantCreateCall.P99, h.DirectCreateCall.P50, h.DirectCreateCall.P99, h.Calls["super_create"].P50, h.Calls["super_create"].P99)
	return h, nil
}

// callStats returns the count, mean, p50 and p99 (percentile) of the samples' create calls;
// the zero value for none.
func callStats(s []sample) phaseStats {
	if len(s) == 0 {
		return phaseStats{}
	}
	d := make([]float64, len(s))
	sum := 0.0
	for i, x := range s {
		d[i] = x.call.Seconds()
		sum += d[i]
	}
	slices.Sort(d)
	return phaseStats{Count: float64(len(d)), Mean: sum / float64(len(d)), P50: percentile(d, 0.5), P99: percentile(d, 0.99)}
}

// tenantRequests returns the sum over env's tenants of apiserverRequests; a tenant whose
// /metrics cannot be read counts nothing.
func tenantRequests(ctx context.Context, env *localcluster.Environment) map[string]float64 {
	out := map[string]float64{}
	for _, t := range env.Tenants {
		m, _ := apiserverRequests(ctx, t)
		for k, v := range m {
			out[k] += v
		}
	}
	return out
}

// requestTable returns result.md's rows of requests per Pod: every key that reaches 0.05 on
// some side, most requests through the syncer first.
func requestTable(r result) string {
	keys := map[string]bool{}
	for _, m := range []map[string]float64{r.SuperRequestsPerPod["baseline"], r.SuperRequestsPerPod["syncer"], r.TenantRequestsPerPod} {
		for k, v := range m {
			if k != "429" && v >= 0.05 {
				keys[k] = true
			}
		}
	}
	sorted := slices.Collect(maps.Keys(keys))
	total := func(k string) float64 { return r.SuperRequestsPerPod["syncer"][k] + r.TenantRequestsPerPod[k] }
	slices.SortFunc(sorted, func(a, b string) int {
		if c := cmp.Compare(total(b), total(a)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	md := "\n| requests per Pod | super, baseline | super, through vc-syncer | tenants, through vc-syncer |\n|---|---|---|---|\n"
	var sums [3]float64
	for _, k := range sorted {
		v := [3]float64{r.SuperRequestsPerPod["baseline"][k], r.SuperRequestsPerPod["syncer"][k], r.TenantRequestsPerPod[k]}
		if !strings.HasPrefix(k, "WATCH") {
			for i := range sums {
				sums[i] += v[i]
			}
		}
		md += fmt.Sprintf("| %s | %.2f | %.2f | %.2f |\n", k, v[0], v[1], v[2])
	}
	md += fmt.Sprintf("| all but WATCH | %.2f | %.2f | %.2f |\n", sums[0], sums[1], sums[2])
	return md
}

func latencies(s []sample) []float64 {
	out := make([]float64, len(s))
	for i, x := range s {
		out[i] = x.running.Sub(x.created).Seconds()
	}
	slices.Sort(out)
	return out
}

// percentile returns the p-quantile (0 ≤ p ≤ 1) of sorted values: the value at index ⌊p·n⌋
// (the last for p = 1), 0 for no values.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[max(0, min(len(sorted)-1, int(p*float64(len(sorted)))))]
}

// summarize returns the latency percentiles and throughput (Pods over the time from the first
// creation to the last Running) of samples; the zero stats for none.
func summarize(s []sample) stats {
	if len(s) == 0 {
		return stats{}
	}
	l := latencies(s)
	q := func(p float64) float64 { return percentile(l, p) }
	first, last := s[0].created, s[0].running
	for _, x := range s {
		if x.created.Before(first) {
			first = x.created
		}
		if x.running.After(last) {
			last = x.running
		}
	}
	return stats{Pods: len(l), P50: q(0.50), P90: q(0.90), P99: q(0.99), Max: l[len(l)-1],
		Throughput: float64(len(l)) / last.Sub(first).Seconds(), Wall: last.Sub(first).Seconds()}
}

// writeResultJSON writes v, indented, to dir/result.json.
func writeResultJSON(dir string, v any) error {
	j, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "result.json"), j, 0o644)
}

func writeResults(dir string, r result, base, synced []sample) error {
	if err := writeResultJSON(dir, r); err != nil {
		return err
	}
	load := "closed-loop burst"
	if r.Rate > 0 {
		load = fmt.Sprintf("%.0f Pods/s open loop", r.Rate)
	}
	md := fmt.Sprintf(`| %d tenants × %d Pods, %d kwok Nodes, %s, fair queuing %t | baseline (straight to super) | through vc-syncer | ratio |
|---|---|---|---|
| p50 latency (s) | %.3f | %.3f | %.2f |
| p90 latency (s) | %.3f | %.3f | %.2f |
| p99 latency (s) | %.3f | %.3f | %.2f |
| throughput (Pods/s) | %.1f | %.1f | %.2f |
| syncer CPU (s) | | %.2f | |
| syncer peak RSS (MiB) | | %.1f | |
`, r.Tenants, r.PodsPerTenant, r.Nodes, load, r.FairQueuing,
		r.Baseline.P50, r.Syncer.P50, r.Syncer.P50/r.Baseline.P50,
		r.Baseline.P90, r.Syncer.P90, r.Syncer.P90/r.Baseline.P90,
		r.Baseline.P99, r.Syncer.P99, r.P99Ratio,
		r.Baseline.Throughput, r.Syncer.Throughput, r.ThroughputRatio,
		r.SyncerCPUSeconds, float64(r.SyncerPeakRSSBytes)/(1<<20))
	for _, ph := range []string{"downward", "super", "upward"} {
		if v, ok := r.Phases[ph]; ok {
			md += fmt.Sprintf("| phase %s p50 / p99 (s) | | %.3f / %.3f | |\n", ph, v[0], v[1])
		}
	}
	for _, ph := range syncerPhases {
		if v, ok := r.SyncerPhases[ph]; ok {
			md += fmt.Sprintf("| syncer phase %s mean / p50 / p99 (s) | | %.3f / %.3f / %.3f | |\n", ph, v.Mean, v.P50, v.P99)
		}
	}
	md += fmt.Sprintf("| super apiserver 429s | %.0f | %.0f | |\n", r.Super429s["baseline"], r.Super429s["syncer"])
	md += fmt.Sprintf("| CPU per Pod, all processes (ms) | %.1f | %.1f | %.2f |\n", r.CPUPerPod["baseline"], r.CPUPerPod["syncer"], r.CPUPerPod["syncer"]/r.CPUPerPod["baseline"])
	md += fmt.Sprintf("| throughput the CPUs allow at that cost (Pods/s) | %.1f | %.1f | %.2f |\n",
		throughputCeiling(r.CPUPerPod["baseline"], runtime.NumCPU()), throughputCeiling(r.CPUPerPod["syncer"], runtime.NumCPU()), r.ThroughputCeilingRatio)
	md += costTable(r)
	for _, side := range []string{"baseline", "syncer"} {
		var top []string
		for i, u := range r.CPU[side] {
			if i == 5 {
				break
			}
			top = append(top, fmt.Sprintf("%s %.1f s (%.2f cores)", u.Process, u.Seconds, u.Cores))
		}
		md += fmt.Sprintf("\n**%s** — bottleneck: %s. Busiest: %s.\n", side, r.Bottleneck[side], strings.Join(top, ", "))
	}
	md += requestTable(r)
	if err := os.WriteFile(filepath.Join(dir, "result.md"), []byte(md), 0o644); err != nil {
		return err
	}
	return plotHistogram(filepath.Join(dir, "latency.png"), latencies(base), latencies(synced))
}

// superTimes records when the super copy of each synced Pod was first seen and first Running.
type superTimes struct {
	mu             sync.Mutex
	added, running map[string]time.Time
}

// trackSuperPods watches syncer-managed super Pods and records, per bench key ("<tenant
// index>/<name>"), when each was first seen and first Running.
func trackSuperPods(ctx context.Context, super kubernetes.Interface, tenantIndex map[string]int) (*superTimes, func(), error) {
	st := &superTimes{added: map[string]time.Time{}, running: map[string]time.Time{}}
	f := informers.NewSharedInformerFactoryWithOptions(super, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = "tenancy.vcsyncer.io/managed-by=vc-syncer"
	}))
	record := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		i, ok := tenantIndex[p.Annotations["tenancy.vcsyncer.io/tenant"]]
		if !ok {
			return
		}
		key := fmt.Sprint(i, "/", p.Name)
		now := time.Now()
		st.mu.Lock()
		defer st.mu.Unlock()
		if _, seen := st.added[key]; !seen {
			st.added[key] = now
		}
		if _, seen := st.running[key]; !seen && p.Status.Phase == corev1.PodRunning {
			st.running[key] = now
		}
	}
	if _, err := f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: record, UpdateFunc: func(_, n any) { record(n) },
	}); err != nil {
		return nil, nil, err
	}
	stop := make(chan struct{})
	f.Start(stop)
	f.WaitForCacheSync(ctx.Done())
	return st, func() { close(stop); f.Shutdown() }, nil
}

// fill sets each sample's super time from st (left zero for a Pod whose super copy was not
// seen).
func (st *superTimes) fill(samples []sample) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for i := range samples {
		samples[i].super = st.added[samples[i].key]
	}
}

func phaseBreakdown(synced []sample, st *superTimes) map[string][2]float64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	var down, sup, up []float64
	for _, s := range synced {
		a, ok1 := st.added[s.key]
		r, ok2 := st.running[s.key]
		if !ok1 || !ok2 {
			continue
		}
		down = append(down, a.Sub(s.created).Seconds())
		sup = append(sup, r.Sub(a).Seconds())
		up = append(up, s.running.Sub(r).Seconds())
	}
	out := map[string][2]float64{}
	for name, v := range map[string][]float64{"downward": down, "super": sup, "upward": up} {
		if len(v) == 0 {
			continue
		}
		slices.Sort(v)
		out[name] = [2]float64{v[len(v)/2], v[min(len(v)-1, int(0.99*float64(len(v))))]}
	}
	return out
}

// componentCPU returns the CPU seconds used so far by every control-plane process.
func componentCPU(env *localcluster.Environment) map[string]float64 {
	out := map[string]float64{}
	for _, cp := range env.ControlPlanes() {
		for comp, pid := range cp.PIDs() {
			if v, err := cpuSeconds(pid); err == nil {
				out[cp.Name+"/"+comp] = v
			}
		}
	}
	return out
}

func diffCPU(after, before map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		out[k] = v - before[k]
	}
	return out
}

// countTenantEvents waits settle, then counts the Events in each (client, namespace) pair by
// "type/reason" (a failed list is logged and counted as none).
func countTenantEvents(ctx context.Context, settle time.Duration, clients []kubernetes.Interface, namespaces []string) map[string]int {
	select {
	case <-time.After(settle):
	case <-ctx.Done():
	}
	out := map[string]int{}
	for i, cs := range clients {
		evs, err := cs.CoreV1().Events(namespaces[i]).List(ctx, metav1.ListOptions{})
		if err != nil {
			logf("tenant Events: %v", err)
			continue
		}
		for _, e := range evs.Items {
			out[e.Type+"/"+e.Reason]++
		}
	}
	return out
}

// saveCPUProfile records the CPU profile of the syncer serving pprof at addr for d into path.
func saveCPUProfile(ctx context.Context, addr string, d time.Duration, path string) error {
	return saveURL(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, max(1, int(d.Seconds()))), path)
}

// goStats are the syncer's cumulative heap allocations (bytes) and garbage collections.
type goStats struct {
	allocBytes, gcCycles float64
	ok                   bool
}

// syncerGoStats reads go_memstats_alloc_bytes_total and go_gc_duration_seconds_count from the
// syncer's /metrics at addr; ok is false when either cannot be read.
func syncerGoStats(ctx context.Context, addr string) goStats {
	var b strings.Builder
	if err := saveURLTo(ctx, "http://"+addr+"/metrics", &b); err != nil {
		logf("syncer metrics: %v", err)
		return goStats{}
	}
	var g goStats
	var seen int
	for _, m := range parseMetrics(b.String()) {
		switch m.name {
		case "go_memstats_alloc_bytes_total":
			g.allocBytes, seen = m.value, seen+1
		case "go_gc_duration_seconds_count":
			g.gcCycles, seen = m.value, seen+1
		}
	}
	g.ok = seen == 2
	return g
}

// saveMetrics saves the syncer's Prometheus /metrics (served at addr) into path.
func saveMetrics(ctx context.Context, addr, path string) error {
	return saveURL(ctx, "http://"+addr+"/metrics", path)
}

func saveURL(ctx context.Context, url, path string) error {
	var b strings.Builder
	if err := saveURLTo(ctx, url, &b); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// get GETs url and returns the response body, which the caller closes. A status other than 200
// is an error (the body is then closed).
func get(ctx context.Context, url string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return resp.Body, nil
}

// saveURLTo GETs url and copies the body into w; a status other than 200 is an error.
func saveURLTo(ctx context.Context, url string, w io.Writer) error {
	body, err := get(ctx, url)
	if err != nil {
		return err
	}
	defer body.Close()
	_, err = io.Copy(w, body)
	return err
}
