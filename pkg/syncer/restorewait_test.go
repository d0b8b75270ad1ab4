package syncer

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/resources"
)

// slowStore is a checkpoint store whose Load waits until release is closed and finds nothing.
type slowStore struct{ release chan struct{} }

func (s slowStore) Load(ctx context.Context) ([]byte, error) {
	select {
	case <-s.release:
	case <-ctx.Done():
	}
	return nil, nil
}
func (slowStore) Save(context.Context, []byte) error { return nil }
func (slowStore) String() string                     { return "slow:" }

// A tenant whose Cluster connects while the warm-up is still reading the checkpoint waits for
// the restore (awaitRestore, from Registry.Restored and ClusterStarting) before it counts its
// objects or starts its informers, instead of starting cold; without a checkpoint store, or
// before any warm-up began, nothing waits.
func TestTenantsWaitForTheRestore(t *testing.T) {
	store := slowStore{release: make(chan struct{})}
	s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1,
		Checkpoint: CheckpointOptions{Store: store, Holder: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	returned := func() <-chan struct{} {
		ch := make(chan struct{})
		go func() { s.awaitRestore(); close(ch) }()
		return ch
	}
	select {
	case <-returned():
	case <-time.After(5 * time.Second):
		t.Fatal("awaitRestore waited although no warm-up has begun")
	}

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	warmDone := make(chan error, 1)
	go func() { warmDone <- s.warm(ctx) }()
	for !s.warmth.begun.Load() {
		time.Sleep(time.Millisecond)
	}
	waiting := returned()
	select {
	case <-waiting:
		t.Fatal("a tenant went on while the checkpoint was still being read")
	case <-time.After(200 * time.Millisecond):
	}
	close(store.release)
	select {
	case <-waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("a tenant still waits after the checkpoint was restored")
	}
	cancel()
	t.Logf("warm-up ended by the cancel: %v", <-warmDone)

	off, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	off.warmth.begun.Store(true)
	done := make(chan struct{})
	go func() { off.awaitRestore(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("awaitRestore waited without a checkpoint store")
	}
}

// A kind the syncer could sync and does not (an opt-in kind not opted in, a disabled kind) is
// counted as 0 without a LIST before a tenant's informers start; a synced kind is not.
func TestUnsyncedKindsAreNotCounted(t *testing.T) {
	for _, tc := range []struct {
		optIn, disabled []resources.Kind
		kind            resources.Kind
		skipped         bool
	}{
		{kind: resources.KindIngress, skipped: true},
		{optIn: []resources.Kind{resources.KindIngress}, kind: resources.KindIngress, skipped: false},
		{disabled: []resources.Kind{resources.KindEvent}, kind: resources.KindEvent, skipped: true},
		{kind: resources.KindEvent, skipped: false},
		{kind: resources.KindConfigMap, skipped: false},
	} {
		s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1, OptInKinds: tc.optIn, DisabledKinds: tc.disabled})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.skipsKind(tc.kind); got != tc.skipped {
			t.Errorf("opt-in %v, disabled %v: skipsKind(%s) = %v, want %v", tc.optIn, tc.disabled, tc.kind, got, tc.skipped)
		}
	}
}
