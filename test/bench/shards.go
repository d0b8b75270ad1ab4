package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/sharding"
)

// shardsConfig are the flags of the shards experiment.
type shardsConfig struct {
	tenants, pods, nodes, concurrency int
	replicas                          []int
	lease                             time.Duration
	timeout                           time.Duration
	out                               string
}

// shardsRound is what one replica count measured.
type shardsRound struct {
	Replicas int `json:"replicas"`
	// TenantsByReplica is how many tenants each replica synced (by shard id).
	TenantsByReplica map[string]int `json:"tenantsByReplica"`
	// ColdStartSeconds: every replica started with no checkpoint → every tenant Running on the
	// shard the ring gives it.
	ColdStartSeconds float64 `json:"coldStartSeconds"`
	// Burst is --pods Pods per tenant created at once (--concurrency per tenant) through the
	// syncer replicas: tenant create call → tenant Pod Running.
	Burst           stats   `json:"burst"`
	P99Ratio        float64 `json:"p99Ratio"`
	ThroughputRatio float64 `json:"throughputRatio"`
	// RSSBytesByReplica is each replica's resident memory after the burst, settled.
	RSSBytesByReplica map[string]int64 `json:"rssBytesByReplica"`
	// RSSBytesTotal is their sum.
	RSSBytesTotal int64 `json:"rssBytesTotal"`
	// SuperCacheObjectsByReplica is, per replica, the objects in its super-cluster informer
	// caches of the kinds a tenant owns after the burst (vcsyncer_super_cache_objects summed
	// over kinds, sharedSuperKinds left out): with sharding only its own tenants' objects.
	SuperCacheObjectsByReplica map[string]int `json:"superCacheObjectsByReplica"`
	// RestartSeconds: every replica stopped with SIGTERM (final checkpoint, tenants released),
	// then all started again → every tenant Running on its shard (from the checkpoints).
	RestartSeconds float64 `json:"restartSeconds"`
	// KillRecoverySeconds (2 replicas or more): SIGKILL of the replica with the most tenants →
	// all of them Running on the survivors (the Lease duration is most of it).
	KillRecoverySeconds float64 `json:"killRecoverySeconds,omitempty"`
	// KilledTenants is how many tenants the killed replica synced.
	KilledTenants int `json:"killedTenants,omitempty"`
}

// sharedSuperKinds are the kinds whose super caches every replica holds whole (they belong to
// no one tenant): left out of SuperCacheObjectsByReplica.
var sharedSuperKinds = map[string]bool{"Event": true, "PersistentVolume": true, "StorageClass": true, "PriorityClass": true}

type shardsResult struct {
	Date                 string        `json:"date"`
	Tenants              int           `json:"tenants"`
	PodsPerTenant        int           `json:"podsPerTenant"`
	Nodes                int           `json:"nodes"`
	Concurrency          int           `json:"concurrencyPerTenant"`
	LeaseDurationSeconds float64       `json:"shardLeaseDurationSeconds"`
	Baseline             stats         `json:"baseline"`
	Rounds               []shardsRound `json:"rounds"`
}

func runShards(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("shards", flag.ExitOnError)
	var c shardsConfig
	fs.IntVar(&c.tenants, "tenants", 6, "number of tenants")
	fs.IntVar(&c.pods, "pods", 30, "Pods per tenant in each burst")
	fs.IntVar(&c.nodes, "nodes", 4, "kwok Nodes in the super cluster")
	fs.IntVar(&c.concurrency, "concurrency", 10, "concurrent create calls per tenant")
	reps := fs.String("replicas", "1,2,3", "comma-separated replica counts, each a round on the same control planes")
	fs.DurationVar(&c.lease, "shard-lease-duration", sharding.DefaultLeaseDuration, "--shard-lease-duration of the replicas")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "give up after this long per phase")
	fs.StringVar(&c.out, "out", "bench-out/shards", "directory for result.json and result.md")
	_ = fs.Parse(args)
	for _, r := range strings.Split(*reps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(r))
		if err != nil || n < 1 {
			return fmt.Errorf("--replicas: %q is not a replica count", r)
		}
		c.replicas = append(c.replicas, n)
	}
	return shards(ctx, c)
}

// shardReplica is one running `vc-syncer run --sharding`.
type shardReplica struct {
	id      string
	metrics string // host:port of its metrics endpoint
	args    []string
	bin     string
	log     string
	cmd     *exec.Cmd
	done    chan struct{} // closed when cmd has exited
}

func (r *shardReplica) start(ctx context.Context) error {
	f, err := os.OpenFile(r.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	r.cmd = exec.CommandContext(ctx, r.bin, r.args...)
	r.cmd.Stdout, r.cmd.Stderr = f, f
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		f.Close()
		return err
	}
	done := make(chan struct{})
	r.done = done
	go func(cmd *exec.Cmd) { _ = cmd.Wait(); f.Close(); close(done) }(r.cmd)
	return nil
}

func (r *shardReplica) signal(sig syscall.Signal) {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(sig)
	select {
	case <-r.done:
	case <-time.After(45 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
	r.cmd = nil
}

func shards(ctx context.Context, c shardsConfig) error {
	env, err := startEnv(ctx, c.out, c.nodes, c.tenants)
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	bc := config{pods: c.pods, concurrency: c.concurrency, timeout: c.timeout}
	logf("baseline: %d × %d Pods straight into the super cluster", c.tenants, c.pods)
	baseClients, baseNS, err := baselineNamespaces(ctx, env, c.tenants)
	if err != nil {
		return err
	}
	base, err := burst(ctx, bc, baseClients, baseNS)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	for _, ns := range baseNS {
		_ = env.Super.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	}
	res := shardsResult{Date: time.Now().UTC().Format(time.RFC3339), Tenants: c.tenants, PodsPerTenant: c.pods, Nodes: c.nodes,
		Concurrency: c.concurrency, LeaseDurationSeconds: c.lease.Seconds(), Baseline: summarize(base)}
	bin, err := buildSyncer(ctx)
	if err != nil {
		return err
	}
	logs, err := os.MkdirTemp("", "vc-syncer-shards-logs-")
	if err != nil {
		return err
	}
	logf("replica logs in %s", logs)
	superKC := filepath.Join(env.Dir, "super.kubeconfig")
	if err := os.WriteFile(superKC, env.Super.Kubeconfig, 0o600); err != nil {
		return err
	}
	if err := app.InstallCRD(ctx, env.Super.RESTConfig); err != nil {
		return err
	}
	cl, err := client.New(env.Super.RESTConfig, client.Options{Scheme: app.Scheme()})
	if err != nil {
		return err
	}
	registered := false
	for _, n := range c.replicas {
		round, err := shardsRoundRun(ctx, c, env, cl, bin, superKC, logs, n, &registered)
		if err != nil {
			return fmt.Errorf("%d replicas: %w", n, err)
		}
		round.P99Ratio = round.Burst.P99 / res.Baseline.P99
		round.ThroughputRatio = round.Burst.Throughput / res.Baseline.Throughput
		res.Rounds = append(res.Rounds, round)
		if err := writeShardsResults(c.out, res); err != nil { // after every round: a failed later round keeps the earlier
			return err
		}
	}
	logf("done; results in %s", c.out)
	return nil
}

// shardsRoundRun runs one round with n replicas: cold start, burst, RSS, restart from
// checkpoints, SIGKILL of the busiest replica; then it deletes the burst's Pods and stops them.
func shardsRoundRun(ctx context.Context, c shardsConfig, env *localcluster.Environment, cl client.Client, bin, superKC, logs string, n int, registered *bool) (shardsRound, error) {
	round := shardsRound{Replicas: n, TenantsByReplica: map[string]int{}, RSSBytesByReplica: map[string]int64{}, SuperCacheObjectsByReplica: map[string]int{}}
	dir := filepath.Join(env.Dir, fmt.Sprintf("shards-%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return round, err
	}
	reps := make([]*shardReplica, n)
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("shard-%d", i)
		addr := freeAddr()
		reps[i] = &shardReplica{id: ids[i], bin: bin, log: filepath.Join(logs, fmt.Sprintf("syncer-%d-%s.log", n, ids[i])), metrics: addr,
			args: []string{"run", "--super-kubeconfig", superKC, "--metrics-bind-address", addr, "--metrics-secure=false", "--health-probe-bind-address", "0",
				"--sharding", "--shard-id", ids[i], "--shard-lease-duration", c.lease.String(),
				"--checkpoint-store", "file:" + filepath.Join(dir, "ckpt"), "--checkpoint-interval", "5s"}}
	}
	defer func() {
		for _, r := range reps {
			r.signal(syscall.SIGTERM)
		}
	}()
	ring := sharding.NewRing(ids, 0)
	t0 := time.Now()
	for _, r := range reps {
		if err := r.start(ctx); err != nil {
			return round, err
		}
	}
	if !*registered {
		if err := registerTenants(ctx, env); err != nil {
			return round, err
		}
		*registered = true
	}
	if err := waitShards(ctx, cl, env.Tenants, ring, c.timeout); err != nil {
		return round, fmt.Errorf("cold start: %w", err)
	}
	round.ColdStartSeconds = time.Since(t0).Seconds()
	for _, t := range env.Tenants {
		round.TenantsByReplica[ring.Owner(t.Name)]++
	}
	logf("%d replicas: every tenant Running on its shard %.1fs after a cold start %v", n, round.ColdStartSeconds, round.TenantsByReplica)

	ns := fmt.Sprintf("burst-%d", n)
	var clients []kubernetes.Interface
	var nss []string
	for _, t := range env.Tenants {
		if err := createNamespace(ctx, t.Client, ns); err != nil {
			return round, err
		}
		clients, nss = append(clients, t.Client), append(nss, ns)
	}
	bc := config{pods: c.pods, concurrency: c.concurrency, timeout: c.timeout}
	synced, err := burst(ctx, bc, clients, nss)
	if err != nil {
		return round, fmt.Errorf("burst: %w", err)
	}
	round.Burst = summarize(synced)
	logf("%d replicas: burst p99 %.2fs, %.1f Pods/s", n, round.Burst.P99, round.Burst.Throughput)
	time.Sleep(10 * time.Second) // settle (idle memory release runs every 30s; RSS as a provider sees it)
	for _, r := range reps {
		rss, err := procStatusBytes(r.cmd.Process.Pid, "VmRSS")
		if err != nil {
			return round, err
		}
		round.RSSBytesByReplica[r.id] = rss
		round.RSSBytesTotal += rss
		samples, err := scrape(ctx, "http://"+r.metrics+"/metrics")
		if err != nil {
			return round, err
		}
		for _, m := range samples {
			if m.name == "vcsyncer_super_cache_objects" && !sharedSuperKinds[m.labels["kind"]] {
				round.SuperCacheObjectsByReplica[r.id] += int(m.value)
			}
		}
	}

	time.Sleep(6 * time.Second) // a periodic checkpoint (5 s) after the burst
	for _, r := range reps {
		r.signal(syscall.SIGTERM)
	}
	t1 := time.Now()
	for _, r := range reps {
		if err := r.start(ctx); err != nil {
			return round, err
		}
	}
	if err := waitShards(ctx, cl, env.Tenants, ring, c.timeout); err != nil {
		return round, fmt.Errorf("restart: %w", err)
	}
	round.RestartSeconds = time.Since(t1).Seconds()
	logf("%d replicas: every tenant Running on its shard %.1fs after a restart from checkpoints", n, round.RestartSeconds)

	if n >= 2 {
		time.Sleep(6 * time.Second) // a periodic checkpoint of the running replicas
		victim := 0
		for i, id := range ids {
			if round.TenantsByReplica[id] > round.TenantsByReplica[ids[victim]] {
				victim = i
			}
		}
		var rest []string
		for i, id := range ids {
			if i != victim {
				rest = append(rest, id)
			}
		}
		t2 := time.Now()
		reps[victim].signal(syscall.SIGKILL)
		if err := waitShards(ctx, cl, env.Tenants, sharding.NewRing(rest, 0), c.timeout); err != nil {
			return round, fmt.Errorf("after the kill: %w", err)
		}
		round.KillRecoverySeconds = time.Since(t2).Seconds()
		round.KilledTenants = round.TenantsByReplica[ids[victim]]
		logf("%d replicas: the %d tenants of the killed %s Running on the others %.1fs after the SIGKILL", n, round.KilledTenants, ids[victim], round.KillRecoverySeconds)
	}
	// Leave the tenants as found: the burst's Pods go (the syncer deletes their super copies).
	for _, t := range env.Tenants {
		_ = t.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, c.timeout, true, func(ctx context.Context) (bool, error) {
		for _, t := range env.Tenants {
			tn := &tenancyv1alpha1.Tenant{}
			if err := cl.Get(ctx, client.ObjectKey{Name: t.Name}, tn); err != nil {
				return false, nil
			}
			_, err := env.Super.Client.CoreV1().Namespaces().Get(ctx, conversion.SuperNamespace(t.Name, string(tn.UID), ns), metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				return false, nil
			}
		}
		return true, nil
	})
	return round, err
}

// waitShards waits until every tenant is Running with status.shard the ring's owner.
func waitShards(ctx context.Context, cl client.Client, tenants []*localcluster.ControlPlane, ring *sharding.Ring, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for _, t := range tenants {
			tn := &tenancyv1alpha1.Tenant{}
			if err := cl.Get(ctx, client.ObjectKey{Name: t.Name}, tn); err != nil || tn.Status.Phase != tenancyv1alpha1.TenantRunning || tn.Status.Shard != ring.Owner(t.Name) {
				return false, nil
			}
		}
		return true, nil
	})
}

func writeShardsResults(dir string, r shardsResult) error {
	if err := writeResultJSON(dir, r); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Sharding: %d tenants, %d Pods each per burst, 1 to %d replicas\n\n", r.Tenants, r.PodsPerTenant, len(r.Rounds))
	fmt.Fprintf(&b, "%s, %d kwok Nodes, %d concurrent creates per tenant, shard Lease %.0f s. Baseline (the same Pods straight into the super cluster): p99 %.2f s, %.1f Pods/s.\n\n",
		r.Date, r.Nodes, r.Concurrency, r.LeaseDurationSeconds, r.Baseline.P99, r.Baseline.Throughput)
	b.WriteString("| replicas | tenants per replica | cold start | burst p99 (ratio) | throughput (ratio) | RSS per replica | RSS total | super objects cached per replica | restart from checkpoints | SIGKILL → its tenants served again |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, rd := range r.Rounds {
		var per, rss, cached []string
		ids := make([]string, 0, len(rd.RSSBytesByReplica))
		for id := range rd.RSSBytesByReplica {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			per = append(per, strconv.Itoa(rd.TenantsByReplica[id]))
			rss = append(rss, fmt.Sprintf("%.0f", float64(rd.RSSBytesByReplica[id])/(1<<20)))
			cached = append(cached, strconv.Itoa(rd.SuperCacheObjectsByReplica[id]))
		}
		kill := "—"
		if rd.KilledTenants > 0 {
			kill = fmt.Sprintf("%.1f s (%d tenants)", rd.KillRecoverySeconds, rd.KilledTenants)
		}
		fmt.Fprintf(&b, "| %d | %s | %.1f s | %.2f s (×%.2f) | %.1f Pods/s (×%.2f) | %s MiB | %.0f MiB | %s | %.1f s | %s |\n",
			rd.Replicas, strings.Join(per, ", "), rd.ColdStartSeconds, rd.Burst.P99, rd.P99Ratio, rd.Burst.Throughput, rd.ThroughputRatio,
			strings.Join(rss, ", "), float64(rd.RSSBytesTotal)/(1<<20), strings.Join(cached, ", "), rd.RestartSeconds, kill)
	}
	return os.WriteFile(filepath.Join(dir, "result.md"), []byte(b.String()), 0o644)
}
