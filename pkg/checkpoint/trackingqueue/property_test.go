package trackingqueue

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	testingclock "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"
)

// TestTrackingInvariant is the state-machine property test of design 4.9 item 1: random
// sequences of Add, AddAfter, AddRateLimited, Forget, Get, Done, clock steps and ShutDown, with
// invariant I1 ("every item with an outstanding reconcile obligation is in Snapshot()")
// checked after every command and inside Done and AddAfter at their interleaving points.
func TestTrackingInvariant(t *testing.T) {
	setFlag(t, "rapid.steps", "80") // long enough to reach states after ShutDown
	rapid.Check(t, func(rt *rapid.T) { runMachine(rt, 0) })
}

// t0 is the fake clock's start.
var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// model is the reference for runMachine: the obligations created by completed commands,
// discharged by the rules of invariant I1, independent of how client-go works inside.
type model struct {
	now        time.Time
	steps      int // commands run
	shut       bool
	pendingAdd map[int]bool        // an Add returned and no Get of the item followed
	processing map[int]bool        // Get returned the item, Done has not returned
	readyAts   map[int][]time.Time // AddAfter readyAts not reached by a Get at or after them
	// heap approximates client-go's delaying heap (earliest readyAt per item), only to wait
	// for fired items after a clock step so Get sees them; it plays no part in the invariant.
	heap map[int]time.Time
}

// needs returns the items with an outstanding obligation, sorted.
func (m *model) needs() []int {
	set := map[int]bool{}
	for x, ok := range m.pendingAdd {
		if ok {
			set[x] = true
		}
	}
	for x, ok := range m.processing {
		if ok {
			set[x] = true
		}
	}
	for x, r := range m.readyAts {
		if len(r) > 0 {
			set[x] = true
		}
	}
	out := make([]int, 0, len(set))
	for x := range set {
		out = append(out, x)
	}
	sort.Ints(out)
	return out
}

func (m *model) addAfter(x int, d time.Duration) {
	if d <= 0 {
		m.pendingAdd[x] = true
		return
	}
	at := m.now.Add(d)
	m.readyAts[x] = append(m.readyAts[x], at)
	if m.shut {
		return
	}
	if h, ok := m.heap[x]; !ok || at.Before(h) {
		m.heap[x] = at
	}
}

// got applies a Get that returned x at m.now: it discharges the pending add and every readyAt
// at or before now.
func (m *model) got(x int) {
	m.pendingAdd[x] = false
	m.processing[x] = true
	m.readyAts[x] = slices.DeleteFunc(m.readyAts[x], func(r time.Time) bool { return !r.After(m.now) })
}

// recordingLimiter remembers the last delay it returned (runMachine is single-threaded).
type recordingLimiter struct {
	workqueue.TypedRateLimiter[int]
	last time.Duration
}

func (r *recordingLimiter) When(x int) time.Duration {
	r.last = r.TypedRateLimiter.When(x)
	return r.last
}

// missing returns the items m needs that snap lacks.
func missing(m *model, snap Snapshot[int]) []int {
	have := snap.items()
	var out []int
	for _, x := range m.needs() {
		if _, ok := have[x]; !ok {
			out = append(out, x)
		}
	}
	return out
}

// runMachine runs one random command sequence against a queue with the given injected bugs.
func runMachine(t *rapid.T, bugs bug) {
	clk := testingclock.NewFakeClock(t0)
	lim := &recordingLimiter{TypedRateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[int](time.Second, 4*time.Second)}
	m := &model{now: t0, pendingAdd: map[int]bool{}, processing: map[int]bool{}, readyAts: map[int][]time.Time{}, heap: map[int]time.Time{}}

	var queue *Queue[int] // built below; check runs only once it is set
	check := func(where string) {
		snap := queue.Snapshot()
		if miss := missing(m, snap); len(miss) > 0 {
			t.Fatalf("I1 violated %s: items %v have outstanding obligations but are missing from the snapshot %+v (model: pendingAdd=%v processing=%v readyAts=%v)",
				where, miss, snap, m.pendingAdd, m.processing, m.readyAts)
		}
		if size, n := queue.Size(), snap.Len(); size < n {
			t.Fatalf("Size() = %d below the snapshot's %d distinct items", size, n)
		}
	}
	k := &knobs{bugs: bugs, yield: func(p string) {
		// Done and AddAfter run only on this goroutine; core.Add also runs on client-go's
		// waiting goroutine, where the model must not be read.
		if p == pointDone || p == pointAddAfter {
			check("inside " + p)
		}
	}}
	queue = newQueue(Config[int]{Clock: clk, RateLimiter: lim}, k)
	defer queue.ShutDown()

	item := rapid.IntRange(0, 3)
	t.Repeat(map[string]func(*rapid.T){
		"Add": func(t *rapid.T) {
			x := item.Draw(t, "item")
			queue.Add(x)
			m.pendingAdd[x] = true
		},
		"AddAfter": func(t *rapid.T) {
			x := item.Draw(t, "item")
			d := time.Duration(rapid.IntRange(0, 10).Draw(t, "halfSeconds")) * time.Second / 2
			queue.AddAfter(x, d)
			m.addAfter(x, d)
		},
		"AddRateLimited": func(t *rapid.T) {
			x := item.Draw(t, "item")
			queue.AddRateLimited(x)
			m.addAfter(x, lim.last)
		},
		"Forget": func(t *rapid.T) {
			queue.Forget(item.Draw(t, "item"))
		},
		"Get": func(t *rapid.T) {
			if m.shut {
				if x, shutdown := queue.Get(); !shutdown {
					t.Fatalf("Get after ShutDown returned %d, want shutdown at once (R5)", x)
				}
				return
			}
			if queue.Len() == 0 {
				t.Skip("nothing queued; Get would block")
			}
			x, shutdown := queue.Get()
			if shutdown {
				t.Fatalf("Get reported shutdown before ShutDown")
			}
			if m.processing[x] {
				t.Fatalf("Get returned %d, which is still processing", x)
			}
			m.got(x)
		},
		"Done": func(t *rapid.T) {
			var out []int
			for x, ok := range m.processing {
				if ok {
					out = append(out, x)
				}
			}
			if len(out) == 0 {
				t.Skip("nothing handed out")
			}
			sort.Ints(out)
			x := rapid.SampledFrom(out).Draw(t, "handedOut")
			queue.Done(x)
			m.processing[x] = false
		},
		"Step": func(t *rapid.T) {
			clk.Step(time.Duration(rapid.IntRange(1, 6).Draw(t, "halfSeconds")) * time.Second / 2)
			m.now = clk.Now()
			if m.shut {
				return
			}
			var due []int
			for x, at := range m.heap {
				if !at.After(m.now) {
					due = append(due, x)
					delete(m.heap, x)
				}
			}
			for _, x := range due {
				if !m.processing[x] {
					waitQueued(queue, x)
				}
			}
		},
		"ShutDown": func(t *rapid.T) {
			if m.steps < 40 || rapid.IntRange(0, 3).Draw(t, "oneInFour") != 0 {
				t.Skip("not yet: most of a run happens before ShutDown")
			}
			queue.ShutDown()
			m.shut = true
			clear(m.heap)
		},
		"": func(*rapid.T) {
			check("after the command")
			m.steps++
		},
	})
}

// waitQueued waits (up to 100 ms, real time) until client-go's waiting goroutine has added x
// after a fake clock step. Timing out is not a failure: if that goroutine read the clock just
// before the step and set its timer just after it, the timer ends one step late (a client-go
// plus fake-clock race), and the item fires on the next step instead.
func waitQueued(queue *Queue[int], x int) {
	deadline := time.Now().Add(100 * time.Millisecond)
	for i := 0; time.Now().Before(deadline); i++ {
		if slices.Contains(queue.Snapshot().Queued, x) {
			return
		}
		if i < 100 {
			runtime.Gosched() // usually enough: the waiting goroutine only has to wake up
		} else {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// String helps rapid's failure output.
func (m *model) String() string {
	return fmt.Sprintf("now=%s needs=%v", m.now.Sub(t0), m.needs())
}
