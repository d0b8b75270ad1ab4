package sharding

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// clock is a settable clock shared by the memberships of one test. It counts the recomputes
// that read it (recompute reads the clock first).
type clock struct {
	mu         sync.Mutex
	now        time.Time
	recomputes atomic.Int64
}

// recomputed waits until a ring recompute that started after the call has finished: two more
// recomputes started (one goroutine runs them one after the other, every second).
func (c *clock) recomputed(t *testing.T) {
	t.Helper()
	n := c.recomputes.Load()
	eventually(t, "a recompute", func() bool { return c.recomputes.Load() >= n+2 })
}

func (c *clock) Now() time.Time {
	pc := make([]uintptr, 1)
	if runtime.Callers(2, pc) == 1 {
		if f, _ := runtime.CallersFrames(pc).Next(); strings.HasSuffix(f.Function, ".recompute") {
			c.recomputes.Add(1)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A shard whose Lease is not renewed drops out of the others' ring only after the Lease
// duration, and stops owning anything itself earlier (Valid turns false before the others may
// take its tenants).
func TestMembershipExpiryAndFence(t *testing.T) {
	cs := fake.NewClientset()
	clk := &clock{now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	a, err := New(Options{Client: cs, Namespace: "ns", ID: "a", LeaseDuration: 15 * time.Second, RenewInterval: 5 * time.Second, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = a.Run(ctx) }()
	eventually(t, "a's first renewal", func() bool {
		_, err := cs.CoordinationV1().Leases("ns").Get(ctx, LeaseName("a"), metav1.GetOptions{})
		return err == nil
	})
	clk.recomputed(t)
	if _, known := a.Owner("tenant-1"); known {
		t.Error("a tells owners before one renew interval passed since it joined (peers started with it may not have their Leases yet)")
	}
	clk.add(5 * time.Second)
	eventually(t, "a alone on its ring", func() bool {
		o, ok := a.Owner("tenant-1")
		return ok && o == "a"
	})
	// Shard b's Lease, renewed now by b.
	renew := func(at time.Time) {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: LeaseName("b"), Namespace: "ns", Labels: map[string]string{LabelRing: DefaultRing}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("b"), LeaseDurationSeconds: ptr.To(int32(15)), RenewTime: &metav1.MicroTime{Time: at}}}
		if _, err := cs.CoordinationV1().Leases("ns").Create(ctx, l, metav1.CreateOptions{}); err != nil {
			if _, err := cs.CoordinationV1().Leases("ns").Update(ctx, l, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	renew(clk.Now())
	eventually(t, "b joins a's ring", func() bool { return len(a.Shards()) == 2 })
	if !a.Live("b") {
		t.Error("b not live right after its renewal")
	}
	clk.add(14 * time.Second)
	clk.recomputed(t)
	if !a.Live("b") || !slices.Contains(a.Shards(), "b") {
		t.Errorf("b left the ring %s after its last renewal, before its 15s Lease expired: %v", 14*time.Second, a.Shards())
	}
	// a renewed once, 19 s ago (the next renewal is 5 s of real time away): past 15s − 5s it is not valid.
	if a.Owns("tenant-1") {
		t.Error("a owns a tenant although its own Lease was not renewed in time")
	}
	clk.add(2 * time.Second)
	eventually(t, "b expires from a's view", func() bool { return !a.Live("b") })
}

func TestNewValidates(t *testing.T) {
	cs := fake.NewClientset()
	for _, o := range []Options{
		{Client: cs, Namespace: "ns", ID: "Bad_ID"},
		{Client: cs, ID: "a"},
		{Client: cs, Namespace: "ns", ID: "a", LeaseDuration: 5 * time.Second, RenewInterval: 2 * time.Second},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) = nil error", o)
		}
	}
	if got := SanitizeID("VM_1234.Example"); got != "vm-1234.example" {
		t.Errorf("SanitizeID = %q", got)
	}
}
