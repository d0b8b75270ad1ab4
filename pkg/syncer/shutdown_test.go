package syncer

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resume"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// TestReconcileCutByShutdownStaysInCheckpoint: a reconcile that fails because the syncer is
// stopping (SIGTERM: Start's context is cancelled, then the queues are shut down, then the
// final checkpoint is written) leaves its request in the queue's snapshot, which the final
// checkpoint saves. Its object's change was acked in the tenant Source when it was enqueued,
// so a resume from that checkpoint does not enqueue it again: a request forgotten here is
// lost for good (the chaos soak, seed 1: a super Pod kept the labels of an old version of its
// tenant Pod until the end of the run).
//
// Both orders of Start's shutdown are covered: the reconcile returns before the queue is shut
// down, or after.
func TestReconcileCutByShutdownStaysInCheckpoint(t *testing.T) {
	cases := map[string]struct {
		returnAfterShutDown bool
	}{
		"reconcile returns before the queue shuts down": {},
		"reconcile returns after the queue shut down":   {returnAfterShutDown: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			s.SetRegistry(tenant.NewRegistry(t.Context(), s))
			req := resources.Request{Tenant: "t", Kind: resources.KindPod, Namespace: "chaos-a", Name: "pod-5"}
			started, shut, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
			process := func(pctx context.Context, _ resources.Request, _ bool) error {
				close(started)
				<-pctx.Done() // a write to the super apiserver, cut by the cancelled context
				if tc.returnAfterShutDown {
					<-shut
				}
				defer close(returned)
				return fmt.Errorf("failed to patch super Pod: %w", pctx.Err())
			}
			q := s.down // the queue SnapshotQueues (the final checkpoint's queue part) reads
			done := make(chan struct{})
			go func() {
				defer close(done)
				s.workWith(ctx, q, true, process)
			}()
			q.addHigh(req)
			waitClosed(t, started, "the reconcile to start")
			cancel()
			if !tc.returnAfterShutDown {
				waitClosed(t, returned, "the reconcile to return")
			}
			q.ShutDown()
			close(shut)
			waitClosed(t, done, "the worker to stop")
			data, n, err := s.SnapshotQueues()
			if err != nil {
				t.Fatal(err)
			}
			items, err := resume.DecodeQueueItems(data)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(items, func(it resume.QueueItem) bool { return it.Req == req && it.Down }) {
				t.Fatalf("the request cut by the shutdown is not in the final checkpoint's queues (%d items: %+v; queue %+v)", n, items, q.Snapshot())
			}
		})
	}
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}
