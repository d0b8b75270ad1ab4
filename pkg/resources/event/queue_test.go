package event

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vcsyncer/syncer/pkg/resources"
)

func evReq(tenant, name string) resources.Request {
	return resources.Request{Tenant: tenant, Kind: resources.KindEvent, Namespace: "apps", Name: name}
}

// drops records OnDrop calls as "tenant/type/reason".
type drops struct {
	mu  sync.Mutex
	got []string
}

func (d *drops) onDrop(tenant, typ, reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, tenant+"/"+typ+"/"+reason)
}

func (d *drops) list() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.got...)
}

// drain takes every request that may be written now (tokens allowing), marking each done.
func drain(q *Queue) []string {
	var out []string
	for {
		req, class, _, ok, _ := q.tryGet()
		if !ok {
			return out
		}
		out = append(out, class+":"+req.Name)
		q.Done(req, class, false)
	}
}

// TestBurstKeepsWarnings: a burst larger than the queue drops Normals, never a Warning while a
// Normal waits, and writes Warnings first.
func TestBurstKeepsWarnings(t *testing.T) {
	d := &drops{}
	q := NewQueue(QueueOptions{QPS: 1000, Burst: 1000, MaxPending: 4, OnDrop: d.onDrop})
	for i := range 4 {
		if !q.Add(evReq("a", fmt.Sprint("n", i)), TypeNormal) {
			t.Fatalf("Normal %d dropped below MaxPending", i)
		}
	}
	// The queue is full: each Warning takes the place of the oldest Normal.
	for i := range 3 {
		if !q.Add(evReq("a", fmt.Sprint("w", i)), TypeWarning) {
			t.Fatalf("Warning %d dropped while Normals wait", i)
		}
	}
	// A Normal arriving at a full queue is dropped itself.
	if q.Add(evReq("a", "n-late"), TypeNormal) {
		t.Error("Normal accepted into a full queue")
	}
	wantDrops := []string{"a/Normal/queueFull", "a/Normal/queueFull", "a/Normal/queueFull", "a/Normal/queueFull"}
	if diff := cmp.Diff(wantDrops, d.list()); diff != "" {
		t.Errorf("drops (-want +got):\n%s", diff)
	}
	want := []string{"Warning:w0", "Warning:w1", "Warning:w2", "Normal:n3"}
	if diff := cmp.Diff(want, drain(q)); diff != "" {
		t.Errorf("write order (-want +got):\n%s", diff)
	}
}

// TestFullOfWarnings: with no Normal left to drop, a Warning arriving at a full queue is
// dropped (and counted as a Warning).
func TestFullOfWarnings(t *testing.T) {
	d := &drops{}
	q := NewQueue(QueueOptions{MaxPending: 2, OnDrop: d.onDrop})
	q.Add(evReq("a", "w0"), TypeWarning)
	q.Add(evReq("a", "w1"), TypeWarning)
	if q.Add(evReq("a", "w2"), TypeWarning) {
		t.Error("Warning accepted into a queue full of Warnings")
	}
	if q.Add(evReq("a", "n0"), TypeNormal) {
		t.Error("Normal accepted into a queue full of Warnings")
	}
	if diff := cmp.Diff([]string{"a/Warning/queueFull", "a/Normal/queueFull"}, d.list()); diff != "" {
		t.Errorf("drops (-want +got):\n%s", diff)
	}
	// Another tenant's queue is its own.
	if !q.Add(evReq("b", "n0"), TypeNormal) {
		t.Error("tenant b's Event dropped because tenant a's queue is full")
	}
}

// TestRateLimitPerTenant: each tenant's writes are paced by its own bucket; a tenant over its
// burst waits (nothing is dropped) while other tenants are served.
func TestRateLimitPerTenant(t *testing.T) {
	now := time.Unix(1000, 0)
	d := &drops{}
	q := NewQueue(QueueOptions{QPS: 1, Burst: 2, OnDrop: d.onDrop, Now: func() time.Time { return now }})
	for i := range 5 {
		q.Add(evReq("a", fmt.Sprint("a", i)), TypeNormal)
	}
	q.Add(evReq("b", "b0"), TypeNormal)
	got := drain(q)
	want := []string{"Normal:a0", "Normal:b0", "Normal:a1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first writes (-want +got):\n%s", diff)
	}
	if _, _, wait, ok, _ := q.tryGet(); ok || wait <= 0 || wait > time.Second {
		t.Errorf("over the burst: ok=%v wait=%v, want a wait of at most 1s", ok, wait)
	}
	if n := q.Len("a"); n != 3 {
		t.Errorf("tenant a has %d waiting, want 3 (held, not dropped)", n)
	}
	now = now.Add(time.Second)
	if diff := cmp.Diff([]string{"Normal:a2"}, drain(q)); diff != "" {
		t.Errorf("after 1s (-want +got):\n%s", diff)
	}
	if len(d.list()) != 0 {
		t.Errorf("drops %v, want none", d.list())
	}
	// A Warning that arrives while Normals wait for tokens is written first.
	q.Add(evReq("a", "w"), TypeWarning)
	now = now.Add(time.Second)
	if diff := cmp.Diff([]string{"Warning:w"}, drain(q)); diff != "" {
		t.Errorf("Warning behind waiting Normals (-want +got):\n%s", diff)
	}
	q.Forget("a")
	if n := q.Len("a"); n != 0 {
		t.Errorf("Forget left %d waiting", n)
	}
}

// TestCoalesce: changes of an Event that waits, or is being written, give one more write, not
// one per change; a Warning moves a waiting Normal of the same name up.
func TestCoalesce(t *testing.T) {
	q := NewQueue(QueueOptions{})
	for range 3 {
		q.Add(evReq("a", "x"), TypeNormal)
	}
	q.Add(evReq("a", "y"), TypeNormal)
	q.Add(evReq("a", "y"), TypeWarning)
	if n := q.Len("a"); n != 2 {
		t.Fatalf("%d waiting, want 2", n)
	}
	req, class, _, ok, _ := q.tryGet()
	if !ok || req.Name != "y" || class != TypeWarning {
		t.Fatalf("first = %v %s %v, want the upgraded Warning y", req, class, ok)
	}
	// Added twice while being written: held until Done, then queued once.
	q.Add(req, TypeWarning)
	q.Add(req, TypeWarning)
	if diff := cmp.Diff([]string{"Normal:x"}, drain(q)); diff != "" {
		t.Errorf("while y is processed (-want +got):\n%s", diff)
	}
	q.Done(req, class, false)
	if diff := cmp.Diff([]string{"Warning:y"}, drain(q)); diff != "" {
		t.Errorf("after Done (-want +got):\n%s", diff)
	}
}

// TestRetryThenDrop: a failed write is retried MaxRetries times, then dropped and counted.
func TestRetryThenDrop(t *testing.T) {
	d := &drops{}
	q := NewQueue(QueueOptions{MaxRetries: 2, RetryBase: time.Millisecond, OnDrop: d.onDrop})
	defer q.ShutDown()
	q.Add(evReq("a", "w"), TypeWarning)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 3 {
		req, class, ok := q.Get(ctx)
		if !ok || req.Name != "w" || class != TypeWarning {
			t.Fatalf("attempt %d: Get = %v %s %v", i, req, class, ok)
		}
		q.Done(req, class, true)
	}
	if diff := cmp.Diff([]string{"a/Warning/failed"}, d.list()); diff != "" {
		t.Errorf("drops (-want +got):\n%s", diff)
	}
	if n := q.Len("a"); n != 0 {
		t.Errorf("%d waiting after the last retry, want 0", n)
	}
}

// TestGetWakesOnAdd: a worker blocked in Get takes a request added later, and returns when
// the queue shuts down.
func TestGetWakesOnAdd(t *testing.T) {
	q := NewQueue(QueueOptions{})
	got := make(chan resources.Request)
	go func() {
		for {
			req, class, ok := q.Get(context.Background())
			if !ok {
				close(got)
				return
			}
			q.Done(req, class, false)
			got <- req
		}
	}()
	q.Add(evReq("a", "x"), TypeNormal)
	if r := <-got; r.Name != "x" {
		t.Errorf("got %v", r)
	}
	q.ShutDown()
	if _, open := <-got; open {
		t.Error("Get returned a request after ShutDown")
	}
	if q.Add(evReq("a", "y"), TypeNormal) {
		t.Error("Add accepted after ShutDown")
	}
}

// TestBusyHoldsNormals: while the syncer's other work waits, Normals wait (up to
// NormalMaxDelay) and Warnings do not.
func TestBusyHoldsNormals(t *testing.T) {
	now := time.Unix(1000, 0)
	busy := true
	q := NewQueue(QueueOptions{NormalMaxDelay: 10 * time.Second, BusyPoll: time.Second,
		Busy: func() bool { return busy }, Now: func() time.Time { return now }})
	q.Add(evReq("a", "n0"), TypeNormal)
	q.Add(evReq("a", "w0"), TypeWarning)
	if diff := cmp.Diff([]string{"Warning:w0"}, drain(q)); diff != "" {
		t.Errorf("busy (-want +got):\n%s", diff)
	}
	if _, _, wait, ok, _ := q.tryGet(); ok || wait != time.Second {
		t.Errorf("busy with a Normal waiting: ok=%v wait=%v, want a poll after 1s", ok, wait)
	}
	now = now.Add(10 * time.Second)
	if diff := cmp.Diff([]string{"Normal:n0"}, drain(q)); diff != "" {
		t.Errorf("after NormalMaxDelay (-want +got):\n%s", diff)
	}
	q.Add(evReq("a", "n1"), TypeNormal)
	if got := drain(q); len(got) != 0 {
		t.Errorf("busy: %v written", got)
	}
	busy = false
	if diff := cmp.Diff([]string{"Normal:n1"}, drain(q)); diff != "" {
		t.Errorf("idle (-want +got):\n%s", diff)
	}
}

// TestSlowTenantHoldsOneWorker: while another tenant has Events waiting, a tenant whose write
// is still in flight (its apiserver answers slowly) gets no second worker.
func TestSlowTenantHoldsOneWorker(t *testing.T) {
	q := NewQueue(QueueOptions{QPS: 1000, Burst: 1000})
	for i := range 3 {
		q.Add(evReq("slow", fmt.Sprint("s", i)), TypeWarning)
		q.Add(evReq("fast", fmt.Sprint("f", i)), TypeWarning)
	}
	held, _, _, ok, _ := q.tryGet() // a worker blocks on the slow tenant's write
	if !ok || held.Tenant != "slow" {
		t.Fatalf("first request %v (ok %v), want the slow tenant's", held, ok)
	}
	var got []string
	for range 3 { // the other worker
		req, class, _, ok, _ := q.tryGet()
		if !ok {
			break
		}
		got = append(got, req.Tenant+"/"+req.Name)
		q.Done(req, class, false)
	}
	if want := []string{"fast/f0", "fast/f1", "fast/f2"}; !cmp.Equal(got, want) {
		t.Errorf("beside a slow write in flight the other worker wrote %v, want %v", got, want)
	}
	// Alone, the slow tenant may use every worker (work-conserving).
	if req, _, _, ok, _ := q.tryGet(); !ok || req.Tenant != "slow" {
		t.Errorf("with no other tenant waiting, got %v (ok %v), want the slow tenant's next Event", req, ok)
	}
}
