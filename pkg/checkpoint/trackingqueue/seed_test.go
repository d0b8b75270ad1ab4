package trackingqueue

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/util/workqueue"
	testingclock "k8s.io/utils/clock/testing"
)

func newFakeQueue(clk *testingclock.FakeClock) *Queue[string] {
	return New(Config[string]{
		Clock:       clk,
		RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Minute),
	})
}

// TestSeedRoundTrip: a snapshot taken after ShutDown (the final checkpoint) is seeded into a
// new queue, which must deliver every item: at once for queued, processing and orphaned items,
// at Earliest and again at Latest for delayed ones, and nothing must stay tracked afterwards.
func TestSeedRoundTrip(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	a := newFakeQueue(clk)
	a.Add("proc")
	if x, _ := a.Get(); x != "proc" {
		t.Fatalf("Get = %q, want proc", x)
	}
	a.Add("proc") // added again while processing: dirty, not in the storage
	a.Add("queued-1")
	a.Add("queued-2")
	a.AddAfter("delayed", 2*time.Second)
	a.AddAfter("window", time.Second)
	a.AddAfter("window", 3*time.Second) // coalesced by client-go into the 1 s entry
	a.ShutDown()
	a.Add("orphan")
	a.AddAfter("orphan-delayed", 5*time.Second)

	snap := a.Snapshot()
	want := Snapshot[string]{
		Queued:     []string{"queued-1", "queued-2"},
		Processing: []string{"proc"},
		Delayed: map[string]DelayWindow{
			"delayed":        {Earliest: t0.Add(2 * time.Second), Latest: t0.Add(2 * time.Second)},
			"window":         {Earliest: t0.Add(time.Second), Latest: t0.Add(3 * time.Second)},
			"orphan-delayed": {Earliest: t0.Add(5 * time.Second), Latest: t0.Add(5 * time.Second)},
		},
		Orphans: []string{"orphan"},
	}
	if diff := cmp.Diff(want, snap); diff != "" {
		t.Fatalf("snapshot after ShutDown (-want +got):\n%s", diff)
	}
	// A window whose both ends passed while the process was down fires at once.
	snap.Delayed["past"] = DelayWindow{Earliest: t0, Latest: t0.Add(200 * time.Millisecond)}

	// The new process starts half a second later.
	clk2 := testingclock.NewFakeClock(t0.Add(500 * time.Millisecond))
	b := newFakeQueue(clk2)
	defer b.ShutDown()
	b.Seed(snap)
	seeded := b.Snapshot().items()
	for x := range snap.items() {
		if _, ok := seeded[x]; !ok {
			t.Errorf("item %q missing from the snapshot right after Seed", x)
		}
	}

	got := map[string][]time.Duration{}
	deliver := func(wantN int) {
		t.Helper()
		for range wantN {
			x := getWithin(t, b, 2*time.Second)
			got[x] = append(got[x], clk2.Now().Sub(t0))
			b.Done(x)
		}
		if n := b.Len(); n != 0 {
			t.Fatalf("at %s: %d more items queued than expected", clk2.Now().Sub(t0), n)
		}
	}
	deliver(5) // queued-1, queued-2, proc, orphan, past
	for range 5 {
		// Timers armed: client-go's heartbeat, its heap timer until orphan-delayed fires at
		// 5 s, Seed's late fire of window until 3 s.
		want := 1
		if now := clk2.Now().Sub(t0); now < 5*time.Second {
			want++
			if now < 3*time.Second {
				want++
			}
		}
		settle(t, clk2, want)
		clk2.Step(time.Second)
		switch clk2.Now().Sub(t0) {
		case 1500 * time.Millisecond, 2500 * time.Millisecond, 3500 * time.Millisecond, 5500 * time.Millisecond:
			deliver(1)
		}
	}
	s := func(d float64) time.Duration { return time.Duration(d * float64(time.Second)) }
	wantGot := map[string][]time.Duration{
		"queued-1":       {s(0.5)},
		"queued-2":       {s(0.5)},
		"proc":           {s(0.5)},
		"orphan":         {s(0.5)},
		"past":           {s(0.5)},
		"window":         {s(1.5), s(3.5)}, // Earliest, then again at Latest
		"delayed":        {s(2.5)},
		"orphan-delayed": {s(5.5)},
	}
	if diff := cmp.Diff(wantGot, got); diff != "" {
		t.Errorf("deliveries after Seed (item → fake-clock times since t0; -want +got):\n%s", diff)
	}
	if left := b.Snapshot(); left.Len() != 0 {
		t.Errorf("items still tracked after every obligation was delivered: %+v", left)
	}
}

// getWithin waits until q has a queued item (client-go's delaying goroutine adds fired items
// asynchronously) and returns it.
func getWithin(t *testing.T, q *Queue[string], timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for q.Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no item became ready within %s", timeout)
		}
		time.Sleep(100 * time.Microsecond)
	}
	x, shutdown := q.Get()
	if shutdown {
		t.Fatalf("Get reported shutdown")
	}
	return x
}

// TestGetAfterShutDown: Get reports shutdown at once even with items queued (R5), and those
// items stay in the snapshot for the final checkpoint.
func TestGetAfterShutDown(t *testing.T) {
	q := newFakeQueue(testingclock.NewFakeClock(t0))
	q.Add("a")
	q.Add("b")
	q.ShutDown()
	if x, shutdown := q.Get(); !shutdown {
		t.Fatalf("Get after ShutDown = %q, want shutdown (client-go's Typed would drain)", x)
	}
	if got := q.Snapshot().Queued; !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Queued after ShutDown = %v, want [a b]", got)
	}
}

// TestGetBlockedAcrossShutDown: a worker blocked in Get is released by ShutDown.
func TestGetBlockedAcrossShutDown(t *testing.T) {
	q := newFakeQueue(testingclock.NewFakeClock(t0))
	res := make(chan bool)
	go func() {
		_, shutdown := q.Get()
		res <- shutdown
	}()
	time.Sleep(10 * time.Millisecond)
	q.ShutDown()
	select {
	case shutdown := <-res:
		if !shutdown {
			t.Fatal("Get returned an item from an empty queue")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Get still blocked 5 s after ShutDown")
	}
}

// TestShutDownWithDrainWaitsForHandedOut: ShutDownWithDrain returns once the items handed out
// are Done, without handing out the queued ones.
func TestShutDownWithDrainWaitsForHandedOut(t *testing.T) {
	q := newFakeQueue(testingclock.NewFakeClock(t0))
	q.Add("a")
	q.Add("b")
	x, _ := q.Get()
	drained := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(drained)
	}()
	// ShutDownWithDrain has begun (a fixed wait here let Get hand out "b" on a loaded
	// machine, before the shutdown started); x is not Done, so it cannot have returned.
	for deadline := time.Now().Add(5 * time.Second); !q.ShuttingDown(); time.Sleep(100 * time.Microsecond) {
		if time.Now().After(deadline) {
			t.Fatal("ShutDownWithDrain did not begin within 5 s")
		}
	}
	select {
	case <-drained:
		t.Fatal("ShutDownWithDrain returned while an item was still processing")
	default:
	}
	if _, shutdown := q.Get(); !shutdown {
		t.Fatal("Get handed out a queued item during ShutDownWithDrain")
	}
	q.Done(x)
	select {
	case <-drained:
	case <-time.After(5 * time.Second):
		t.Fatal("ShutDownWithDrain did not return after Done")
	}
	snap := q.Snapshot()
	if !slices.Equal(snap.Queued, []string{"b"}) || len(snap.Processing) != 0 {
		t.Fatalf("snapshot after drain = %+v, want only b queued", snap)
	}
}

// TestSizeBoundsSnapshot: Size counts an item once per list it is in, so it bounds Len.
func TestSizeBoundsSnapshot(t *testing.T) {
	q := newFakeQueue(testingclock.NewFakeClock(t0))
	defer q.ShutDown()
	q.Add("a")
	q.AddAfter("a", time.Second)
	q.AddAfter("b", time.Second)
	if got, want := q.Size(), 3; got != want {
		t.Errorf("Size = %d, want %d (a queued, a and b delayed)", got, want)
	}
	if got, want := q.Snapshot().Len(), 2; got != want {
		t.Errorf("Snapshot().Len = %d, want %d distinct items", got, want)
	}
}

// TestCoalescedWindow: client-go coalesces AddAfter(x, 3s) into a pending AddAfter(x, 1s), so
// nothing fires at 3 s. A reconcile that starts before 3 s leaves the window (over-report: at
// most one extra reconcile after Seed); one that starts at or after 3 s discharges it.
func TestCoalescedWindow(t *testing.T) {
	for name, tc := range map[string]struct {
		getAt      time.Duration // fake-clock time of the Get, after the 1 s fire
		wantWindow bool
	}{
		"reconciled before Latest": {getAt: 2 * time.Second, wantWindow: true},
		"reconciled at Latest":     {getAt: 3 * time.Second, wantWindow: false},
	} {
		t.Run(name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(t0)
			q := newFakeQueue(clk)
			defer q.ShutDown()
			q.AddAfter("x", time.Second)
			q.AddAfter("x", 3*time.Second)
			settle(t, clk, 2) // client-go's heartbeat and heap timer
			clk.Step(time.Second)
			waitStr(t, q, "x")
			clk.SetTime(t0.Add(tc.getAt))
			x := getWithin(t, q, 2*time.Second)
			q.Done(x)
			want := Snapshot[string]{Queued: []string{}, Processing: []string{}, Delayed: map[string]DelayWindow{}, Orphans: []string{}}
			if tc.wantWindow {
				want.Delayed["x"] = DelayWindow{Earliest: t0.Add(time.Second), Latest: t0.Add(3 * time.Second)}
			}
			if diff := cmp.Diff(want, q.Snapshot()); diff != "" {
				t.Errorf("snapshot after the reconcile (-want +got):\n%s", diff)
			}
		})
	}
}

// waitStr waits until x is queued (client-go's waiting goroutine adds it asynchronously).
func waitStr(t *testing.T, q *Queue[string], x string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
		if slices.Contains(q.Snapshot().Queued, x) {
			return
		}
	}
	t.Fatalf("%q not queued within 2 s", x)
}

// settle waits until clk has want timers and tickers armed, unchanged over 5 ms: the queue's
// goroutines are then blocked on them. Stepping a fake clock while a goroutine sits between
// reading Now and arming a timer for a duration would arm it one step late.
func settle(t *testing.T, clk *testingclock.FakeClock, want int) {
	t.Helper()
	stable := 0
	for deadline := time.Now().Add(5 * time.Second); stable < 10; time.Sleep(500 * time.Microsecond) {
		if clk.Waiters() == want {
			stable++
		} else {
			stable = 0
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fake clock has %d waiters, want %d", clk.Waiters(), want)
		}
	}
}
