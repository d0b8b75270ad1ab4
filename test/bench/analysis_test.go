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
