package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBucketQuantile(t *testing.T) {
	// 10 observations in (0, 1], 10 in (1, 2], none above.
	b := map[float64]float64{1: 10, 2: 20, 4: 20, math.Inf(1): 20}
	for q, want := range map[float64]float64{0.25: 0.5, 0.5: 1, 0.75: 1.5, 1: 2} {
		if got := bucketQuantile(q, b, 20); math.Abs(got-want) > 1e-9 {
			t.Errorf("q%.2f = %v, want %v", q, got, want)
		}
	}
}

func TestSyncerPhaseStats(t *testing.T) {
	text := `# TYPE vcsyncer_pod_creation_phase_duration_seconds histogram
vcsyncer_pod_creation_phase_duration_seconds_bucket{phase="downward_queue",tenant="a",le="1"} 2
vcsyncer_pod_creation_phase_duration_seconds_bucket{phase="downward_queue",tenant="a",le="+Inf"} 2
vcsyncer_pod_creation_phase_duration_seconds_sum{phase="downward_queue",tenant="a"} 1
vcsyncer_pod_creation_phase_duration_seconds_count{phase="downward_queue",tenant="a"} 2
vcsyncer_pod_creation_phase_duration_seconds_bucket{phase="downward_queue",tenant="b",le="1"} 0
vcsyncer_pod_creation_phase_duration_seconds_bucket{phase="downward_queue",tenant="b",le="+Inf"} 2
vcsyncer_pod_creation_phase_duration_seconds_sum{phase="downward_queue",tenant="b"} 7
vcsyncer_pod_creation_phase_duration_seconds_count{phase="downward_queue",tenant="b"} 2
`
	path := filepath.Join(t.TempDir(), "metrics.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := syncerPhaseStats(path)
	if err != nil {
		t.Fatal(err)
	}
	q := got["downward_queue"]
	if q.Count != 4 || q.Mean != 2 || q.P50 != 1 || q.P99 != 1 {
		t.Errorf("downward_queue = %+v, want 4 observations over both tenants, mean 2 s, p50 1 s, p99 at the largest bound", q)
	}
}

func TestBottleneck(t *testing.T) {
	cpu := busiest(map[string]float64{"super/kube-apiserver": 18, "vc-syncer": 2}, 10)
	if cpu[0].Process != "super/kube-apiserver" || cpu[0].Cores != 1.8 {
		t.Fatalf("busiest = %+v", cpu)
	}
	if got := bottleneck(cpu, 10, 2, nil); !strings.HasPrefix(got, "the machine's CPU") {
		t.Errorf("2.0 of 2 cores: %q", got)
	}
	if got := bottleneck(cpu, 10, 4, nil); !strings.Contains(got, "CPU of super/kube-apiserver") {
		t.Errorf("1.8 cores of 4, most in one process: %q", got)
	}
	idle := busiest(map[string]float64{"vc-syncer": 1}, 10)
	if got := bottleneck(idle, 10, 8, map[string]phaseStats{"downward_queue": {P50: 3}, "super_scheduling": {P50: 1}}); !strings.Contains(got, "downward_queue") {
		t.Errorf("an idle machine: %q, want the longest phase named", got)
	}
}

// TestRequestKindsPerPod: apiserver_request_total is summed by verb and resource (subresource
// apart), 429s of every kind are counted once more under "429", and requestsPerPod divides the
// increase by the Pods, leaving out what did not change.
func TestRequestKindsPerPod(t *testing.T) {
	before := requestKinds(parseMetrics(`apiserver_request_total{code="201",resource="pods",subresource="",verb="POST"} 10
apiserver_request_total{code="201",resource="pods",subresource="binding",verb="POST"} 4
apiserver_request_total{code="200",resource="nodes",subresource="",verb="GET"} 7
`))
	after := requestKinds(parseMetrics(`apiserver_request_total{code="201",resource="pods",subresource="",verb="POST"} 30
apiserver_request_total{code="429",resource="pods",subresource="",verb="POST"} 2
apiserver_request_total{code="201",resource="pods",subresource="binding",verb="POST"} 14
apiserver_request_total{code="200",resource="nodes",subresource="",verb="GET"} 7
rest_client_requests_total{code="200",host="x",method="GET"} 99
`))
	got := requestsPerPod(before, after, 10)
	want := map[string]float64{"POST pods": 2.2, "POST pods/binding": 1, "429": 0.2}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if math.Abs(got[k]-v) > 1e-9 {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if n := len(requestsPerPod(before, after, 0)); n != 0 {
		t.Errorf("no Pods: %d keys, want none", n)
	}
}

// TestThroughputCeiling: 2 cores at 40 ms of CPU per Pod allow 50 Pods/s; the CPU per Pod
// sums every process.
func TestThroughputCeiling(t *testing.T) {
	if got := throughputCeiling(40, 2); got != 50 {
		t.Errorf("ceiling = %v, want 50", got)
	}
	if got := cpuPerPodMillis(map[string]float64{"super/kube-apiserver": 3, "vc-syncer": 1}, 200); got != 20 {
		t.Errorf("CPU per Pod = %v ms, want 20", got)
	}
	if throughputCeiling(0, 2) != 0 || cpuPerPodMillis(map[string]float64{"a": 1}, 0) != 0 {
		t.Error("no cost or no Pods must give 0")
	}
}
