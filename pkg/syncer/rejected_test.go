package syncer

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// TestRejectedRequestWaitsForChange: a Pod the super cluster's Pod Security admission refused
// (reconcile.Report of the real error) is reconciled once and not retried on a timer (the
// queue holds no delayed retry of it once its reconcile is done); the next Add (the object's
// next change) reconciles it again. A SyncFailed Event is recorded each time, and no more.
// A barrier request, added after the refused one and handled by the same single worker, shows
// that the refused one's reconcile and the worker's handling of its error are over.
func TestRejectedRequestWaitsForChange(t *testing.T) {
	s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s.SetRegistry(tenant.NewRegistry(ctx, s))
	rec := record.NewFakeRecorder(100)
	c := &tenant.Cluster{Name: "t", Recorder: rec}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	refused := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p",
		errorString(`violates PodSecurity "restricted:latest": privileged (container "c" must not set securityContext.privileged=true)`))
	req := resources.Request{Tenant: "t", Kind: resources.KindPod, Namespace: "ns", Name: "p"}
	barrier := resources.Request{Tenant: "t", Kind: resources.KindPod, Namespace: "ns", Name: "barrier"}
	var calls atomic.Int32
	barrierDone := make(chan struct{}, 1)
	process := func(_ context.Context, r resources.Request, _ bool) error {
		if r == barrier {
			barrierDone <- struct{}{}
			return nil
		}
		calls.Add(1)
		return reconcile.Report(c, p, resources.KindPod, "create", refused)
	}
	q := newTestPipelineQueue(1)
	go s.workWith(ctx, q, true, process) // one worker: requests are handled one after another
	defer q.ShutDown()
	// round adds req, waits until it was reconciled want times in all, then passes the
	// barrier and checks that the queue holds nothing more of req: no retry on a timer.
	round := func(want int32) {
		t.Helper()
		q.addHigh(req)
		for deadline := time.Now().Add(5 * time.Second); calls.Load() < want; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("reconciled %d times, want %d", calls.Load(), want)
			}
		}
		q.addHigh(barrier)
		select {
		case <-barrierDone:
		case <-time.After(5 * time.Second):
			t.Fatal("the barrier request was never reconciled")
		}
		snap := q.Snapshot()
		if _, delayed := snap.Delayed[req]; delayed || slices.Contains(snap.Queued, req) || slices.Contains(snap.Processing, req) {
			t.Fatalf("after reconcile %d the queue still holds the refused request (delayed %v, queued %v, processing %v): retried on a timer",
				want, snap.Delayed, snap.Queued, snap.Processing)
		}
		if n := calls.Load(); n != want {
			t.Fatalf("reconciled %d times, want %d", n, want)
		}
	}
	round(1)
	round(2) // the next Add (the object's next change)
	// Report records the Event inside the reconcile, which the barrier shows is over.
	if n := len(rec.Events); n != 2 {
		t.Fatalf("%d SyncFailed Events, want 2", n)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
