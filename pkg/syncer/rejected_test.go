package syncer

import (
	"context"
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
// (reconcile.Report of the real error) is reconciled once and not retried on a timer (backoff
// would retry it after 100, 200, 400 ms); the next Add (the object's next change) reconciles
// it again. A SyncFailed Event is recorded each time.
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
	var calls atomic.Int32
	process := func(context.Context, resources.Request, bool) error {
		calls.Add(1)
		return reconcile.Report(c, p, resources.KindPod, "create", refused)
	}
	q := newTestPipelineQueue(1)
	go s.workWith(ctx, q, true, process)
	defer q.ShutDown()
	req := resources.Request{Tenant: "t", Kind: resources.KindPod, Namespace: "ns", Name: "p"}
	q.addHigh(req)
	time.Sleep(800 * time.Millisecond)
	if n := calls.Load(); n != 1 {
		t.Fatalf("reconciled %d times in 800ms, want 1 (no retry on a timer)", n)
	}
	q.addHigh(req)
	deadline := time.Now().Add(5 * time.Second)
	for calls.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("after a new Add reconciled %d times, want 2", n)
	}
	// The Event is recorded after process is entered (calls counts entries), so wait for it
	// rather than reading the channel's length at once.
	for len(rec.Events) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if len(rec.Events) != 2 {
		t.Fatalf("%d SyncFailed Events, want 2", len(rec.Events))
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
