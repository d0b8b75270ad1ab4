package syncer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/retry"
)

// TestWorkLoopRetryVisible: a reconcile failing with a Conflict is logged at the default level
// (once: later retries within the minute are suppressed), counted by reason in
// vcsyncer_sync_retries_total, and listed among the hot requests once retried more than
// retry.HotRetries times.
func TestWorkLoopRetryVisible(t *testing.T) {
	metrics.Register()
	s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sink := &restest.LogSink{}
	ctx = ctrl.LoggerInto(ctx, sink.Logger())
	// No registry: the fake reconcile needs none, and retries are counted for any tenant then.
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "p", errors.New("the object has been modified"))
	var mu sync.Mutex
	calls := 0
	process := func(context.Context, resources.Request, bool) error {
		mu.Lock()
		calls++
		mu.Unlock()
		return fmt.Errorf("failed to update tenant Pod ns/p status: %w", conflict)
	}
	q := newPipelineQueueWith("upward", false, queueShare{workers: 1}, nil, nil, time.Millisecond)
	s.up = q
	go s.workWith(ctx, q, false, process)
	defer q.ShutDown()
	req := resources.Request{Tenant: "vis", Kind: resources.KindPod, Namespace: "ns", Name: "p"}
	conflictRetries := func() float64 {
		return testutil.ToFloat64(metrics.SyncRetriesVec().WithLabelValues("vis", "Pod", "upward", retry.Conflict))
	}
	retriesBefore := conflictRetries()
	q.addHigh(req)
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := calls
		mu.Unlock()
		if n > retry.HotRetries+1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	lines := sink.Matching("Retrying sync")
	if len(lines) != 1 {
		t.Fatalf("%d 'Retrying sync' lines at the default level, want 1 (the rest suppressed for a minute):\n%s", len(lines), strings.Join(sink.Lines(), "\n"))
	}
	for _, want := range []string{`"reason"="Conflict"`, `"tenant"="vis"`, `"kind"="Pod"`, `"direction"="upward"`, "the object has been modified"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("log line lacks %s: %s", want, lines[0])
		}
	}
	if got := conflictRetries() - retriesBefore; got < retry.HotRetries+1 {
		t.Errorf("vcsyncer_sync_retries_total{reason=Conflict} rose by %v, want > %d", got, retry.HotRetries)
	}
	hot := q.retries.Hot(5)["vis"]
	if len(hot) != 1 || hot[0].Retries <= retry.HotRetries {
		t.Errorf("hot = %+v, want the request with more than %d retries", hot, retry.HotRetries)
	}
}

// TestRetryBucketPerTenant: tenant A's 1500 failing requests (three times the shared bucket's
// burst) do not delay tenant B's first retry, due after its 100 ms backoff.
func TestRetryBucketPerTenant(t *testing.T) {
	q := newTestPipelineQueue(20)
	defer q.ShutDown()
	for i := range 1500 {
		q.AddRateLimited(resources.Request{Tenant: "a", Kind: resources.KindPod, Namespace: "ns", Name: fmt.Sprint(i)})
	}
	b := resources.Request{Tenant: "b", Kind: resources.KindPod, Namespace: "ns", Name: "p"}
	start := time.Now()
	q.AddRateLimited(b)
	for {
		r, shutdown := q.Get()
		if shutdown {
			t.Fatal("queue shut down")
		}
		q.Done(r)
		if r == b {
			break
		}
		if time.Since(start) > 10*time.Second {
			break
		}
	}
	if late := time.Since(start); late > time.Second {
		t.Fatalf("B's retry (backoff 100ms) came after %v behind A's 1500 retries", late)
	} else {
		t.Logf("B's retry came after %v", late)
	}
}
