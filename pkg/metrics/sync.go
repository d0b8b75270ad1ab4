package metrics

import (
	"regexp"
	"runtime"
	"runtime/debug"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/vcsyncer/syncer/pkg/version"
)

// Results (label values of "result") of one reconcile.
const (
	ResultSuccess = "success"
	ResultError   = "error"
)

// Pod-creation phases (label values of "phase"), after the VirtualCluster paper's breakdown of
// Pod creation time (Zheng et al., ICDCS 2021): the downward syncer's queue and processing, the
// super cluster's scheduling, and the upward syncer's queue and processing.
const (
	PhaseDownwardQueue   = "downward_queue"
	PhaseDownwardProcess = "downward_process"
	PhaseSuperScheduling = "super_scheduling"
	PhaseUpwardQueue     = "upward_queue"
	PhaseUpwardProcess   = "upward_process"
)

// Phases lists the Pod-creation phases in pipeline order.
var Phases = []string{PhaseDownwardQueue, PhaseDownwardProcess, PhaseSuperScheduling, PhaseUpwardQueue, PhaseUpwardProcess}

var (
	syncDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "sync", Name: "duration_seconds",
		Help:    "Duration of one reconcile of one object (a worker's call of Downward or Upward), in seconds, by tenant, kind, direction and result (success|error). The _count series is the sync throughput.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12), // 1ms .. ~24s
	}, []string{"tenant", "kind", "direction", "result"})
	syncLag = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "sync", Name: "lag_seconds",
		Help:    "End-to-end lag from a change reaching the syncer (tenant change for downward, super change for upward) to the successful reconcile that wrote it to the other side (or found it already there), in seconds, by tenant, kind and direction.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12), // 5ms .. ~119s
	}, []string{"tenant", "kind", "direction"})
	podPhase = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "pod_creation", Name: "phase_duration_seconds",
		Help:    "Time a new tenant Pod spent in each phase of its creation (downward_queue, downward_process, super_scheduling, upward_queue, upward_process; the VirtualCluster paper's breakdown), in seconds, by tenant and phase.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12), // 1ms .. ~24s
	}, []string{"tenant", "phase"})
	podCreation = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "pod_creation", Name: "duration_seconds",
		Help:    "Time from a new tenant Pod reaching the syncer to the syncer binding it to its vNode in the tenant (the sum of the five phases), in seconds, by tenant.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12), // 5ms .. ~119s
	}, []string{"tenant"})
	podHeld = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "pod_creation", Name: "syncer_held_seconds",
		Help:    "Time a new tenant Pod spent inside the syncer, in seconds, by tenant: its creation (vcsyncer_pod_creation_duration_seconds) less the super cluster's scheduling, i.e. both directions' queue waits and processing, the admission window's wait included.",
		Buckets: prometheus.ExponentialBuckets(0.001, 1.6, 24), // 1ms .. ~50s, fine enough to read a p99 near 25 ms
	}, []string{"tenant"})
	podCalls = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "pod_creation", Name: "call_duration_seconds",
		Help:    "Time the downward reconcile that creates a new tenant Pod's super Pod waited for each of its API calls that hold its worker longest, in seconds, by tenant and call: token_request (the wait for the tenant apiserver's TokenRequests of the Pod's service-account tokens once the super Pod is built; near 0 when they were requested as the Pod arrived, vcsyncer_pod_token_prefetches_total; for a Pod not cached whole they start beside the read of its spec, and only the rest of the wait shows), super_create (the super apiserver's successful create of the super Pod); and, not calls, super_watch (from that create's answer until the syncer's super informer received the super Pod: the super apiserver's watch delivery) and super_informer (from then until the syncer's super Pod handler ran: the informer's queue and the handler's backlog), both 0 when the Add came first. Tells whose apiserver a tenant's Pods wait for.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12), // 1ms .. ~24s
	}, []string{"tenant", "call"})
	tokenPrefetches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "pod", Name: "token_prefetches_total",
		Help: "Rounds of TokenRequests for a new tenant Pod's service-account tokens that the syncer started when the tenant informer delivered the Pod, before a downward worker took it, by tenant and result: taken (the Pod's reconcile used the tokens instead of waiting for the tenant apiserver), failed (a TokenRequest failed; the reconcile requests its own), unused (dropped: older than 2 minutes, the Pod deleted or the tenant stopped), full (not started: the tenant had 1024 Pods waiting for a round). Per tenant at most 2 Pods per unit of its weight (up to 8) are in flight, 64 over all tenants (a Pod that finds none free gets its tokens from its reconcile), and 16 rounds held; only Pods the tenant policy allows and that fit in its budget and quota when they arrive.",
	}, []string{"tenant", "result"})
	syncRejected = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "sync", Name: "rejected_total",
		Help: "Downward reconciles whose super-cluster write was refused for a reason a retry does not change (invalid object, or denied by Pod Security admission, a ValidatingAdmissionPolicy or a webhook), by tenant and kind. Such a request is not retried on a timer: the object's next change, a policy change or a remediation scan brings it back.",
	}, []string{"tenant", "kind"})
	syncRetries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "sync", Name: "retries_total",
		Help: "Reconciles that failed and were re-queued with backoff, by tenant, kind, direction and reason (a fixed set derived from the error: Conflict, NotFound, AlreadyExists, Forbidden, Quota, Unauthorized, Invalid, TooManyRequests, Timeout, Unavailable, SuperCacheBehind, TenantCacheBehind, BoundsPending, NotOwned, Panic, Other).",
	}, []string{"tenant", "kind", "direction", "reason"})
	buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "build_info",
		Help: "Always 1; the labels name the running build: version (pkg/version.Version), revision (git commit) and goversion.",
	}, []string{"version", "revision", "goversion"})
	tenantConnectedDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "tenant", "connected"),
		"1 when the last probe of the tenant's apiserver succeeded, 0 otherwise, by tenant (every registered Tenant).", []string{"tenant"}, nil)
	tenantSyncedDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "tenant", "synced"),
		"1 once the tenant's informer caches have synced and its events are being synced, 0 otherwise, by tenant.", []string{"tenant"}, nil)
	tenantCachedBytesDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "tenant", "cached_bytes"),
		"Bytes of the tenant's objects the syncer holds in its caches (every synced kind) (bounded by the TenantPolicy's limits.maxCachedBytes), by tenant.", []string{"tenant"}, nil)
	tenantHeldOutDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "tenant", "held_out_objects"),
		"The tenant's objects the syncer keeps out of its caches and does not sync (over limits.maxObjectBytes or limits.maxCachedBytes), by tenant; above 0 the tenant has reached its bound.", []string{"tenant"}, nil)
	tenantCachedObjectsDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "tenant", "cached_objects"),
		"The tenant's objects in the syncer's caches, held in full or as stubs (bounded by the TenantPolicy's limits.maxCachedObjects), by tenant.", []string{"tenant"}, nil)
	tenantSuspendedDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "tenant", "suspended"),
		"1 while the tenant's sync is suspended because it has more objects than limits.maxCachedObjects (the syncer does not watch it and counts again with backoff), 0 otherwise, by tenant.", []string{"tenant"}, nil)
)

func syncCollectors() []prometheus.Collector {
	return []prometheus.Collector{syncDuration, syncLag, syncRejected, syncRetries, podPhase, podCreation, podHeld, podCalls, tokenPrefetches, buildInfo, tenantCollector, hotCollector, tenantLagWrites}
}

// The API calls of a new Pod's downward reconcile (label values of "call" of
// vcsyncer_pod_creation_call_duration_seconds).
const (
	CallTokenRequest = "token_request"
	CallSuperCreate  = "super_create"
	// CallSuperWatch is the wait after the super create's answer until the syncer's super
	// informer received the new super Pod (the super apiserver's watch delivery, the
	// connection, the decoding).
	CallSuperWatch = "super_watch"
	// CallSuperInformer is the wait from then until the syncer's super Pod handler ran (the
	// informer's queue and cache update, the handler's backlog); it ends downward_process.
	CallSuperInformer = "super_informer"
)

// PodCreationCall records that call (CallTokenRequest, CallSuperCreate, CallSuperWatch,
// CallSuperInformer) of the downward reconcile creating a super Pod of tenant took d.
func PodCreationCall(tenant, call string, d time.Duration) {
	podCalls.WithLabelValues(tenant, call).Observe(d.Seconds())
}

// PodCreationCalls returns how many observations tenant's call has in
// vcsyncer_pod_creation_call_duration_seconds (for tests).
func PodCreationCalls(tenant, call string) uint64 {
	var m dto.Metric
	h, ok := podCalls.WithLabelValues(tenant, call).(prometheus.Histogram)
	if !ok || h.Write(&m) != nil {
		return 0
	}
	return m.GetHistogram().GetSampleCount()
}

// TokenPrefetch counts one round of tenant's prefetched TokenRequests by result (taken,
// failed, unused, full).
func TokenPrefetch(tenant, result string) { tokenPrefetches.WithLabelValues(tenant, result).Inc() }

// TokenPrefetches returns the count of tenant's prefetched rounds with result (for tests).
func TokenPrefetches(tenant, result string) float64 {
	return counterValue(tokenPrefetches.WithLabelValues(tenant, result))
}

// SyncRejected counts one downward reconcile of kind for tenant that the super cluster refused
// for good (resources.ErrRejected) and that is not retried on a timer.
func SyncRejected(tenant, kind string) { syncRejected.WithLabelValues(tenant, kind).Inc() }

// SyncRetry counts one failed reconcile of kind for tenant in direction that is retried with
// backoff; reason is one of pkg/syncer's fixed retry reasons.
func SyncRetry(tenant, kind, direction, reason string) {
	syncRetries.WithLabelValues(tenant, kind, direction, reason).Inc()
}

// SyncRetriesVec returns vcsyncer_sync_retries_total (for tests).
func SyncRetriesVec() *prometheus.CounterVec { return syncRetries }

// SyncDone records one reconcile of kind for tenant in direction that took d and ended with
// err (nil: ResultSuccess, else ResultError).
func SyncDone(tenant, kind, direction string, d time.Duration, err error) {
	result := ResultSuccess
	if err != nil {
		result = ResultError
	}
	syncDuration.WithLabelValues(tenant, kind, direction, result).Observe(d.Seconds())
}

// SyncLag records the end-to-end lag of one change of kind for tenant in direction (see
// vcsyncer_sync_lag_seconds and pkg/syncer's lag tracker for where the clock starts).
func SyncLag(tenant, kind, direction string, d time.Duration) {
	syncLag.WithLabelValues(tenant, kind, direction).Observe(d.Seconds())
}

// PodPhase records the time one new tenant Pod of tenant spent in phase (one of Phases).
// Negative durations (clock steps) are recorded as 0.
func PodPhase(tenant, phase string, d time.Duration) {
	podPhase.WithLabelValues(tenant, phase).Observe(max(d, 0).Seconds())
}

// PodCreated records the whole creation time of one new tenant Pod of tenant (all phases).
func PodCreated(tenant string, d time.Duration) {
	podCreation.WithLabelValues(tenant).Observe(max(d, 0).Seconds())
}

// PodHeld records the time one new tenant Pod of tenant spent inside the syncer (its creation
// less the super cluster's scheduling). Negative durations (clock steps) are recorded as 0.
func PodHeld(tenant string, d time.Duration) {
	podHeld.WithLabelValues(tenant).Observe(max(d, 0).Seconds())
}

// TenantHealth is one registered tenant's health as the metrics report it.
type TenantHealth struct {
	Connected, Synced bool
	// CachedBytes and HeldOut are the bytes of its objects (every synced kind) the syncer holds and
	// the number of them it keeps out (tenant.HeldBytes).
	CachedBytes int64
	HeldOut     int
	// CachedObjects is the number of its objects in the syncer's caches (tenant.HeldBytes
	// entries); Suspended is true while it has more than limits.maxCachedObjects.
	CachedObjects int
	Suspended     bool
}

// TenantHealthStats returns every registered tenant's health, by tenant name. Tenants it does
// not return have no vcsyncer_tenant_* series (so a removed tenant's series disappear).
type TenantHealthStats func() map[string]TenantHealth

var healthSource scrapeSource[TenantHealthStats]

// RegisterTenantHealth sets the source of vcsyncer_tenant_connected, vcsyncer_tenant_synced,
// vcsyncer_tenant_cached_bytes, vcsyncer_tenant_held_out_objects,
// vcsyncer_tenant_cached_objects and vcsyncer_tenant_suspended,
// computed at scrape time (the last call wins).
func RegisterTenantHealth(src TenantHealthStats) {
	Register()
	healthSource.Set(src)
}

var tenantCollector = scrapeCollector[TenantHealthStats]{
	descs: []*prometheus.Desc{tenantConnectedDesc, tenantSyncedDesc, tenantCachedBytesDesc, tenantHeldOutDesc, tenantCachedObjectsDesc, tenantSuspendedDesc},
	src:   &healthSource,
	collect: func(src TenantHealthStats, ch chan<- prometheus.Metric) {
		for t, h := range src() {
			ch <- gauge(tenantConnectedDesc, b2f(h.Connected), t)
			ch <- gauge(tenantSyncedDesc, b2f(h.Synced), t)
			ch <- gauge(tenantCachedBytesDesc, float64(h.CachedBytes), t)
			ch <- gauge(tenantHeldOutDesc, float64(h.HeldOut), t)
			ch <- gauge(tenantCachedObjectsDesc, float64(h.CachedObjects), t)
			ch <- gauge(tenantSuspendedDesc, b2f(h.Suspended), t)
		}
	},
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// setBuildInfo sets vcsyncer_build_info to 1 for this binary. The revision is
// version.GitCommit (set by -ldflags), else the VCS revision Go stamped into the binary, else
// "unknown".
func setBuildInfo() {
	rev := version.GitCommit
	if rev == "" || rev == "unknown" {
		rev = "unknown"
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" && s.Value != "" {
					rev = s.Value
				}
			}
		}
	}
	buildInfo.Reset()
	buildInfo.WithLabelValues(version.Version, rev, runtime.Version()).Set(1)
}

func forgetSync(l prometheus.Labels) {
	syncDuration.DeletePartialMatch(l)
	syncLag.DeletePartialMatch(l)
	syncRejected.DeletePartialMatch(l)
	syncRetries.DeletePartialMatch(l)
	tenantLagWrites.DeletePartialMatch(l)
	podPhase.DeletePartialMatch(l)
	podCreation.DeletePartialMatch(l)
	podHeld.DeletePartialMatch(l)
	podCalls.DeletePartialMatch(l)
	tokenPrefetches.DeletePartialMatch(l)
}

// registerSyncMetrics registers this file's collectors in controller-runtime's registry.
func registerSyncMetrics() {
	setBuildInfo()
	ctrlmetrics.Registry.MustRegister(syncCollectors()...)
}

// allCollectors returns every vc-syncer collector (each scrape-time collector with the source
// currently registered, possibly none).
func allCollectors() []prometheus.Collector {
	cs := []prometheus.Collector{queueAdds, queueRetries, queueWait, queueStatsCollector, vnodeCollector}
	cs = append(cs, remediationCollectors()...)
	cs = append(cs, policyCollectors()...)
	cs = append(cs, eventCollectors()...)
	cs = append(cs, admissionCollectors()...)
	cs = append(cs, kubeletCollectors()...)
	return append(cs, syncCollectors()...)
}

var fqNameRE = regexp.MustCompile(`fqName: "([^"]+)"`)

// Names returns the names of every metric family pkg/metrics defines (histograms without their
// _bucket/_sum/_count suffixes), sorted. The dashboard's tests check its queries against it.
func Names() []string {
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		for _, c := range allCollectors() {
			c.Describe(ch)
		}
		close(ch)
	}()
	var names []string
	for d := range ch {
		// prometheus.Desc has no name accessor; its String form is stable: Desc{fqName: "...", ...}.
		if m := fqNameRE.FindStringSubmatch(d.String()); m != nil {
			names = append(names, m[1])
		}
	}
	sort.Strings(names)
	return names
}
