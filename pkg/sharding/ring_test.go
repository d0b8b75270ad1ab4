package sharding

import (
	"fmt"
	"testing"
)

func tenants(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("tenant-%d", i)
	}
	return out
}

func TestRingEmpty(t *testing.T) {
	var nilRing *Ring
	if got := nilRing.Owner("a"); got != "" {
		t.Errorf("nil ring: Owner = %q, want empty", got)
	}
	if got := NewRing(nil, 0).Owner("a"); got != "" {
		t.Errorf("empty ring: Owner = %q, want empty", got)
	}
}

func TestRingSameInEveryProcess(t *testing.T) {
	a := NewRing([]string{"s1", "s2", "s3"}, 0)
	b := NewRing([]string{"s3", "s1", "s2", "s1"}, 0)
	for _, k := range tenants(500) {
		if a.Owner(k) != b.Owner(k) {
			t.Fatalf("Owner(%s) differs: %s vs %s", k, a.Owner(k), b.Owner(k))
		}
	}
	if got := fmt.Sprint(b.Shards()); got != "[s1 s2 s3]" {
		t.Errorf("Shards = %s", got)
	}
}

// Each of 3 shards holds close to a third of 3000 tenants.
func TestRingBalance(t *testing.T) {
	r := NewRing([]string{"vc-syncer-7d9f-abcde", "vc-syncer-7d9f-fghij", "vc-syncer-7d9f-klmno"}, 0)
	counts := map[string]int{}
	ts := tenants(3000)
	for _, k := range ts {
		counts[r.Owner(k)]++
	}
	for s, n := range counts {
		if share := float64(n) / (float64(len(ts)) / 3); share > 1.2 || share < 0.8 {
			t.Errorf("shard %s holds %d tenants, %.2f× its fair share", s, n, share)
		}
	}
	if len(counts) != 3 {
		t.Errorf("%d shards hold tenants, want 3", len(counts))
	}
}

// Adding a third shard moves about a third of the tenants, all of them to the new shard;
// removing it moves them back and nothing else.
func TestRingMovesAboutOneNth(t *testing.T) {
	two := NewRing([]string{"a", "b"}, 0)
	three := NewRing([]string{"a", "b", "c"}, 0)
	ts := tenants(3000)
	moved := 0
	for _, k := range ts {
		before, after := two.Owner(k), three.Owner(k)
		if before != after {
			moved++
			if after != "c" {
				t.Fatalf("%s moved from %s to %s, not to the new shard", k, before, after)
			}
		}
	}
	if f := float64(moved) / float64(len(ts)); f < 0.25 || f > 0.42 {
		t.Errorf("adding a third shard moved %.2f of the tenants, want about 1/3", f)
	}
}
