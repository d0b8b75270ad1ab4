package syncer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
)

func TestRetryReason(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	cases := map[string]struct {
		err  error
		want string
	}{
		"conflict (wrapped)":   {fmt.Errorf("failed to update tenant Pod a/b status: %w", apierrors.NewConflict(gr, "b", errors.New("modified"))), RetryConflict},
		"not found":            {apierrors.NewNotFound(gr, "b"), RetryNotFound},
		"already exists":       {apierrors.NewAlreadyExists(gr, "b"), RetryAlreadyExists},
		"forbidden":            {apierrors.NewForbidden(gr, "b", errors.New("no")), RetryForbidden},
		"quota (apiserver)":    {apierrors.NewForbidden(gr, "b", errors.New("exceeded quota: vc-syncer-quota, requested: pods=1, used: pods=10, limited: pods=10")), RetryQuota},
		"quota (syncer)":       {fmt.Errorf("Pod a/b: %w", admit.ErrNoQuotaRoom), RetryQuota},
		"unauthorized":         {apierrors.NewUnauthorized("bad token"), RetryUnauthorized},
		"invalid":              {apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "b", nil), RetryInvalid},
		"bad request":          {apierrors.NewBadRequest("nope"), RetryInvalid},
		"too many requests":    {apierrors.NewTooManyRequests("slow down", 1), RetryTooManyRequests},
		"server timeout":       {apierrors.NewServerTimeout(gr, "create", 1), RetryTimeout},
		"timeout":              {apierrors.NewTimeoutError("took too long", 1), RetryTimeout},
		"context deadline":     {fmt.Errorf("get: %w", context.DeadlineExceeded), RetryTimeout},
		"net timeout":          {&net.OpError{Op: "dial", Err: timeoutErr{}}, RetryTimeout},
		"connection refused":   {&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, RetryUnavailable},
		"service unavailable":  {apierrors.NewServiceUnavailable("down"), RetryUnavailable},
		"internal error":       {apierrors.NewInternalError(errors.New("etcd")), RetryUnavailable},
		"super cache behind":   {fmt.Errorf("Pod a/b: %w (Ready condition)", pod.ErrSuperCacheBehind), RetrySuperCacheBehind},
		"tenant cache behind":  {fmt.Errorf("x: %w", reconcile.ErrTenantCacheBehind), RetryTenantCacheBehind},
		"bounds pending":       {admit.ErrBoundsPending, RetryBoundsPending},
		"not owned":            {resources.ErrNotOwned, RetryNotOwned},
		"panic":                {fmt.Errorf("%w while syncing x: boom", errPanic), RetryPanic},
		"plain error":          {errors.New("tenant Pod a/b was recreated; will retry"), RetryOther},
		"hostile message text": {errors.New("Conflict Timeout NotFound"), RetryOther},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := retryReason(tc.err)
			if got != tc.want {
				t.Errorf("retryReason(%v) = %q, want %q", tc.err, got, tc.want)
			}
			if !isRetryReason(got) {
				t.Errorf("%q is not in RetryReasons", got)
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestRetryLogLimiter: the first retry of each (tenant, kind, direction, reason) is logged,
// then at most one per interval, each carrying the number of retries not logged since the
// previous line; other keys are independent; a forgotten tenant starts afresh.
func TestRetryLogLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newRetryLog(func() time.Time { return now })
	a := retryLogKey{tenant: "a", kind: resources.KindPod, direction: directionUpward, reason: RetryConflict}
	if ok, n := l.allow(a); !ok || n != 0 {
		t.Fatalf("first retry: allow = %v, %d; want true, 0", ok, n)
	}
	for i := range 5 {
		now = now.Add(10 * time.Second)
		if ok, _ := l.allow(a); ok && i < 5 {
			t.Fatalf("retry %d within the interval was logged", i+2)
		}
	}
	b := a
	b.reason = RetrySuperCacheBehind
	if ok, n := l.allow(b); !ok || n != 0 {
		t.Fatalf("another reason's first retry: allow = %v, %d; want true, 0", ok, n)
	}
	other := a
	other.tenant = "b"
	if ok, _ := l.allow(other); !ok {
		t.Fatal("another tenant's first retry was not logged")
	}
	now = now.Add(10 * time.Second) // 60 s after the first line
	if ok, n := l.allow(a); !ok || n != 5 {
		t.Fatalf("after the interval: allow = %v, %d; want true, 5 suppressed", ok, n)
	}
	if ok, _ := l.allow(a); ok {
		t.Fatal("a retry right after a logged one was logged")
	}
	l.forget("a")
	if ok, n := l.allow(a); !ok || n != 0 {
		t.Fatalf("after forget: allow = %v, %d; want true, 0", ok, n)
	}
	if l.len() != 2 {
		t.Errorf("%d keys kept, want 2 (tenant a's new line and tenant b's)", l.len())
	}
}

// TestRetryBook: consecutive failures are counted per request until a success; the hot list
// holds requests retried more than hotRetries times, most retried first, bounded per tenant;
// a live enqueue (an input change) restarts the count that leads to the long backoff, not the
// hot count; the rate limiter holds a request past longBackoffRetries without a change for at
// least longBackoffInterval.
func TestRetryBook(t *testing.T) {
	now := time.Unix(1000, 0)
	b := newRetryBook(func() time.Time { return now })
	req := func(name string) resources.Request {
		return resources.Request{Tenant: "a", Kind: resources.KindPod, Namespace: "ns", Name: name}
	}
	fail := func(r resources.Request, n int) {
		for range n {
			now = now.Add(time.Second)
			b.failed(r, RetryConflict, "conflict on "+r.Name)
		}
	}
	fail(req("cold"), hotRetries)
	fail(req("hot"), hotRetries+1)
	fail(req("hotter"), hotRetries+5)
	hot := b.hot(3)
	if len(hot["a"]) != 2 || hot["a"][0].Request.Name != "hotter" || hot["a"][1].Request.Name != "hot" {
		t.Fatalf("hot = %+v, want hotter then hot", hot)
	}
	if h := hot["a"][0]; h.Retries != hotRetries+5 || h.Reason != RetryConflict || h.LastError != "conflict on hotter" || h.Since.IsZero() {
		t.Errorf("hotter = %+v", h)
	}
	if got := b.hot(1)["a"]; len(got) != 1 {
		t.Errorf("hot(1) = %d rows, want 1", len(got))
	}
	counts := b.hotCounts()
	if counts[hotKey{tenant: "a", kind: resources.KindPod, reason: RetryConflict}] != 2 {
		t.Errorf("hotCounts = %v, want 2 Conflict Pods", counts)
	}
	b.succeeded(req("hot"))
	if got := b.hot(3)["a"]; len(got) != 1 {
		t.Errorf("after a success: %d hot, want 1", len(got))
	}

	lim := hotBackoff{inner: constLimiter(time.Second), book: b}
	r := req("stuck")
	fail(r, longBackoffRetries-1)
	if d := lim.When(r); d != time.Second {
		t.Fatalf("below the bound: When = %v, want the inner 1s", d)
	}
	fail(r, 1)
	if d := lim.When(r); d != longBackoffInterval {
		t.Fatalf("at the bound: When = %v, want %v", d, longBackoffInterval)
	}
	if !b.longBackoff(r) {
		t.Fatal("longBackoff = false at the bound")
	}
	b.changed(r) // the object changed: its next retries are short again
	if d := lim.When(r); d != time.Second || b.longBackoff(r) {
		t.Fatalf("after a change: When = %v, longBackoff %v; want 1s, false", d, b.longBackoff(r))
	}
	if e := b.hot(10)["a"][0]; e.Request != r || e.Retries != longBackoffRetries {
		t.Errorf("a change must not reset the hot count: %+v", e)
	}
	b.forget("a")
	if len(b.hot(10)) != 0 || b.len() != 0 {
		t.Error("forget left entries")
	}
}

type constLimiter time.Duration

func (c constLimiter) When(resources.Request) time.Duration { return time.Duration(c) }
func (constLimiter) Forget(resources.Request)               {}
func (constLimiter) NumRequeues(resources.Request) int      { return 0 }

// lineSink collects log lines written at V(0) and above.
type lineSink struct {
	mu    sync.Mutex
	lines []string
}

func (s *lineSink) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		s.mu.Lock()
		s.lines = append(s.lines, prefix+" "+args)
		s.mu.Unlock()
	}, funcr.Options{Verbosity: 0})
}

func (s *lineSink) matching(sub string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.lines {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

// TestWorkLoopRetryVisible: a reconcile failing with a Conflict is logged at the default level
// (once: later retries within the minute are suppressed), counted by reason in
// vcsyncer_sync_retries_total, and listed among the hot requests once retried more than
// hotRetries times.
func TestWorkLoopRetryVisible(t *testing.T) {
	metrics.Register()
	s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sink := &lineSink{}
	ctx = ctrl.LoggerInto(ctx, sink.logger())
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
		return testutil.ToFloat64(metrics.SyncRetriesVec().WithLabelValues("vis", "Pod", "upward", RetryConflict))
	}
	retriesBefore := conflictRetries()
	q.addHigh(req)
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := calls
		mu.Unlock()
		if n > hotRetries+1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	lines := sink.matching("Retrying sync")
	if len(lines) != 1 {
		t.Fatalf("%d 'Retrying sync' lines at the default level, want 1 (the rest suppressed for a minute):\n%s", len(lines), strings.Join(sink.lines, "\n"))
	}
	for _, want := range []string{`"reason"="Conflict"`, `"tenant"="vis"`, `"kind"="Pod"`, `"direction"="upward"`, "the object has been modified"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("log line lacks %s: %s", want, lines[0])
		}
	}
	if got := conflictRetries() - retriesBefore; got < hotRetries+1 {
		t.Errorf("vcsyncer_sync_retries_total{reason=Conflict} rose by %v, want > %d", got, hotRetries)
	}
	hot := q.retries.hot(5)["vis"]
	if len(hot) != 1 || hot[0].Retries <= hotRetries {
		t.Errorf("hot = %+v, want the request with more than %d retries", hot, hotRetries)
	}
}
