package metrics

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
)

// boundedLabels are the only label names a vc-syncer metric may carry: each has one value per
// registered Tenant, synced kind, direction, result, phase, reason, policy rule, Event type,
// API call or build.
var boundedLabels = map[string]bool{
	"tenant": true, "kind": true, "direction": true, "result": true, "phase": true,
	"reason": true, "rule": true, "type": true, "version": true, "revision": true, "goversion": true,
	"endpoint": true, // the kubelet API's four endpoints, or "other"
	"call":     true, // the two API calls of a new Pod's downward reconcile
}

// populate gives every vector at least one series, so the linter sees every family.
func populate(tenant string) {
	QueueAdd(tenant, Downward)
	QueueRetry(tenant, Upward)
	QueueWait(tenant, Downward, time.Millisecond)
	RemediationMismatch(tenant, "Pod", "status_differs")
	RemediationFix(tenant, "Pod", "status_differs")
	RemediationSkip(tenant, "tenant_not_synced")
	RemediationScan(time.Millisecond)
	SyncDone(tenant, "Pod", Downward, time.Millisecond, nil)
	SyncDone(tenant, "Pod", Downward, time.Millisecond, errors.New("refused"))
	SyncLag(tenant, "Pod", Upward, time.Second)
	SyncRejected(tenant, "Pod")
	SyncRetry(tenant, "Pod", Upward, "Conflict")
	TenantLagWrite(tenant)
	for _, p := range Phases {
		PodPhase(tenant, p, time.Millisecond)
	}
	PodCreated(tenant, time.Second)
	PodHeld(tenant, time.Millisecond)
	PodCreationCall(tenant, CallSuperCreate, time.Millisecond)
	TokenPrefetch(tenant, "taken")
	PolicyDenied(tenant, "Pod", "volumeType")
	AdmissionAdmitted(tenant, time.Second)
	EventQueued(tenant, "Warning")
	EventDropped(tenant, "Normal", "queueFull")
	KubeletRequest(tenant, "exec", "forwarded")
	KubeletUnauthenticated("no_certificate")
	KubeletOpenStreams(tenant, 1)
	KubeletStreamRevoked("tenant_removed")
	KubeletBytes(tenant, "exec", KubeletToTenant)(1)
}

func TestMetricsPassPromlint(t *testing.T) {
	deniedBefore := PolicyDenials("lint", "Pod", "volumeType")
	populate("lint")
	defer ForgetTenant("lint")
	statsSource.Set(func() ([]string, map[string]map[string]QueueStat) {
		return []string{"lint"}, map[string]map[string]QueueStat{Downward: {"lint": {Depth: 1, Oldest: time.Second}}}
	})
	healthSource.Set(func() map[string]TenantHealth { return map[string]TenantHealth{"lint": {Connected: true}} })
	vnodeSource.Set(func() map[string]int { return map[string]int{"lint": 2} })
	hotSource.Set(func() []HotCount {
		return []HotCount{{Tenant: "lint", Kind: "Pod", Direction: Upward, Reason: "Conflict", Requests: 2, LongBackoff: 1}}
	})
	admissionSrc.Set(func() (int, map[string]int, map[string]int) {
		return 8, map[string]int{"lint": 3}, map[string]int{"lint": 8}
	})
	eventStatsSrc.Set(func() map[string]int { return map[string]int{"lint": 4} })
	setBuildInfo()

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(allCollectors()...)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var gathered []string
	for _, mf := range mfs {
		gathered = append(gathered, mf.GetName())
		if !strings.HasPrefix(mf.GetName(), Namespace+"_") {
			t.Errorf("%s: not in namespace %s", mf.GetName(), Namespace)
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if !boundedLabels[l.GetName()] {
					t.Errorf("%s: label %q is not one of the bounded labels", mf.GetName(), l.GetName())
				}
			}
		}
	}
	if got := PolicyDenials("lint", "Pod", "volumeType") - deniedBefore; got != 1 {
		t.Errorf("PolicyDenials rose by %v, want 1", got)
	}
	if names := Names(); !slices.Equal(names, gathered) {
		t.Errorf("Names() = %v\nbut the populated registry gathers %v", names, gathered)
	}
}

// TestPromlintCatchesBadNames keeps the lint test honest: the same linter flags a badly named
// counter.
func TestPromlintCatchesBadNames(t *testing.T) {
	bad := prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "syncs", Help: "x"})
	bad.Inc()
	problems, err := testutil.CollectAndLint(bad)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) == 0 {
		t.Fatal("promlint found no problem in a counter without _total")
	}
	_ = promlint.Problem{}
}

func TestForgetTenantDeletesSyncSeries(t *testing.T) {
	populate("keep")
	populate("gone")
	defer ForgetTenant("keep")
	cs := []prometheus.Collector{syncDuration, syncLag, podPhase, podCreation, podHeld}
	if got := series(t, cs...); got["gone"] != 2+1+len(Phases)+1+1 || got["keep"] != got["gone"] {
		t.Fatalf("series before = %v", got)
	}
	ForgetTenant("gone")
	if got := series(t, cs...); got["gone"] != 0 || got["keep"] == 0 {
		t.Errorf("series after ForgetTenant(gone) = %v, want only keep's", got)
	}
}

func TestSyncDoneResultLabel(t *testing.T) {
	defer ForgetTenant("res")
	samples := func(result string) uint64 {
		h := &dto.Metric{}
		if err := syncDuration.WithLabelValues("res", "ConfigMap", Upward, result).(prometheus.Histogram).Write(h); err != nil {
			t.Fatal(err)
		}
		return h.GetHistogram().GetSampleCount()
	}
	before := map[string]uint64{ResultSuccess: samples(ResultSuccess), ResultError: samples(ResultError)}
	SyncDone("res", "ConfigMap", Upward, 2*time.Millisecond, nil)
	SyncDone("res", "ConfigMap", Upward, 3*time.Millisecond, errors.New("conflict"))
	SyncDone("res", "ConfigMap", Upward, 3*time.Millisecond, errors.New("conflict"))
	for result, want := range map[string]uint64{ResultSuccess: 1, ResultError: 2} {
		if got := samples(result) - before[result]; got != want {
			t.Errorf("result=%s: %d new samples, want %d", result, got, want)
		}
	}
}

func TestBuildInfo(t *testing.T) {
	setBuildInfo()
	mfs := gather(t, buildInfo)
	if len(mfs) != 1 || len(mfs[0].GetMetric()) != 1 {
		t.Fatalf("build_info families = %v, want one series", mfs)
	}
	m := mfs[0].GetMetric()[0]
	if m.GetGauge().GetValue() != 1 {
		t.Errorf("build_info = %v, want 1", m.GetGauge().GetValue())
	}
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["version"] == "" || labels["revision"] == "" || !strings.HasPrefix(labels["goversion"], "go") {
		t.Errorf("build_info labels = %v", labels)
	}
}

func TestTenantHealthFollowsSource(t *testing.T) {
	healthSource.Set(func() map[string]TenantHealth {
		return map[string]TenantHealth{"up": {Connected: true, Synced: true, CachedBytes: 1234, HeldOut: 2, CachedObjects: 7}, "down": {Suspended: true}}
	})
	values := map[string]float64{}
	for _, mf := range gather(t, tenantCollector) {
		for _, m := range mf.GetMetric() {
			values[mf.GetName()+"/"+m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	want := map[string]float64{
		"vcsyncer_tenant_cached_objects/up": 7, "vcsyncer_tenant_cached_objects/down": 0,
		"vcsyncer_tenant_suspended/up": 0, "vcsyncer_tenant_suspended/down": 1,
		"vcsyncer_tenant_connected/up": 1, "vcsyncer_tenant_synced/up": 1,
		"vcsyncer_tenant_connected/down": 0, "vcsyncer_tenant_synced/down": 0,
		"vcsyncer_tenant_cached_bytes/up": 1234, "vcsyncer_tenant_held_out_objects/up": 2,
		"vcsyncer_tenant_cached_bytes/down": 0, "vcsyncer_tenant_held_out_objects/down": 0,
	}
	for k, v := range want {
		if got, ok := values[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if len(values) != len(want) {
		t.Errorf("series = %v, want exactly %v", values, want)
	}
}

func gather(t *testing.T, cs ...prometheus.Collector) []*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(cs...)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}
