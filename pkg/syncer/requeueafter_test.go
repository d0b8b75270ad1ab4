package syncer

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// TestRequeueAfterRunsAgain: a reconcile that returns resources.RequeueAfter (wrapped) is a
// success that the worker adds back after the delay it asks for: it is delayed in the queue
// (not retried with backoff) and reconciled again once the delay is over.
func TestRequeueAfterRunsAgain(t *testing.T) {
	s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s.SetRegistry(tenant.NewRegistry(ctx, s))
	req := resources.Request{Tenant: "t", Kind: resources.KindPodDisruptionBudget, Namespace: "ns", Name: "db"}
	var calls atomic.Int32
	process := func(_ context.Context, r resources.Request, _ bool) error {
		if calls.Add(1) == 1 {
			return fmt.Errorf("budget: %w", resources.RequeueAfter{After: 300 * time.Millisecond})
		}
		return nil
	}
	q := newTestPipelineQueue(1)
	go s.workWith(ctx, q, true, process)
	defer q.ShutDown()
	start := time.Now()
	q.addHigh(req)
	// The request sits in the queue's delayed set for its 300 ms (seen by polling every
	// millisecond, whatever the machine's speed), then runs again.
	sawDelayed := false
	for deadline := time.Now().Add(5 * time.Second); calls.Load() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("reconciled %d times, want 2 (requeued after 300ms)", calls.Load())
		}
		if _, delayed := q.Snapshot().Delayed[req]; delayed {
			sawDelayed = true
		}
	}
	if !sawDelayed {
		t.Fatal("the request was never delayed in the queue after a RequeueAfter")
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("reconciled again after %v, want about 300ms", d)
	}
}
