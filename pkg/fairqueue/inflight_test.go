package fairqueue

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// TestInFlightCapWhileOthersWait: with 4 workers and two tenants of weight 1, the greedy tenant
// gets its share of 2 workers while the other has items queued, even though the round-robin
// would otherwise give it the next item; Done frees its slot.
func TestInFlightCapWhileOthersWait(t *testing.T) {
	q := New(Options[item]{TenantOf: tenantOf, Workers: 4})
	for i := range 10 {
		q.Push(item{"greedy", i})
	}
	a, b := q.Pop(), q.Pop()
	if a.Tenant != "greedy" || b.Tenant != "greedy" {
		t.Fatalf("alone, popped %v %v, want greedy items", a, b)
	}
	for i := range 10 {
		q.Push(item{"other", i})
	}
	// greedy has 2 in flight = ceil(4×1÷2): every further pop serves "other".
	for i := range 2 {
		if got := q.Pop(); got.Tenant != "other" {
			t.Fatalf("pop %d = %v, want other (greedy at its cap, in flight %d)", i, got, q.InFlight("greedy"))
		}
	}
	q.Done(a)
	if got := q.Pop(); got.Tenant != "greedy" {
		t.Fatalf("after Done, pop = %v, want greedy", got)
	}
	if got, want := q.InFlight("greedy"), 2; got != want {
		t.Fatalf("greedy in flight %d, want %d", got, want)
	}
	q.Done(a) // a second Done of the same item does nothing
	if got, want := q.InFlight("greedy"), 2; got != want {
		t.Fatalf("after a repeated Done, greedy in flight %d, want %d", got, want)
	}
	if st := q.Stats()["greedy"]; st.InFlight != 2 {
		t.Fatalf("Stats in flight %d, want 2", st.InFlight)
	}
	if q.OverCap() != 0 {
		t.Fatalf("OverCap = %d, want 0", q.OverCap())
	}
}

// TestInFlightCapIsWeighted: the share is ceil(Workers × weight ÷ Σ weights of queued tenants).
func TestInFlightCapIsWeighted(t *testing.T) {
	weights := map[string]int{"a": 3, "b": 1}
	q := New(Options[item]{TenantOf: tenantOf, Workers: 10, Weight: func(s string) int { return weights[s] }})
	for i := range 50 {
		q.Push(item{"a", i})
		q.Push(item{"b", i})
	}
	count := map[string]int{}
	for range 10 {
		count[q.Pop().Tenant]++
	}
	// a: ceil(10×3÷4) = 8, b: ceil(10×1÷4) = 3; the 10 workers split 8+2 by DRR order.
	if count["a"] > 8 || count["b"] > 3 {
		t.Fatalf("in flight %v, want a ≤ 8, b ≤ 3", count)
	}
}

// TestInFlightWorkConserving: a tenant alone (others only have items in flight) uses every
// worker; the cap applies only while another tenant has items queued.
func TestInFlightWorkConserving(t *testing.T) {
	q := New(Options[item]{TenantOf: tenantOf, Workers: 4})
	q.Push(item{"b", 0})
	if got := q.Pop(); got.Tenant != "b" {
		t.Fatal(got)
	}
	for i := range 10 {
		q.Push(item{"a", i})
	}
	for i := range 4 {
		if got := q.Pop(); got.Tenant != "a" {
			t.Fatalf("pop %d = %v", i, got)
		}
	}
	if q.InFlight("a") != 4 || q.OverCap() != 0 {
		t.Fatalf("a in flight %d, over cap %d; want 4, 0", q.InFlight("a"), q.OverCap())
	}
}

// TestInFlightCapProperty drives the queue as a pipeline does — at most Workers items out, a
// pop only by a free worker — with random pushes, pops and Dones over tenants of random weights,
// and checks after every pop that the popped tenant is within its share of the queued tenants
// at pop time, that the cap never had to be broken (OverCap stays 0) and that the in-flight
// counts are exact.
func TestInFlightCapProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		workers := rapid.IntRange(1, 8).Draw(t, "workers")
		nt := rapid.IntRange(1, 6).Draw(t, "tenants")
		weights := map[string]int{}
		for i := range nt {
			weights[fmt.Sprint("t", i)] = rapid.IntRange(1, 4).Draw(t, fmt.Sprint("w", i))
		}
		q := New(Options[item]{TenantOf: tenantOf, Workers: workers, Weight: func(s string) int { return weights[s] }})
		var out []item
		queued := map[string]int{}
		n := 0
		for range rapid.IntRange(1, 200).Draw(t, "steps") {
			switch op := rapid.IntRange(0, 2).Draw(t, "op"); {
			case op == 0:
				tn := fmt.Sprint("t", rapid.IntRange(0, nt-1).Draw(t, "tenant"))
				n++
				q.Push(item{tn, n})
				queued[tn]++
			case op == 1 && len(out) < workers && q.Len() > 0:
				sum := 0
				for tn, c := range queued {
					if c > 0 {
						sum += weights[tn]
					}
				}
				it := q.Pop()
				share := (workers*weights[it.Tenant] + sum - 1) / sum
				if got := q.InFlight(it.Tenant); got > share {
					t.Fatalf("%s in flight %d, share %d (workers %d, weights %v, queued %v)", it.Tenant, got, share, workers, weights, queued)
				}
				queued[it.Tenant]--
				out = append(out, it)
			case op == 2 && len(out) > 0:
				i := rapid.IntRange(0, len(out)-1).Draw(t, "done")
				q.Done(out[i])
				out = append(out[:i], out[i+1:]...)
			}
		}
		if q.OverCap() != 0 {
			t.Fatalf("OverCap = %d", q.OverCap())
		}
		per := map[string]int{}
		for _, it := range out {
			per[it.Tenant]++
		}
		for tn := range weights {
			if q.InFlight(tn) != per[tn] {
				t.Fatalf("%s in flight %d, want %d", tn, q.InFlight(tn), per[tn])
			}
		}
	})
}
