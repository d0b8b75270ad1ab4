package chaos

import (
	"strings"
	"testing"
)

func level() Resources {
	return Resources{
		{Replica: "shard-0", PID: 10, Goroutines: 700, HeapBytes: 20 << 20},
		{Replica: "shard-1", PID: 11, Goroutines: 740, HeapBytes: 14 << 20},
	}
}

// TestResourcesBackToLevel: the sums over the replicas are compared, whichever replica serves
// which tenant and whichever incarnation runs; a sum past its bound is a violation naming it.
func TestResourcesBackToLevel(t *testing.T) {
	cases := map[string]struct {
		after Resources
		want  []string // substrings of the violations' messages, in order
	}{
		"the same": {level(), nil},
		"tenants moved, restarted": {Resources{
			{Replica: "shard-0", PID: 20, Goroutines: 300, HeapBytes: 10 << 20},
			{Replica: "shard-1", PID: 11, Goroutines: 1150, HeapBytes: 30 << 20},
		}, nil},
		"within the bounds": {Resources{
			{Replica: "shard-0", Goroutines: 700 + 360, HeapBytes: 20<<20 + 17<<20},
			{Replica: "shard-1", Goroutines: 740, HeapBytes: 14 << 20},
		}, nil},
		"goroutines leaked": {Resources{
			{Replica: "shard-0", Goroutines: 700 + 361, HeapBytes: 20 << 20},
			{Replica: "shard-1", Goroutines: 740, HeapBytes: 14 << 20},
		}, []string{"1801 goroutines after the settle, 1440 before the faults (bound 1800)"}},
		"heap leaked": {Resources{
			{Replica: "shard-0", Goroutines: 700, HeapBytes: 20 << 20},
			{Replica: "shard-1", Goroutines: 740, HeapBytes: 14<<20 + 18<<20},
		}, []string{"live heap is 52.0 MiB after the settle, 34.0 MiB before the faults (bound 51.0 MiB)"}},
		"both": {Resources{{Replica: "shard-0", Goroutines: 5000, HeapBytes: 1 << 30}, {Replica: "shard-1"}},
			[]string{"5000 goroutines", "1024.0 MiB"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ResourcesBackToLevel(level(), tc.after)
			if len(got) != len(tc.want) {
				t.Fatalf("%d violations, want %d: %v", len(got), len(tc.want), got)
			}
			for i, v := range got {
				if v.Invariant != InvResources || !strings.Contains(v.Message, tc.want[i]) || len(v.Objects) != len(level())+len(tc.after) {
					t.Errorf("violation %d: %s, want %s containing %q and every replica's figures", i, v, InvResources, tc.want[i])
				}
			}
		})
	}
	// Small soaks: the minimum slack applies (50 goroutines, 16 MiB).
	small := Resources{{Replica: "shard-0", Goroutines: 100, HeapBytes: 4 << 20}}
	if v := ResourcesBackToLevel(small, Resources{{Replica: "shard-0", Goroutines: 150, HeapBytes: 20 << 20}}); len(v) != 0 {
		t.Errorf("within the minimum slack: %v", v)
	}
	if v := ResourcesBackToLevel(small, Resources{{Replica: "shard-0", Goroutines: 151, HeapBytes: 20<<20 + 1}}); len(v) != 2 {
		t.Errorf("past the minimum slack: %v, want 2 violations", v)
	}
	if v := ResourcesBackToLevel(nil, level()); v != nil {
		t.Errorf("nothing measured before: %v", v)
	}
	// Not the same replicas (one added by a scale fault): nothing to compare the sums with.
	three := append(level(), ReplicaResources{Replica: "shard-2", Goroutines: 5000, HeapBytes: 1 << 30})
	if v := ResourcesBackToLevel(level(), three); v != nil || SameReplicas(level(), three) {
		t.Errorf("a replica more after: %v", v)
	}
	renamed := level()
	renamed[1].Replica = "shard-9"
	if SameReplicas(level(), renamed) {
		t.Error("shard-1 and shard-9 counted as the same replicas")
	}
}

func TestValueAfter(t *testing.T) {
	heap := "heap profile: 3: 1 [4: 2] @ heap/1048576\n# runtime.MemStats\n# Alloc = 123\n# HeapAlloc = 23456789\n# HeapSys = 9\n"
	if v, ok := valueAfter(heap, "# HeapAlloc = "); !ok || v != 23456789 {
		t.Errorf("HeapAlloc: %v %t", v, ok)
	}
	metrics := "# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 707\ngo_goroutines_x 1\n"
	if v, ok := valueAfter(metrics, "go_goroutines "); !ok || v != 707 {
		t.Errorf("go_goroutines: %v %t", v, ok)
	}
	if _, ok := valueAfter(metrics, "nope "); ok {
		t.Error("a missing line found")
	}
}
