package fairqueue

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	"pgregory.net/rapid"
)

type item struct {
	Tenant string
	N      int
}

func tenantOf(i item) string { return i.Tenant }

// newWorkqueue plugs q into a real client-go queue, as the syncer does.
func newWorkqueue(q *Queue[item]) workqueue.TypedInterface[item] {
	return workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[item]{Name: "", Queue: q})
}

func TestRoundRobinAcrossTenants(t *testing.T) {
	q := New(Options[item]{TenantOf: tenantOf})
	// A greedy tenant queues 100 items before two others queue 2 each.
	for i := range 100 {
		q.Push(item{"greedy", i})
	}
	for i := range 2 {
		q.Push(item{"a", i})
		q.Push(item{"b", i})
	}
	var got []string
	for range 6 {
		got = append(got, q.Pop().Tenant)
	}
	want := []string{"greedy", "a", "b", "greedy", "a", "b"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func TestWeights(t *testing.T) {
	weights := map[string]int{"a": 3, "b": 1}
	q := New(Options[item]{TenantOf: tenantOf, Weight: func(s string) int { return weights[s] }})
	for i := range 40 {
		q.Push(item{"a", i})
		q.Push(item{"b", i})
	}
	count := map[string]int{}
	for range 40 {
		count[q.Pop().Tenant]++
	}
	if count["a"] != 30 || count["b"] != 10 {
		t.Fatalf("served %v, want a:30 b:10", count)
	}
	// Weight changes take effect without a new queue.
	weights["a"], weights["b"] = 1, 1
	count = map[string]int{}
	for range 20 {
		count[q.Pop().Tenant]++
	}
	if d := count["a"] - count["b"]; d < -4 || d > 4 {
		t.Fatalf("after reweighting served %v, want about equal", count)
	}
}

func TestLowLaneServedButNotStarved(t *testing.T) {
	q := New(Options[item]{TenantOf: tenantOf, LowEvery: 4})
	for i := range 8 {
		q.MarkLow(item{"t", 100 + i})
		q.Push(item{"t", 100 + i})
	}
	for i := range 8 {
		q.Push(item{"t", i})
	}
	var lows int
	for range 8 {
		if q.Pop().N >= 100 {
			lows++
		}
	}
	if lows != 2 {
		t.Fatalf("%d of the first 8 pops were low priority, want 2 (one in every 4)", lows)
	}
}

func TestPromotion(t *testing.T) {
	q := New(Options[item]{TenantOf: tenantOf})
	for i := range 3 {
		q.MarkLow(item{"t", i})
		q.Push(item{"t", i})
	}
	q.Push(item{"t", 10})
	q.MarkHigh(item{"t", 2})
	if q.Len() != 4 {
		t.Fatalf("Len = %d after promotion, want 4", q.Len())
	}
	var got []int
	for q.Len() > 0 {
		got = append(got, q.Pop().N)
	}
	if fmt.Sprint(got) != fmt.Sprint([]int{10, 2, 0, 1}) {
		t.Fatalf("order %v, want [10 2 0 1]", got)
	}
}

func TestReclaimsIdleSubqueues(t *testing.T) {
	q := New(Options[item]{TenantOf: tenantOf})
	wq := newWorkqueue(q)
	wq.Add(item{"t", 1})
	it, _ := wq.Get()
	if len(q.tenants) != 0 {
		t.Fatalf("sub-queue kept after its last item was popped")
	}
	// Added again while processing: client-go keeps it dirty and re-queues it on Done.
	wq.Add(item{"t", 1})
	if wq.Len() != 0 {
		t.Fatalf("item processed twice at once: Len %d", wq.Len())
	}
	wq.Done(it)
	if wq.Len() != 1 {
		t.Fatalf("item added during processing was lost after the sub-queue was reclaimed")
	}
}

func TestStats(t *testing.T) {
	now := time.Unix(1000, 0)
	q := New(Options[item]{TenantOf: tenantOf, Now: func() time.Time { return now }})
	q.Push(item{"a", 1})
	now = now.Add(3 * time.Second)
	q.Push(item{"a", 2})
	q.Push(item{"b", 1})
	st := q.Stats()
	if st["a"].Depth != 2 || st["a"].Oldest != 3*time.Second || st["b"].Oldest != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestProperties drives a real client-go queue with random adds (high and low), gets and
// dones from one goroutine and checks client-go's guarantees plus delivery.
func TestProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		q := New(Options[item]{TenantOf: tenantOf, Weight: func(s string) int { return len(s) }})
		wq := newWorkqueue(q)
		defer wq.ShutDown()
		tenants := []string{"a", "bb", "ccc"}
		genItem := rapid.Custom(func(t *rapid.T) item {
			return item{rapid.SampledFrom(tenants).Draw(t, "tenant"), rapid.IntRange(0, 5).Draw(t, "n")}
		})
		pending := map[item]bool{}    // added and not yet handed out since
		processing := map[item]bool{} // handed to a worker, not Done
		redo := map[item]bool{}       // added while processing
		rt.Repeat(map[string]func(*rapid.T){
			"add": func(t *rapid.T) {
				it := genItem.Draw(t, "item")
				if rapid.Bool().Draw(t, "low") {
					q.MarkLow(it)
				} else {
					q.MarkHigh(it)
				}
				wq.Add(it)
				if processing[it] {
					redo[it] = true
				} else {
					pending[it] = true
				}
			},
			"get": func(t *rapid.T) {
				if wq.Len() == 0 {
					t.Skip("empty")
				}
				it, _ := wq.Get()
				if processing[it] {
					t.Fatalf("%v handed out twice", it)
				}
				if !pending[it] {
					t.Fatalf("%v handed out but not added", it)
				}
				delete(pending, it)
				processing[it] = true
			},
			"done": func(t *rapid.T) {
				if len(processing) == 0 {
					t.Skip("nothing processing")
				}
				var it item
				for k := range processing {
					it = k
					break
				}
				wq.Done(it)
				delete(processing, it)
				if redo[it] {
					delete(redo, it)
					pending[it] = true
				}
			},
			"": func(t *rapid.T) {
				if wq.Len() != len(pending) || q.Len() != len(pending) {
					t.Fatalf("Len %d / %d, want %d (duplicates must collapse)", wq.Len(), q.Len(), len(pending))
				}
			},
		})
		// Drain: every pending item comes out exactly once.
		for wq.Len() > 0 {
			it, _ := wq.Get()
			if !pending[it] {
				rt.Fatalf("drained %v which was not pending", it)
			}
			delete(pending, it)
			wq.Done(it)
		}
		if len(pending) != 0 {
			rt.Fatalf("items never delivered: %v", pending)
		}
	})
}

// TestProperty_SharesMatchWeights: under saturation each tenant's share of served items
// matches its weight share within ±5%, and no tenant starves.
func TestProperty_SharesMatchWeights(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(2, 8).Draw(rt, "tenants")
		weights := map[string]int{}
		total := 0
		for i := range n {
			w := rapid.IntRange(1, 10).Draw(rt, "weight")
			weights[fmt.Sprintf("t%d", i)] = w
			total += w
		}
		q := New(Options[item]{TenantOf: tenantOf, Weight: func(s string) int { return weights[s] }})
		wq := newWorkqueue(q)
		defer wq.ShutDown()
		serves := 200 * total
		for tn := range weights {
			for i := range serves {
				wq.Add(item{tn, i}) // every tenant always has more than it can get
			}
		}
		served := map[string]int{}
		for range serves {
			it, _ := wq.Get()
			served[it.Tenant]++
			wq.Done(it)
		}
		for tn, w := range weights {
			want := float64(w) / float64(total)
			got := float64(served[tn]) / float64(serves)
			if served[tn] == 0 || math.Abs(got-want) > 0.05*want {
				rt.Fatalf("tenant %s weight %d: share %.4f, want %.4f ±5%%", tn, w, got, want)
			}
		}
	})
}

// TestConcurrentWorkers runs producers and workers under -race and checks that no item is
// processed by two workers at once and every added item is processed.
func TestConcurrentWorkers(t *testing.T) {
	q := New(Options[item]{TenantOf: tenantOf, Weight: func(string) int { return 2 }})
	wq := newWorkqueue(q)
	var mu sync.Mutex
	inFlight := map[item]bool{}
	seen := map[item]bool{}
	var workers sync.WaitGroup
	for range 8 {
		workers.Go(func() {
			for {
				it, shutdown := wq.Get()
				if shutdown {
					return
				}
				mu.Lock()
				if inFlight[it] {
					mu.Unlock()
					t.Errorf("%v processed concurrently", it)
					return
				}
				inFlight[it] = true
				seen[it] = true
				mu.Unlock()
				time.Sleep(10 * time.Microsecond)
				mu.Lock()
				delete(inFlight, it)
				mu.Unlock()
				wq.Done(it)
			}
		})
	}
	var producers sync.WaitGroup
	for p := range 4 {
		producers.Go(func() {
			for i := range 2000 {
				it := item{fmt.Sprintf("t%d", (p+i)%5), i % 300}
				if i%3 == 0 {
					q.MarkLow(it)
				}
				wq.Add(it)
			}
		})
	}
	producers.Wait()
	wq.ShutDownWithDrain()
	workers.Wait()
	for p := range 4 {
		for i := range 2000 {
			if it := (item{fmt.Sprintf("t%d", (p+i)%5), i % 300}); !seen[it] {
				t.Fatalf("%v never processed", it)
			}
		}
	}
}
