package trackingqueue

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/vcsyncer/syncer/pkg/fairqueue"
)

// TestCrashConsistency is the concurrent crash-consistency test of design 4.9 item 2: producers
// and workers on the real clock, snapshots ("crashes") at random moments and one after
// ShutDown, each checked against logical sequence numbers taken around every add call, at
// every pop and around every Done. Run it with -race.
func TestCrashConsistency(t *testing.T) {
	seeds := 200
	if testing.Short() {
		seeds = 40
	}
	var total crashResult
	for seed := range uint64(seeds) {
		res := crashRun(seed, 0)
		if len(res.violations) > 0 {
			t.Fatalf("seed %d: %d violations, first: %s", seed, len(res.violations), res.violations[0])
		}
		total.obligations += res.obligations
		total.reconciles += res.reconciles
		total.snapshots += res.snapshots
	}
	t.Logf("%d seeds: %d add calls, %d reconciles, %d snapshots checked", seeds, total.obligations, total.reconciles, total.snapshots)
	if total.reconciles < 10*seeds || total.snapshots < 3*seeds {
		t.Fatalf("the runs did too little to check anything")
	}
}

// obligation is one add call: Add, AddAfter or AddRateLimited.
type obligation struct {
	item   int
	a0, a1 uint64        // sequence numbers taken just before the call and just after it returned
	w0     time.Time     // wall time just before the call
	delay  time.Duration // lower bound of the requested delay; 0 for a plain add
}

// reconcileRec is one hand-out of an item to a worker.
type reconcileRec struct {
	item      int
	pop       uint64    // sequence number taken inside Pop, under client-go's lock
	popWall   time.Time // wall time inside Pop
	doneStart uint64    // sequence number taken just before Done; 0 while not done
}

// snapRec is one snapshot and the sequence numbers around it.
type snapRec struct {
	s0, s1 uint64
	items  map[int]struct{}
	snap   Snapshot[int]
}

// seqStorage is the base storage: a FIFO that records the sequence number and time of each
// pop, inside client-go's lock.
type seqStorage struct {
	workqueue.Queue[int]
	seq *atomic.Uint64

	mu      sync.Mutex
	lastPop map[int]reconcileRec
}

func (s *seqStorage) Pop() int {
	x := s.Queue.Pop()
	r := reconcileRec{item: x, pop: s.seq.Add(1), popWall: time.Now()}
	s.mu.Lock()
	s.lastPop[x] = r
	s.mu.Unlock()
	return x
}

type crashResult struct {
	violations                         []string
	obligations, reconciles, snapshots int
}

const (
	crashItems     = 6
	crashRunFor    = 12 * time.Millisecond
	crashLimitBase = 300 * time.Microsecond
)

// crashRun runs one seed: 2 producers and 2 workers for about crashRunFor, a snapshotter, then
// ShutDown while producers still add, then a final snapshot. It returns the violations of I1.
func crashRun(seed uint64, bugs bug) crashResult {
	var seq atomic.Uint64
	rnd := rand.New(rand.NewPCG(seed, 0x5eed))
	// Odd seeds run over the per-tenant fair queue (item mod 3 is its tenant), even ones over
	// client-go's FIFO.
	var base = workqueue.DefaultQueue[int]()
	if seed%2 == 1 {
		base = fairqueue.New(fairqueue.Options[int]{TenantOf: func(x int) string { return strconv.Itoa(x % 3) }})
	}
	store := &seqStorage{Queue: base, seq: &seq, lastPop: map[int]reconcileRec{}}
	k := &knobs{bugs: bugs, yield: func(p string) {
		// Widen the windows between the steps of Add, Done and AddAfter, so that snapshots
		// land inside them.
		if p == pointDone && rand.IntN(3) == 0 {
			time.Sleep(20 * time.Microsecond)
		} else {
			runtime.Gosched()
		}
	}}
	q := newQueue(Config[int]{
		RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[int](crashLimitBase, 2*time.Millisecond),
		Storage:     store,
	}, k)

	var (
		mu         sync.Mutex
		obls       []obligation
		recs       []*reconcileRec
		snaps      []snapRec
		stopAdding atomic.Bool
		stopSnaps  atomic.Bool
	)
	record := func(o obligation) {
		mu.Lock()
		obls = append(obls, o)
		mu.Unlock()
	}
	call := func(item int, delay time.Duration, f func()) {
		o := obligation{item: item, delay: delay, a0: seq.Add(1), w0: time.Now()}
		f()
		o.a1 = seq.Add(1)
		record(o)
	}
	takeSnapshot := func() {
		s := snapRec{s0: seq.Add(1)}
		s.snap = q.Snapshot()
		s.s1 = seq.Add(1)
		s.items = s.snap.items()
		mu.Lock()
		snaps = append(snaps, s)
		mu.Unlock()
	}

	var producers, workers, snapper sync.WaitGroup
	for p := range 2 {
		r := rand.New(rand.NewPCG(seed, uint64(p)))
		producers.Go(func() {
			for !stopAdding.Load() {
				x := r.IntN(crashItems)
				switch n := r.IntN(10); {
				case n < 5:
					call(x, 0, func() { q.Add(x) })
				case n < 8:
					d := time.Duration(r.IntN(2000)) * time.Microsecond
					call(x, d, func() { q.AddAfter(x, d) })
				default:
					call(x, crashLimitBase, func() { q.AddRateLimited(x) })
				}
				if r.IntN(4) == 0 {
					time.Sleep(time.Duration(r.IntN(100)) * time.Microsecond)
				}
			}
		})
	}
	for w := range 2 {
		r := rand.New(rand.NewPCG(seed, 100+uint64(w)))
		workers.Go(func() {
			for {
				x, shutdown := q.Get()
				if shutdown {
					return
				}
				store.mu.Lock()
				rec := store.lastPop[x]
				store.mu.Unlock()
				mu.Lock()
				recs = append(recs, &rec)
				mu.Unlock()
				if d := r.IntN(60); d < 30 {
					time.Sleep(time.Duration(d) * time.Microsecond)
				} else {
					runtime.Gosched()
				}
				if r.IntN(4) == 0 {
					call(x, crashLimitBase, func() { q.AddRateLimited(x) })
				} else {
					q.Forget(x)
				}
				ds := seq.Add(1)
				mu.Lock()
				rec.doneStart = ds
				mu.Unlock()
				q.Done(x)
			}
		})
	}
	snapper.Go(func() {
		r := rand.New(rand.NewPCG(seed, 200))
		for !stopSnaps.Load() {
			time.Sleep(time.Duration(r.IntN(300)) * time.Microsecond)
			takeSnapshot()
		}
	})

	time.Sleep(crashRunFor + time.Duration(rnd.IntN(4000))*time.Microsecond)
	// On a loaded machine the goroutines may not have run yet: give them up to 2 s to do some
	// work before the shutdown, so every seed checks something.
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		mu.Lock()
		enough := len(recs) >= 10 && len(snaps) >= 3
		mu.Unlock()
		if enough {
			break
		}
	}
	q.ShutDown() // producers still add for a while: those adds become orphans or windows
	time.Sleep(time.Duration(rnd.IntN(2000)) * time.Microsecond)
	stopAdding.Store(true)
	producers.Wait()
	workers.Wait()
	stopSnaps.Store(true)
	snapper.Wait()
	takeSnapshot() // the state a final checkpoint would save

	return crashResult{
		violations:  checkCrash(obls, recs, snaps),
		obligations: len(obls),
		reconciles:  len(recs),
		snapshots:   len(snaps),
	}
}

// checkCrash checks every snapshot S (taken between sequence numbers s0 and s1):
//
//   - an add call that returned before S started (a1 < s0) is in S, or covered by a reconcile of
//     its item that was popped after the call started (pop > a0), at or after the requested
//     delay (popWall >= w0+delay), and whose Done started before S ended (doneStart < s1);
//   - a reconcile popped before S started (pop < s0) whose Done had not started when S ended
//     (doneStart > s1 or never) is in S.
//
// Both rules hold for a correct queue whatever the interleaving, because sequence numbers are
// taken on both sides of each call (one side only gives false failures).
func checkCrash(obls []obligation, recs []*reconcileRec, snaps []snapRec) []string {
	byItem := map[int][]*reconcileRec{}
	for _, r := range recs {
		byItem[r.item] = append(byItem[r.item], r)
	}
	for _, rs := range byItem {
		sort.Slice(rs, func(i, j int) bool { return rs[i].pop < rs[j].pop })
	}
	never := ^uint64(0)
	doneAt := func(r *reconcileRec) uint64 {
		if r.doneStart == 0 {
			return never
		}
		return r.doneStart
	}
	var out []string
	for _, s := range snaps {
		for _, o := range obls {
			if o.a1 >= s.s0 {
				continue
			}
			if _, ok := s.items[o.item]; ok {
				continue
			}
			covered := false
			for _, r := range byItem[o.item] {
				if r.pop > o.a0 && !r.popWall.Before(o.w0.Add(o.delay)) {
					covered = doneAt(r) < s.s1
					break // later reconciles of the item start their Done later still
				}
			}
			if !covered {
				out = append(out, fmt.Sprintf("add of item %d (seq %d..%d, delay %s) returned before the snapshot (seq %d..%d) but is neither in it nor covered by a reconcile; snapshot %+v",
					o.item, o.a0, o.a1, o.delay, s.s0, s.s1, s.snap))
			}
		}
		for _, r := range recs {
			if r.pop < s.s0 && doneAt(r) > s.s1 {
				if _, ok := s.items[r.item]; !ok {
					out = append(out, fmt.Sprintf("item %d popped at seq %d, Done not started by seq %d, missing from the snapshot %+v", r.item, r.pop, s.s1, s.snap))
				}
			}
		}
	}
	return out
}
