package resume

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/checkpoint/trackingqueue"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/vnode"
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
// the restore (AwaitRestore, from Registry.Restored and ClusterStarting) before it counts its
// objects or starts its informers, instead of starting cold; without a checkpoint store, or
// before any warm-up began, nothing waits.
func TestTenantsWaitForTheRestore(t *testing.T) {
	store := slowStore{release: make(chan struct{})}
	s, err := New(testConfig(Options{Store: store, Holder: "test"}))
	if err != nil {
		t.Fatal(err)
	}
	returned := func() <-chan struct{} {
		ch := make(chan struct{})
		go func() { s.AwaitRestore(); close(ch) }()
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
	go func() { warmDone <- s.Warm(ctx) }()
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

	off, err := New(testConfig(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	off.warmth.begun.Store(true)
	done := make(chan struct{})
	go func() { off.AwaitRestore(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("awaitRestore waited without a checkpoint store")
	}
}

// testConfig is a Config of o over empty pipelines and a fake super cluster whose informers
// sync at once.
func testConfig(o Options) Config {
	return Config{Options: o, Super: fake.NewClientset(), Sources: source.NewRegistry(), Schema: 1, VNodes: vnode.NewBindings(),
		Pipelines: Pipelines{
			Snapshots: func() (down, up trackingqueue.Snapshot[resources.Request]) { return down, up },
			Size:      func() int { return 0 },
		},
		StartSuper: func(context.Context) error { return nil },
	}
}
