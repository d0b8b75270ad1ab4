package checkpoint

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
)

// memStore is an in-memory Store.
type memStore struct {
	mu    sync.Mutex
	data  []byte
	saves int
}

func (m *memStore) Load(context.Context) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.data, nil
}

func (m *memStore) Save(_ context.Context, b []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.data, m.saves = append([]byte(nil), b...), m.saves+1
	return nil
}

func (m *memStore) String() string { return "mem" }

// fakeQueues records the order of calls into a shared log.
type fakeQueues struct {
	size  int
	items int
	data  string // the snapshot; "q" when empty
	log   *[]string
}

func (q *fakeQueues) QueueSize() int { return q.size }

func (q *fakeQueues) SnapshotQueues() ([]byte, int, error) {
	*q.log = append(*q.log, "queues")
	if q.data == "" {
		return []byte("q"), q.items, nil
	}
	return []byte(q.data), q.items, nil
}

type fakeExtra struct {
	data     string
	restored string
	log      *[]string
}

func (x *fakeExtra) Name() string { return "x" }

func (x *fakeExtra) Checkpoint(context.Context) ([]byte, error) {
	*x.log = append(*x.log, "extras")
	return []byte(x.data), nil
}

func (x *fakeExtra) Restore(_ context.Context, b []byte) error {
	x.restored = string(b)
	return nil
}

func newTestCheckpointer(t *testing.T, st Store, q Queues, x Checkpointable, config string, reg *source.Registry) *Checkpointer {
	t.Helper()
	c, err := New(Options{Store: st, Sources: reg, Queues: q, Extras: []Checkpointable{x}, Schema: 1, Config: config, MaxItems: 10})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSaveLoadRoundTrip checks the order of a checkpoint (sources, then queues, then extra
// state: checkpointing.md 4.6), and that Load and Restore give the state back.
func TestSaveLoadRoundTrip(t *testing.T) {
	var log []string
	reg := source.NewRegistry()
	reg.OnMode = func(string, string) {}
	reg.Source("tenant/a/Pod").Ack("ns/p", source.ObjectVersion{UID: "u", ResourceVersion: "7"})
	st := &memStore{}
	q := &fakeQueues{size: 3, items: 3, log: &log}
	x := &fakeExtra{data: "bindings", log: &log}
	c := newTestCheckpointer(t, st, q, x, "v1", reg)
	if err := c.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Join(log, ",") != "queues,extras" {
		t.Errorf("checkpoint order %v, want queues then extras (sources are read first, by Save itself)", log)
	}
	cp := c.Load(context.Background())
	if cp == nil {
		t.Fatal("Load returned no checkpoint after a Save")
	}
	if string(cp.Queues) != "q" || cp.QueueItems != 3 || len(cp.Sources) != 1 || cp.Sources[0].Acked["ns/p"].ResourceVersion != "7" {
		t.Errorf("loaded checkpoint = %+v", cp)
	}
	reg2 := source.NewRegistry()
	x2 := &fakeExtra{log: &log}
	c2 := newTestCheckpointer(t, st, q, x2, "v1", reg2)
	c2.Restore(context.Background(), c2.Load(context.Background()))
	if x2.restored != "bindings" {
		t.Errorf("extra state restored as %q, want bindings", x2.restored)
	}
	src, ok := reg2.Lookup("tenant/a/Pod")
	if !ok {
		t.Fatal("source not restored")
	}
	if _, vanished := src.Diff(nil, nil, nil); len(vanished) != 1 {
		t.Errorf("restored ack map %v, want ns/p", vanished)
	}
}

// TestSkipOverBudget checks that a checkpoint is skipped, and the previous one kept, while the
// queues hold more than MaxItems.
func TestSkipOverBudget(t *testing.T) {
	var log []string
	st := &memStore{}
	q := &fakeQueues{size: 2, items: 2, log: &log}
	c := newTestCheckpointer(t, st, q, &fakeExtra{log: &log}, "v1", source.NewRegistry())
	if err := c.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	first := append([]byte(nil), st.data...)
	q.size, q.items = 11, 11
	if err := c.Save(context.Background()); !errors.Is(err, ErrSkipped) {
		t.Fatalf("Save over budget = %v, want ErrSkipped", err)
	}
	// Size() is an upper bound; the snapshot itself is also checked.
	q.size, q.items = 5, 11
	if err := c.Save(context.Background()); !errors.Is(err, ErrSkipped) {
		t.Fatalf("Save with a snapshot over budget = %v, want ErrSkipped", err)
	}
	if st.saves != 1 || string(st.data) != string(first) {
		t.Errorf("store written %d times; a skipped checkpoint must keep the previous one", st.saves)
	}
}

// TestLoadDiscards checks that a checkpoint of other options, or an undecodable one, leads
// to a cold start.
func TestLoadDiscards(t *testing.T) {
	var log []string
	st := &memStore{}
	q := &fakeQueues{log: &log}
	if err := newTestCheckpointer(t, st, q, &fakeExtra{log: &log}, "v1", source.NewRegistry()).Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	if cp := newTestCheckpointer(t, st, q, &fakeExtra{log: &log}, "v2", source.NewRegistry()).Load(context.Background()); cp != nil {
		t.Error("a checkpoint of other options was used")
	}
	st.data = []byte("garbage")
	if cp := newTestCheckpointer(t, st, q, &fakeExtra{log: &log}, "v1", source.NewRegistry()).Load(context.Background()); cp != nil {
		t.Error("an undecodable checkpoint was used")
	}
	st.data = nil
	if cp := newTestCheckpointer(t, st, q, &fakeExtra{log: &log}, "v1", source.NewRegistry()).Load(context.Background()); cp != nil {
		t.Error("no checkpoint, yet Load returned one")
	}
}

// TestSaveKeepsAnUnchangedCheckpoint checks that Save does not write a checkpoint that would
// hold what the stored one holds (the same ack maps, queue items and extra state), counts it
// as taken now, and writes again after any change or once UnchangedRefresh has passed.
func TestSaveKeepsAnUnchangedCheckpoint(t *testing.T) {
	var log []string
	reg := source.NewRegistry()
	reg.OnMode = func(string, string) {}
	src := reg.Source("tenant/a/Pod")
	src.Ack("ns/p", source.ObjectVersion{UID: "u", ResourceVersion: "7"})
	st := &memStore{}
	q := &fakeQueues{size: 1, items: 1, log: &log}
	x := &fakeExtra{data: "bindings", log: &log}
	c := newTestCheckpointer(t, st, q, x, "v1", reg)
	ctx := context.Background()
	save := func(step string, wantSaves int) {
		t.Helper()
		before := c.LastSuccess()
		if err := c.Save(ctx); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if st.saves != wantSaves {
			t.Errorf("%s: store written %d times, want %d", step, st.saves, wantSaves)
		}
		if !c.LastSuccess().After(before) {
			t.Errorf("%s: LastSuccess stayed at %v", step, before)
		}
	}
	save("first save", 1)
	save("nothing changed", 1)
	src.Ack("ns/p", source.ObjectVersion{UID: "u", ResourceVersion: "8"})
	save("an ack entry changed", 2)
	save("nothing changed again", 2)
	q.data = "q2"
	save("the queues changed", 3)
	q.items = 2
	save("the number of queue items changed", 4)
	x.data = "other bindings"
	save("the extra state changed", 5)
	reg.Source("tenant/b/Pod")
	save("a source was added", 6)
	c.written = c.written.Add(-UnchangedRefresh)
	save("unchanged for UnchangedRefresh", 7)
	save("unchanged since the refresh", 7)
	cp := c.Load(ctx)
	if cp == nil || string(cp.Queues) != "q2" || cp.Extras["x"] == nil || string(cp.Extras["x"]) != "other bindings" || len(cp.Sources) != 2 {
		t.Errorf("stored checkpoint = %+v, want the last state", cp)
	}
}
