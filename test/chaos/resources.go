package chaos

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// InvResources is the invariant that the replicas' goroutines and live heap are back to their
// level before the soak once it has settled (ResourcesBackToLevel).
const InvResources = "resources-back-to-level"

// ReplicaResources is what one replica holds at one moment: its goroutines (go_goroutines of
// its /metrics) and its live heap (HeapAlloc right after a forced garbage collection: the
// heap profile of its --pprof-bind-address with gc=1). PID says which incarnation.
type ReplicaResources struct {
	Replica    string `json:"replica"`
	PID        int    `json:"pid"`
	Goroutines int    `json:"goroutines"`
	HeapBytes  int64  `json:"heapBytes"`
}

// Resources are every replica's ReplicaResources at one moment.
type Resources []ReplicaResources

// Goroutines is the sum over the replicas.
func (r Resources) Goroutines() int {
	n := 0
	for _, x := range r {
		n += x.Goroutines
	}
	return n
}

// HeapBytes is the sum over the replicas.
func (r Resources) HeapBytes() int64 {
	var n int64
	for _, x := range r {
		n += x.HeapBytes
	}
	return n
}

// The bounds of ResourcesBackToLevel, on the sums over the replicas. A tenant is served by one
// replica at a time, so the sums do not depend on which replica owns which tenant after the
// hand-overs, nor on whether a replica is the incarnation measured before (a restarted one is
// a new process that resumed the same work). The goroutines of a settled syncer are its
// workers and one set of informers per tenant and kind: a bound of a quarter (at least 50)
// passes HTTP/2 connections come and gone and catches one leaked tenant's informers per few
// faults. The live heap after holds the load's objects the heap before did not (the pools of
// load.go: a few hundred objects, cached by a tenant and the super informer, a few MiB), so its
// bound is half again plus 16 MiB: a leaked tenant cache per fault, or a queue that never
// drains, passes it within a soak.
const (
	GoroutineSlackFraction = 0.25
	GoroutineSlackMin      = 50
	HeapSlackFraction      = 0.5
	HeapSlackMinBytes      = 16 << 20
)

// ResourcesBackToLevel compares the replicas' resources after the settle with those before the
// faults (sums over the replicas, see the bounds) and returns a violation for each sum above
// its bound. Nothing is compared when either side is empty (not measured) or when they are not
// of the same replicas (a fault that scales the replicas: a replica serving no tenant runs
// goroutines of its own the other side has no figure for); SameReplicas tells.
func ResourcesBackToLevel(before, after Resources) []Violation {
	if len(before) == 0 || !SameReplicas(before, after) {
		return nil
	}
	var out []Violation
	objs := func() []string {
		var s []string
		for _, r := range before {
			s = append(s, fmt.Sprintf("before %s pid %d: %d goroutines, heap %.1f MiB", r.Replica, r.PID, r.Goroutines, mib(r.HeapBytes)))
		}
		for _, r := range after {
			s = append(s, fmt.Sprintf("after %s pid %d: %d goroutines, heap %.1f MiB", r.Replica, r.PID, r.Goroutines, mib(r.HeapBytes)))
		}
		return s
	}
	gb, ga := before.Goroutines(), after.Goroutines()
	if limit := gb + max(GoroutineSlackMin, int(GoroutineSlackFraction*float64(gb))); ga > limit {
		out = append(out, Violation{Invariant: InvResources, Key: "replicas/goroutines", Objects: objs(),
			Message: fmt.Sprintf("the replicas run %d goroutines after the settle, %d before the faults (bound %d)", ga, gb, limit)})
	}
	hb, ha := before.HeapBytes(), after.HeapBytes()
	if limit := hb + max(int64(HeapSlackMinBytes), int64(HeapSlackFraction*float64(hb))); ha > limit {
		out = append(out, Violation{Invariant: InvResources, Key: "replicas/heap", Objects: objs(),
			Message: fmt.Sprintf("the replicas' live heap is %.1f MiB after the settle, %.1f MiB before the faults (bound %.1f MiB)", mib(ha), mib(hb), mib(limit))})
	}
	return out
}

// SameReplicas reports whether a and b measured the same replicas (by ID, in any order).
func SameReplicas(a, b Resources) bool {
	if len(a) != len(b) {
		return false
	}
	ids := map[string]bool{}
	for _, r := range a {
		ids[r.Replica] = true
	}
	for _, r := range b {
		if !ids[r.Replica] {
			return false
		}
	}
	return true
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// resources measures every replica: a forced garbage collection and the live heap from its
// heap profile (/debug/pprof/heap?gc=1&debug=1, "# HeapAlloc = "), then go_goroutines from its
// /metrics. It retries each replica for up to a minute (one just started).
func (h *Harness) resources(ctx context.Context) (Resources, error) {
	var out Resources
	for _, r := range h.target.Replicas {
		if r.Pprof == "" {
			return nil, fmt.Errorf("%s: no pprof address", r.ID)
		}
		var rr ReplicaResources
		err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			heap, err := getText(ctx, "http://"+r.Pprof+"/debug/pprof/heap?gc=1&debug=1")
			if err != nil {
				return false, nil
			}
			metrics, err := getText(ctx, "http://"+r.Metrics+"/metrics")
			if err != nil {
				return false, nil
			}
			hb, ok1 := valueAfter(heap, "# HeapAlloc = ")
			g, ok2 := valueAfter(metrics, "go_goroutines ")
			if !ok1 || !ok2 {
				return false, nil
			}
			rr = ReplicaResources{Replica: r.ID, PID: r.PID(), Goroutines: int(g), HeapBytes: int64(hb)}
			return true, nil
		})
		if err != nil {
			return nil, fmt.Errorf("measuring %s: %w", r.ID, err)
		}
		out = append(out, rr)
	}
	return out, nil
}

// valueAfter returns the number that follows prefix at the start of a line of text.
func valueAfter(text, prefix string) (float64, bool) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}
