package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCostPerPod(t *testing.T) {
	base := map[string]float64{"super/kube-apiserver": 4, "super/etcd": 1, "super/kwok": 1, "tenant-1/kube-apiserver": 0.1}
	synced := map[string]float64{"super/kube-apiserver": 6, "super/etcd": 1, "super/kwok": 2,
		"tenant-1/kube-apiserver": 3, "tenant-2/kube-apiserver": 1, "tenant-1/etcd": 0.5, "vc-syncer": 2}
	got := costPerPod(base, synced, 400, 200)
	want := perPodCost{
		// super/*: 6 s over 400 Pods straight, 9 s over 200 through the syncer (the syncer's 2 s not in it).
		SuperCPUPerPodRatio:                  (9.0 / 200) / (6.0 / 400),
		SuperCPUSecondsPerPod:                map[string]float64{"baseline": 6.0 / 400, "syncer": 9.0 / 200},
		SyncerCPUSecondsPerPod:               2.0 / 200,
		TenantAPIServerCPUSecondsPerPod:      4.0 / 200, // both tenants' apiservers, not their etcd
		SuperAPIServerCPUSecondsPerPod:       6.0 / 200,
		SuperAPIServerCPUSecondsPerPodDirect: 4.0 / 400,
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if !near(got.SuperCPUPerPodRatio, want.SuperCPUPerPodRatio) || !near(got.SyncerCPUSecondsPerPod, want.SyncerCPUSecondsPerPod) ||
		!near(got.TenantAPIServerCPUSecondsPerPod, want.TenantAPIServerCPUSecondsPerPod) ||
		!near(got.SuperAPIServerCPUSecondsPerPod, want.SuperAPIServerCPUSecondsPerPod) ||
		!near(got.SuperAPIServerCPUSecondsPerPodDirect, want.SuperAPIServerCPUSecondsPerPodDirect) ||
		!near(got.SuperCPUSecondsPerPod["baseline"], want.SuperCPUSecondsPerPod["baseline"]) ||
		!near(got.SuperCPUSecondsPerPod["syncer"], want.SuperCPUSecondsPerPod["syncer"]) {
		t.Errorf("costPerPod = %+v, want %+v", got, want)
	}
	if z := costPerPod(base, synced, 0, 0); z.SuperCPUPerPodRatio != 0 || z.SyncerCPUSecondsPerPod != 0 {
		t.Errorf("no Pods: %+v, want zeros", z)
	}
}

// The key names are a contract (issue 36): other tools read them from result.json.
func TestResultCostKeys(t *testing.T) {
	j, err := json.Marshal(result{HeldRun: &heldRun{}})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"superCPUPerPodRatio", "syncerCPUSecondsPerPod", "tenantAPIServerCPUSecondsPerPod",
		"superAPIServerCPUSecondsPerPodDirect", "syncerHeldSecondsP99", "throughputCeilingRatio", "p99Ratio", "throughputRatio",
		"superRequestsPerPod", "tenantRequestsPerPod", "tenantRequestsPerPodByTenant", "bytesStoredPerSuperPod", "heldRun",
		"syncerAllocBytesPerPod", "syncerGCCyclesPerPod"} {
		if _, ok := m[k]; !ok {
			t.Errorf("result.json has no key %q", k)
		}
	}
}

func TestHeldStats(t *testing.T) {
	before := parseMetrics(`vcsyncer_pod_creation_syncer_held_seconds_bucket{tenant="a",le="0.01"} 5
vcsyncer_pod_creation_syncer_held_seconds_bucket{tenant="a",le="0.1"} 5
vcsyncer_pod_creation_syncer_held_seconds_bucket{tenant="a",le="+Inf"} 5
vcsyncer_pod_creation_syncer_held_seconds_sum{tenant="a"} 100
vcsyncer_pod_creation_syncer_held_seconds_count{tenant="a"} 5
`)
	// Between the scrapes: tenant a 10 Pods in (0, 10 ms], tenant b (new) 10 in (10, 100 ms].
	after := parseMetrics(`vcsyncer_pod_creation_syncer_held_seconds_bucket{tenant="a",le="0.01"} 15
vcsyncer_pod_creation_syncer_held_seconds_bucket{tenant="a",le="0.1"} 15
vcsyncer_pod_creation_syncer_held_seconds_bucket{tenant="a",le="+Inf"} 15
vcsyncer_pod_creation_syncer_held_seconds_sum{tenant="a"} 100.05
vcsyncer_pod_creation_syncer_held_seconds_count{tenant="a"} 15
vcsyncer_pod_creation_syncer_held_seconds_bucket{tenant="b",le="0.01"} 0
vcsyncer_pod_creation_syncer_held_seconds_bucket{tenant="b",le="0.1"} 10
vcsyncer_pod_creation_syncer_held_seconds_bucket{tenant="b",le="+Inf"} 10
vcsyncer_pod_creation_syncer_held_seconds_sum{tenant="b"} 0.55
vcsyncer_pod_creation_syncer_held_seconds_count{tenant="b"} 10
vcsyncer_pod_creation_duration_seconds_count{tenant="b"} 99
`)
	got := heldStats(before, after)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if got.Count != 20 || !near(got.Mean, 0.6/20) || !near(got.P50, 0.01) || !near(got.P99, 0.01+0.09*(19.8-10)/10) {
		t.Errorf("heldStats = %+v, want 20 Pods, mean 30 ms, p50 at 10 ms, p99 inside (10, 100 ms]", got)
	}
	if z := heldStats(after, after); z.Count != 0 || z.P99 != 0 {
		t.Errorf("no new observations: %+v", z)
	}
	// One tenant's: tenant b's 10 Pods only, all in (10, 100 ms].
	if b := heldStats(before, after, "b"); b.Count != 10 || !near(b.Mean, 0.055) || b.P50 <= 0.01 || b.P99 > 0.1 {
		t.Errorf("heldStats of tenant b = %+v, want its 10 Pods, mean 55 ms, p50 and p99 inside (10, 100 ms]", b)
	}
	if a := heldStats(before, after, "a", "c"); a.Count != 10 || !near(a.Mean, 0.005) {
		t.Errorf("heldStats of tenants a and c = %+v, want tenant a's 10 Pods, mean 5 ms", a)
	}
}

func TestHeldPodsPerTenant(t *testing.T) {
	cases := map[string]struct{ want, nodes, tenants, pods, wantGot int }{
		"room":     {100, 10, 2, 200, 100},
		"crowded":  {100, 10, 4, 250, 1},
		"tight":    {100, 10, 4, 200, 25},
		"none set": {100, 10, 0, 200, 0},
	}
	for name, tc := range cases {
		if got := heldPodsPerTenant(tc.want, tc.nodes, tc.tenants, tc.pods); got != tc.wantGot {
			t.Errorf("%s: %d, want %d", name, got, tc.wantGot)
		}
	}
}

func TestStoredBytesPerPod(t *testing.T) {
	small := corev1.Pod{}
	small.Name = "a"
	big := corev1.Pod{}
	big.Name = "a"
	big.Annotations = map[string]string{"token": string(make([]byte, 1000))}
	got := storedBytesPerPod([]corev1.Pod{small, big})
	if want := float64(small.Size()+big.Size()) / 2; got != want || big.Size()-small.Size() < 1000 {
		t.Errorf("storedBytesPerPod = %v, want %v (the annotation's 1000 bytes counted)", got, want)
	}
	if storedBytesPerPod(nil) != 0 {
		t.Error("no Pods: want 0")
	}
}

func TestBytesByPart(t *testing.T) {
	p := corev1.Pod{}
	p.Name = "a"
	p.Annotations = map[string]string{"k": string(make([]byte, 100)), "tenancy.vcsyncer.io/sa-token.0": "jwt"}
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "vc-syncer", Operation: metav1.ManagedFieldsOperationUpdate}}
	p.Spec.NodeName = "n"
	got := bytesByPart([]corev1.Pod{p, p})
	ann := 107 + len("tenancy.vcsyncer.io/sa-token.0") + 3 + 6
	mf := p.ManagedFields[0].Size() + 2
	if got["metadata.annotations"] != float64(ann) || got["spec"] != float64(p.Spec.Size()) || got["metadata (other)"] != float64(p.ObjectMeta.Size()-ann-mf) {
		t.Errorf("bytesByPart = %v", got)
	}
	if got["metadata.annotations: other"] != 107 || got["metadata.annotations: tenant tokens"] != float64(ann-107) ||
		got["metadata.managedFields: vc-syncer Update"] != float64(mf) {
		t.Errorf("bytesByPart details = %v, want 107 other, %d tenant tokens, %d for vc-syncer's Update", got, ann-107, mf)
	}
	if bytesByPart(nil) != nil {
		t.Error("no Pods: want nil")
	}
}

func TestSyncerGoStats(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "# TYPE go_gc_duration_seconds summary\ngo_gc_duration_seconds{quantile=\"0.5\"} 0.0001\n"+
			"go_gc_duration_seconds_sum 0.01\ngo_gc_duration_seconds_count 23\n"+
			"# TYPE go_memstats_alloc_bytes_total counter\ngo_memstats_alloc_bytes_total 2.08273488e+08\n")
	}))
	defer srv.Close()
	g := syncerGoStats(context.Background(), strings.TrimPrefix(srv.URL, "http://"))
	if !g.ok || g.allocBytes != 2.08273488e+08 || g.gcCycles != 23 {
		t.Errorf("syncerGoStats = %+v; want 208273488 bytes, 23 cycles, ok", g)
	}
	empty := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer empty.Close()
	if g := syncerGoStats(context.Background(), strings.TrimPrefix(empty.URL, "http://")); g.ok {
		t.Errorf("syncerGoStats of a /metrics without the Go collector = %+v; want not ok", g)
	}
}

func TestHeldBreakdown(t *testing.T) {
	before := parseMetrics(`vcsyncer_pod_creation_phase_duration_seconds_bucket{tenant="a",phase="downward_process",le="0.01"} 4
vcsyncer_pod_creation_phase_duration_seconds_bucket{tenant="a",phase="downward_process",le="+Inf"} 4
vcsyncer_pod_creation_phase_duration_seconds_sum{tenant="a",phase="downward_process"} 0.02
vcsyncer_pod_creation_phase_duration_seconds_count{tenant="a",phase="downward_process"} 4
`)
	// Between the scrapes: 10 downward_process of tenants a and b (6 over 10 ms), 5
	// upward_queue, 10 super_create calls; downward_queue was not observed.
	after := parseMetrics(`vcsyncer_pod_creation_phase_duration_seconds_bucket{tenant="a",phase="downward_process",le="0.01"} 6
vcsyncer_pod_creation_phase_duration_seconds_bucket{tenant="a",phase="downward_process",le="+Inf"} 9
vcsyncer_pod_creation_phase_duration_seconds_sum{tenant="a",phase="downward_process"} 0.12
vcsyncer_pod_creation_phase_duration_seconds_count{tenant="a",phase="downward_process"} 9
vcsyncer_pod_creation_phase_duration_seconds_bucket{tenant="b",phase="downward_process",le="0.01"} 2
vcsyncer_pod_creation_phase_duration_seconds_bucket{tenant="b",phase="downward_process",le="+Inf"} 5
vcsyncer_pod_creation_phase_duration_seconds_sum{tenant="b",phase="downward_process"} 0.1
vcsyncer_pod_creation_phase_duration_seconds_count{tenant="b",phase="downward_process"} 5
vcsyncer_pod_creation_phase_duration_seconds_bucket{tenant="a",phase="upward_queue",le="0.01"} 5
vcsyncer_pod_creation_phase_duration_seconds_bucket{tenant="a",phase="upward_queue",le="+Inf"} 5
vcsyncer_pod_creation_phase_duration_seconds_sum{tenant="a",phase="upward_queue"} 0.005
vcsyncer_pod_creation_phase_duration_seconds_count{tenant="a",phase="upward_queue"} 5
vcsyncer_pod_creation_call_duration_seconds_bucket{tenant="a",call="super_create",le="0.01"} 10
vcsyncer_pod_creation_call_duration_seconds_bucket{tenant="a",call="super_create",le="+Inf"} 10
vcsyncer_pod_creation_call_duration_seconds_sum{tenant="a",call="super_create"} 0.05
vcsyncer_pod_creation_call_duration_seconds_count{tenant="a",call="super_create"} 10
`)
	phases, calls := heldBreakdown(before, after)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if dp := phases["downward_process"]; dp.Count != 10 || !near(dp.Mean, 0.02) || !near(dp.P50, 0.01) || dp.P99 != 0.01 {
		// Six of ten over the last finite bound: bucketQuantile answers that bound.
		t.Errorf("downward_process = %+v, want 10 observations (both tenants), mean 20 ms, p50 and p99 at the 10 ms bound", dp)
	}
	if uq := phases["upward_queue"]; uq.Count != 5 || !near(uq.Mean, 0.001) {
		t.Errorf("upward_queue = %+v, want 5 observations, mean 1 ms", uq)
	}
	if _, ok := phases["downward_queue"]; ok || len(phases) != 2 {
		t.Errorf("phases %v, want only the two observed", phases)
	}
	if sc := calls["super_create"]; sc.Count != 10 || !near(sc.Mean, 0.005) || len(calls) != 1 {
		t.Errorf("calls %v, want super_create alone: 10 calls, mean 5 ms", calls)
	}
}

func TestCallStats(t *testing.T) {
	var s []sample
	for i := 1; i <= 100; i++ {
		s = append(s, sample{call: time.Duration(i) * time.Millisecond})
	}
	st := callStats(s)
	if st.Count != 100 || math.Abs(st.Mean-0.0505) > 1e-9 || st.P50 < 0.050 || st.P50 > 0.051 || st.P99 < 0.099 || st.P99 > 0.100 {
		t.Errorf("callStats of 1..100 ms = %+v, want 100 calls, mean 50.5 ms, p50 near 50 ms, p99 near 99 ms", st)
	}
	if z := callStats(nil); z != (phaseStats{}) {
		t.Errorf("callStats(nil) = %+v, want zero", z)
	}
}
