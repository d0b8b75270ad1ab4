package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/localcluster"
)

// KubeconfigNamespace is where the harness registers the tenants and where the syncer keeps
// its checkpoint Secrets.
const KubeconfigNamespace = "vc-syncer-system"

// LeaseDuration is the replicas' --shard-lease-duration (their renew interval is 2 s).
const LeaseDuration = 6 * time.Second

// Options configure a Harness.
type Options struct {
	// Replicas is the number of syncer processes; above 1 they run with --sharding, and spares
	// are prepared (not started) up to 3 processes in all for SyncerScale. Defaults to 1.
	Replicas int
	// Out is the directory for the replicas' logs. Required.
	Out string
	// OpsPerSecond is each tenant's load rate. Defaults to 3.
	OpsPerSecond float64
	// SettleTimeout bounds the wait for the settled invariants after the last fault. Defaults to 2 minutes.
	SettleTimeout time.Duration
	// QuietWindow is how long vcsyncer_sync_retries_total must stay flat after the settle. Defaults to 15 s.
	QuietWindow time.Duration
	// CheckInterval is the period of the continuous invariants. Defaults to 3 s.
	CheckInterval time.Duration
	// SyncerArgs are extra flags of every replica.
	SyncerArgs []string
	// Logf receives progress lines. Defaults to none.
	Logf func(format string, args ...any)
}

// Harness runs soaks against one environment and its syncer replicas.
type Harness struct {
	o       Options
	env     *localcluster.Environment
	target  *Target
	tenants []kubernetes.Interface // with a request timeout
	loads   []*Load
	names   []string
	// kubeconfigs are the tenants' kubeconfigs as registered: through their loopback proxies.
	kubeconfigs [][]byte
}

// Start registers env's tenants, starts o.Replicas replicas of the syncer binary bin against
// env's super cluster, waits until every Tenant is Running and creates the load's stable
// namespaces. The caller calls Stop.
func Start(ctx context.Context, env *localcluster.Environment, bin string, o Options) (*Harness, error) {
	o.Replicas = max(1, o.Replicas)
	if o.OpsPerSecond <= 0 {
		o.OpsPerSecond = 3
	}
	if o.SettleTimeout <= 0 {
		o.SettleTimeout = 2 * time.Minute
	}
	if o.QuietWindow <= 0 {
		o.QuietWindow = 15 * time.Second
	}
	if o.CheckInterval <= 0 {
		o.CheckInterval = 3 * time.Second
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	h := &Harness{o: o, env: env, target: &Target{Super: env.Super.Client, CheckpointNamespace: KubeconfigNamespace,
		CheckpointPrefix: options.DefaultCheckpointSecret, SuperEtcdURL: env.Super.EtcdURL, Refusals: &Refusals{}}}
	h.target.TenantAPIServerPID = func(i int) int { return env.Tenants[i].PIDs()[localcluster.KubeAPIServer] }
	h.target.RestartTenantAPIServer = func(ctx context.Context, i int) error { return env.Tenants[i].RestartAPIServer(ctx) }
	h.target.StopTenantAPIServer = func(i int) error { return env.Tenants[i].StopAPIServer() }
	h.target.StartTenantAPIServer = func(ctx context.Context, i int) error { return env.Tenants[i].StartAPIServer(ctx) }
	h.target.RestartSuperAPIServer = env.Super.RestartAPIServer
	h.target.AddTenant = h.addTenant
	if _, err := env.Super.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KubeconfigNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	if err := app.InstallCRD(ctx, env.Super.RESTConfig); err != nil {
		return nil, err
	}
	superKC := filepath.Join(o.Out, "super.kubeconfig")
	if err := os.WriteFile(superKC, env.Super.Kubeconfig, 0o600); err != nil {
		return nil, err
	}
	pool := o.Replicas
	if o.Replicas > 1 {
		pool = max(o.Replicas, 3) // spares for SyncerScale
	}
	for i := range pool {
		id := fmt.Sprintf("shard-%d", i)
		addr, err := localcluster.FreeAddr()
		if err != nil {
			return nil, err
		}
		paddr, err := localcluster.FreeAddr()
		if err != nil {
			return nil, err
		}
		args := []string{"run", "--super-kubeconfig", superKC, "--metrics-bind-address", addr, "--metrics-secure=false", "--pprof-bind-address", paddr,
			"--health-probe-bind-address", "0", "--kubeconfig-namespace", KubeconfigNamespace,
			"--checkpoint-store", "secret:" + KubeconfigNamespace + "/" + options.DefaultCheckpointSecret, "--checkpoint-interval", "3s"}
		if o.Replicas > 1 {
			args = append(args, "--sharding", "--shard-id", id, "--shard-lease-duration", LeaseDuration.String(), "--shard-lease-renew-interval", "2s",
				"--leader-election-namespace", KubeconfigNamespace)
		} else {
			args = append(args, "--leader-elect=false")
		}
		args = append(args, o.SyncerArgs...)
		r := &Replica{ID: id, Metrics: addr, Pprof: paddr, Log: filepath.Join(o.Out, "syncer-"+id+".log"), bin: bin, args: args}
		if i < o.Replicas {
			h.target.Replicas = append(h.target.Replicas, r)
		} else {
			h.target.Spares = append(h.target.Spares, r)
		}
	}
	for _, r := range h.target.Replicas {
		if err := r.Start(); err != nil {
			h.Stop()
			return nil, err
		}
	}
	cl, err := client.New(env.Super.RESTConfig, client.Options{Scheme: app.Scheme()})
	if err != nil {
		h.Stop()
		return nil, err
	}
	h.target.Tenancy = cl
	for _, t := range env.Tenants {
		// The syncer reaches the tenant through a loopback proxy (LossyProxy); the harness's
		// own clients do not.
		p, err := StartProxy(strings.TrimPrefix(t.RESTConfig.Host, "https://"))
		if err != nil {
			h.Stop()
			return nil, err
		}
		h.target.Proxies = append(h.target.Proxies, p)
		kc, err := proxiedKubeconfig(t.Kubeconfig, p.Addr)
		if err != nil {
			h.Stop()
			return nil, err
		}
		h.kubeconfigs = append(h.kubeconfigs, kc)
		if err := app.AddTenantWithOptions(ctx, cl, KubeconfigNamespace, t.Name, kc, tenantOptions(t)); err != nil {
			h.Stop()
			return nil, fmt.Errorf("registering %s: %w", t.Name, err)
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		h.target.TenantUIDs, h.names = nil, nil
		for _, t := range env.Tenants {
			tn := &tenancyv1alpha1.Tenant{}
			if err := cl.Get(ctx, client.ObjectKey{Name: t.Name}, tn); err != nil || tn.Status.Phase != tenancyv1alpha1.TenantRunning {
				return false, nil
			}
			h.target.TenantUIDs, h.names = append(h.target.TenantUIDs, string(tn.UID)), append(h.names, t.Name)
		}
		h.target.TenantNames = h.names
		return true, nil
	}); err != nil {
		h.Stop()
		return nil, fmt.Errorf("tenants not Running: %w (replica logs in %s)", err, o.Out)
	}
	period := time.Duration(float64(time.Second) / o.OpsPerSecond)
	for i, t := range env.Tenants {
		rc := rest.CopyConfig(t.RESTConfig)
		rc.Timeout = 15 * time.Second
		rc.QPS, rc.Burst = 50, 100
		cs, err := kubernetes.NewForConfig(rc)
		if err != nil {
			h.Stop()
			return nil, err
		}
		h.tenants = append(h.tenants, cs)
		h.loads = append(h.loads, NewLoad(cs, uint64(i), period, &LoadStats{}))
		for _, ns := range StableNamespaces {
			if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				h.Stop()
				return nil, err
			}
		}
	}
	h.target.TenantAdmins = h.tenants
	o.Logf("%d tenants Running, %d syncer replicas (logs in %s)", len(env.Tenants), o.Replicas, o.Out)
	return h, nil
}

// Stop stops every replica (SIGTERM) and closes the proxies in front of the tenant apiservers.
func (h *Harness) Stop() {
	for _, r := range h.allReplicas() {
		r.Signal(syscall.SIGTERM)
	}
	for _, p := range h.target.Proxies {
		p.Close()
	}
}

// proxiedKubeconfig returns kubeconfig with every cluster's server pointed at https://addr
// (a Proxy in front of it; the certificates stay valid: they name 127.0.0.1).
func proxiedKubeconfig(kubeconfig []byte, addr string) ([]byte, error) {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, err
	}
	for _, c := range cfg.Clusters {
		c.Server = "https://" + addr
	}
	return clientcmd.Write(*cfg)
}

// allReplicas returns the replicas and the spares (SyncerScale).
func (h *Harness) allReplicas() []*Replica { return slices.Concat(h.target.Replicas, h.target.Spares) }

// tenantOptions are the Tenant spec fields the harness registers control plane t with.
func tenantOptions(t *localcluster.ControlPlane) app.TenantOptions {
	to := app.TenantOptions{Weight: 1, KubeletClientCA: t.KubeletClientCA}
	if t.ServiceCIDR != "" {
		to.ServiceCIDRs = []string{t.ServiceCIDR}
	}
	return to
}

// addTenant registers tenant i as Start did (Target.AddTenant: the kubeconfig through its
// loopback proxy, the same options) and returns its Tenant's UID once it is Running.
func (h *Harness) addTenant(ctx context.Context, i int) (string, error) {
	t := h.env.Tenants[i]
	if err := app.AddTenantWithOptions(ctx, h.target.Tenancy, KubeconfigNamespace, t.Name, h.kubeconfigs[i], tenantOptions(t)); err != nil {
		return "", err
	}
	var uid string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		tn := &tenancyv1alpha1.Tenant{}
		if err := h.target.Tenancy.Get(ctx, client.ObjectKey{Name: t.Name}, tn); err != nil || tn.Status.Phase != tenancyv1alpha1.TenantRunning {
			return false, nil
		}
		uid = string(tn.UID)
		return true, nil
	})
	if err != nil {
		return "", fmt.Errorf("Tenant %s not Running: %w", t.Name, err)
	}
	return uid, nil
}

// Result is what one soak found.
type Result struct {
	Seed uint64 `json:"seed"`
	// Faults counts the faults injected, by kind; FaultErrors those that found nothing to act on.
	Faults      map[Kind]int `json:"faults"`
	FaultErrors int          `json:"faultErrors"`
	Violations  []Violation  `json:"violations"`
	// SettleSecondsP99 and SettleSecondsMax: per tenant object, the time from the end of the
	// last fault (load stopped) to the first check after which it no longer broke an invariant.
	SettleSecondsP99 float64 `json:"settleSecondsP99"`
	SettleSecondsMax float64 `json:"settleSecondsMax"`
	// SettleSeconds is the time from the end of the last fault (load stopped) to the first check
	// at which every settled invariant held for every object (also those gone by then, like a
	// deleted churn Namespace that was still terminating); the settle bound when they never did.
	SettleSeconds float64 `json:"settleSeconds"`
	// Settled is false when the settled invariants did not hold within the settle bound.
	Settled bool `json:"settled"`
	// ObjectsChecked is the number of tenant objects (load objects and Namespaces) in the final check.
	ObjectsChecked int `json:"objectsChecked"`
	// ContinuousChecks is how many times the continuous invariants were checked.
	ContinuousChecks int      `json:"continuousChecks"`
	FaultPhaseSecs   float64  `json:"faultPhaseSeconds"`
	Load             string   `json:"load"`
	LoadErrors       []string `json:"loadFirstErrors,omitempty"`
	// RetriesDuringQuiet are the vcsyncer_sync_retries_total series that rose in the quiet window.
	RetriesDuringQuiet map[string]float64 `json:"retriesDuringQuiet,omitempty"`
	FaultLog           string             `json:"faultLog"`
	// GoroutinesBefore/After and HeapBytesBefore/After are the sums over the replicas of their
	// goroutines and live heap (after a forced GC) before the faults and after the settle and
	// the quiet window (resources-back-to-level); ResourcesBefore/After are the replicas' own
	// figures. 0 and empty when not measured (the settle failed, or a replica did not answer).
	GoroutinesBefore int       `json:"goroutinesBefore"`
	GoroutinesAfter  int       `json:"goroutinesAfter"`
	HeapBytesBefore  int64     `json:"heapBytesBefore"`
	HeapBytesAfter   int64     `json:"heapBytesAfter"`
	ResourcesBefore  Resources `json:"resourcesBefore,omitempty"`
	ResourcesAfter   Resources `json:"resourcesAfter,omitempty"`
}

// Soak runs faults (from seed's schedule, or a replayed log) against the environment while the
// load runs, checks the continuous invariants all along, then stops the load and checks the
// settled ones and the retry counters. The fault log goes to logPath as the soak runs.
func (h *Harness) Soak(ctx context.Context, seed uint64, faults []Fault, logPath string) (*Result, error) {
	res := &Result{Seed: seed, Faults: map[Kind]int{}, FaultLog: logPath, Violations: []Violation{}}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	enc := json.NewEncoder(logFile)
	var vmu sync.Mutex
	seenV := map[string]bool{}
	addV := func(vs ...Violation) {
		vmu.Lock()
		defer vmu.Unlock()
		for _, v := range vs {
			if k := v.Invariant + v.Message; !seenV[k] {
				seenV[k] = true
				res.Violations = append(res.Violations, v)
				h.o.Logf("VIOLATION %s", v)
			}
		}
	}
	if rb, err := h.resources(ctx); err != nil {
		h.o.Logf("resources before the faults not measured: %v", err)
	} else {
		res.ResourcesBefore, res.GoroutinesBefore, res.HeapBytesBefore = rb, rb.Goroutines(), rb.HeapBytes()
		h.o.Logf("before the faults: %d goroutines, live heap %.1f MiB (sums over the replicas)", rb.Goroutines(), mib(rb.HeapBytes()))
	}
	h.target.Violate = func(v Violation) { addV(v) }
	defer func() { h.target.Violate = nil }()
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	stats := &LoadStats{}
	var lwg sync.WaitGroup
	for _, l := range h.loads {
		l.stats = stats
		lwg.Go(func() { l.run(loadCtx) })
	}
	checkCtx, stopCheck := context.WithCancel(ctx)
	defer stopCheck()
	var cwg sync.WaitGroup
	cwg.Go(func() {
		for checkCtx.Err() == nil {
			sleepCtx(checkCtx, h.o.CheckInterval)
			for _, r := range h.allReplicas() {
				for _, c := range r.Crashes() {
					addV(Violation{Invariant: InvNoCrash, Key: "replica/" + r.ID, Message: c})
				}
			}
			refusedBefore := h.target.Refusals.Ongoing()
			cctx, cancel := context.WithTimeout(checkCtx, 30*time.Second)
			at := time.Now()
			objs, err := superObjects(cctx, h.env.Super.Client, "")
			cancel()
			if err != nil {
				continue
			}
			addV(Continuous(Snapshot{Super: objs, Refused: StableRefusals(refusedBefore, h.target.Refusals.Ongoing()), At: at})...)
			vmu.Lock()
			res.ContinuousChecks++
			vmu.Unlock()
		}
	})
	begin := time.Now()
	h.o.Logf("seed %d: %d faults %v", seed, len(faults), CountByKind(faults))
	for _, f := range faults {
		sleepCtx(ctx, f.Gap())
		if ctx.Err() != nil {
			break
		}
		rec := Record{Fault: f, Seed: seed, Start: time.Now().UTC().Format("2006-01-02T15:04:05.000Z")}
		inj := Injectors[f.Kind]
		if inj == nil {
			return nil, fmt.Errorf("fault %s: unknown kind", f)
		}
		detail, err := inj(ctx, h.target, f)
		rec.Detail = detail
		if err != nil {
			rec.Error = err.Error()
			res.FaultErrors++
		} else {
			res.Faults[f.Kind]++
		}
		if err := enc.Encode(rec); err != nil {
			return nil, err
		}
		h.o.Logf("fault %s: %s%s", f, detail, map[bool]string{true: " error: " + rec.Error}[err != nil])
	}
	res.FaultPhaseSecs = time.Since(begin).Seconds()
	for _, r := range h.target.Replicas {
		if err := r.EnsureRunning(); err != nil {
			return nil, err
		}
	}
	stopLoad()
	lwg.Wait()
	res.Load, res.LoadErrors = stats.String(), stats.FirstErrors()
	h.o.Logf("faults done after %.0fs; load stopped: %s", res.FaultPhaseSecs, res.Load)

	if err := h.settle(ctx, res, addV); err != nil {
		return nil, err
	}
	stopCheck()
	cwg.Wait()
	if res.Settled {
		if err := h.quiet(ctx, res, addV); err != nil {
			return nil, err
		}
		if ra, err := h.resources(ctx); err != nil {
			h.o.Logf("resources after the settle not measured: %v", err)
		} else {
			res.ResourcesAfter, res.GoroutinesAfter, res.HeapBytesAfter = ra, ra.Goroutines(), ra.HeapBytes()
			h.o.Logf("after the settle: %d goroutines, live heap %.1f MiB (sums over the replicas)", ra.Goroutines(), mib(ra.HeapBytes()))
			if len(res.ResourcesBefore) > 0 && !SameReplicas(res.ResourcesBefore, ra) {
				h.o.Logf("resources not compared: %d replicas measured before the faults, %d after", len(res.ResourcesBefore), len(ra))
			}
			addV(ResourcesBackToLevel(res.ResourcesBefore, ra)...)
		}
	}
	for _, r := range h.allReplicas() {
		for _, c := range r.Crashes() {
			addV(Violation{Invariant: InvNoCrash, Key: "replica/" + r.ID, Message: c})
		}
	}
	return res, nil
}

// Check takes a snapshot and returns what the settled invariants find in it (to show that they
// can fail: with the replicas stopped, a change behind the syncer's back must be reported).
func (h *Harness) Check(ctx context.Context) ([]Violation, error) {
	s, err := h.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return Settled(s), nil
}

// snapshot lists every tenant's load objects and the super cluster's managed objects.
func (h *Harness) snapshot(ctx context.Context) (Snapshot, error) {
	var s Snapshot
	refusedBefore := h.target.Refusals.Ongoing()
	for i, cs := range h.tenants {
		objs, err := tenantObjects(ctx, cs)
		if err != nil {
			return s, fmt.Errorf("%s: %w", h.names[i], err)
		}
		s.Tenants = append(s.Tenants, TenantSnap{Name: h.names[i], UID: h.target.TenantUIDs[i], Objects: objs})
	}
	s.At = time.Now()
	objs, err := superObjects(ctx, h.env.Super.Client, "")
	if err != nil {
		return s, err
	}
	s.Super = objs
	s.Refused = StableRefusals(refusedBefore, h.target.Refusals.Ongoing())
	return s, nil
}

// settle polls the settled invariants until they hold or the settle bound passes, and records
// each tenant object's settle time.
func (h *Harness) settle(ctx context.Context, res *Result, addV func(...Violation)) error {
	t0 := time.Now()
	settledAt := map[string]float64{}
	var last []Violation
	var lastSnap Snapshot
	for {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		s, err := h.snapshot(cctx)
		cancel()
		now := time.Since(t0).Seconds()
		if err == nil {
			last, lastSnap = Settled(s), s
			bad := map[string]bool{}
			for _, v := range last {
				bad[v.Key] = true
			}
			for _, tn := range s.Tenants {
				for _, o := range tn.Objects {
					k := tn.Name + "/" + o.Key()
					if bad[k] {
						delete(settledAt, k)
					} else if _, ok := settledAt[k]; !ok {
						settledAt[k] = now
					}
				}
			}
			if len(last) == 0 {
				res.Settled = true
				break
			}
		}
		if time.Since(t0) > h.o.SettleTimeout {
			if err != nil {
				return fmt.Errorf("settle: %w", err)
			}
			h.o.Logf("not settled after %s: %d violations", h.o.SettleTimeout, len(last))
			h.logUnreadySuperPods(ctx)
			addV(h.withEvidence(ctx, last)...)
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sleepCtx(ctx, 2*time.Second)
	}
	var times []float64
	for _, tn := range lastSnap.Tenants {
		res.ObjectsChecked += len(tn.Objects)
		for _, o := range tn.Objects {
			if v, ok := settledAt[tn.Name+"/"+o.Key()]; ok {
				times = append(times, v)
			}
		}
	}
	slices.Sort(times)
	if n := len(times); n > 0 {
		res.SettleSecondsP99 = times[min(n-1, int(0.99*float64(n)))]
		res.SettleSecondsMax = times[n-1]
	}
	res.SettleSeconds = time.Since(t0).Seconds()
	h.o.Logf("settled %t after %.1fs: %d tenant objects, settle p99 %.1fs, max %.1fs", res.Settled, time.Since(t0).Seconds(), res.ObjectsChecked, res.SettleSecondsP99, res.SettleSecondsMax)
	return nil
}

// quiet checks that no replica's vcsyncer_sync_retries_total rises during the quiet window
// after the settle (no request retried without a change of its input).
func (h *Harness) quiet(ctx context.Context, res *Result, addV func(...Violation)) error {
	before, err := h.retries(ctx)
	if err != nil {
		return err
	}
	sleepCtx(ctx, h.o.QuietWindow)
	after, err := h.retries(ctx)
	if err != nil {
		return err
	}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			if res.RetriesDuringQuiet == nil {
				res.RetriesDuringQuiet = map[string]float64{}
			}
			res.RetriesDuringQuiet[k] = d
			addV(Violation{Invariant: InvNoHotLoop, Key: "metric/" + k,
				Message: fmt.Sprintf("%s rose by %.0f in the %s after the settle", k, d, h.o.QuietWindow)})
		}
	}
	return nil
}

// retries scrapes vcsyncer_sync_retries_total of every replica, by "<replica> <labels>".
func (h *Harness) retries(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	for _, r := range h.target.Replicas {
		var text string
		err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			t, err := getText(ctx, "http://"+r.Metrics+"/metrics")
			text = t
			return err == nil, nil
		})
		if err != nil {
			return nil, fmt.Errorf("scraping %s: %w", r.ID, err)
		}
		sc := bufio.NewScanner(strings.NewReader(text))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "vcsyncer_sync_retries_total") {
				continue
			}
			sp := strings.LastIndexByte(line, ' ')
			v, err := strconv.ParseFloat(line[sp+1:], 64)
			if err != nil {
				continue
			}
			out[r.ID+" "+line[:sp]] = v
		}
	}
	return out, nil
}

func getText(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", errors.New(resp.Status)
	}
	var b strings.Builder
	_, err = bufio.NewReader(resp.Body).WriteTo(&b)
	return b.String(), err
}
