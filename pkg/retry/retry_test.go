package retry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
		"conflict (wrapped)":   {fmt.Errorf("failed to update tenant Pod a/b status: %w", apierrors.NewConflict(gr, "b", errors.New("modified"))), Conflict},
		"not found":            {apierrors.NewNotFound(gr, "b"), NotFound},
		"already exists":       {apierrors.NewAlreadyExists(gr, "b"), AlreadyExists},
		"forbidden":            {apierrors.NewForbidden(gr, "b", errors.New("no")), Forbidden},
		"quota (apiserver)":    {apierrors.NewForbidden(gr, "b", errors.New("exceeded quota: vc-syncer-quota, requested: pods=1, used: pods=10, limited: pods=10")), Quota},
		"quota (syncer)":       {fmt.Errorf("Pod a/b: %w", admit.ErrNoQuotaRoom), Quota},
		"unauthorized":         {apierrors.NewUnauthorized("bad token"), Unauthorized},
		"invalid":              {apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "b", nil), Invalid},
		"bad request":          {apierrors.NewBadRequest("nope"), Invalid},
		"too many requests":    {apierrors.NewTooManyRequests("slow down", 1), TooManyRequests},
		"server timeout":       {apierrors.NewServerTimeout(gr, "create", 1), Timeout},
		"timeout":              {apierrors.NewTimeoutError("took too long", 1), Timeout},
		"context deadline":     {fmt.Errorf("get: %w", context.DeadlineExceeded), Timeout},
		"net timeout":          {&net.OpError{Op: "dial", Err: timeoutErr{}}, Timeout},
		"connection refused":   {&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, Unavailable},
		"service unavailable":  {apierrors.NewServiceUnavailable("down"), Unavailable},
		"internal error":       {apierrors.NewInternalError(errors.New("etcd")), Unavailable},
		"super cache behind":   {fmt.Errorf("Pod a/b: %w (Ready condition)", pod.ErrSuperCacheBehind), SuperCacheBehind},
		"tenant cache behind":  {fmt.Errorf("x: %w", reconcile.ErrTenantCacheBehind), TenantCacheBehind},
		"bounds pending":       {admit.ErrBoundsPending, BoundsPending},
		"not owned":            {resources.ErrNotOwned, NotOwned},
		"panic":                {fmt.Errorf("%w while syncing x: boom", ErrPanic), Panic},
		"plain error":          {errors.New("tenant Pod a/b was recreated; will retry"), Other},
		"hostile message text": {errors.New("Conflict Timeout NotFound"), Other},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Reason(tc.err)
			if got != tc.want {
				t.Errorf("Reason(%v) = %q, want %q", tc.err, got, tc.want)
			}
			if !IsReason(got) {
				t.Errorf("%q is not in Reasons", got)
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
	l := NewLog(func() time.Time { return now })
	a := LogKey{Tenant: "a", Kind: resources.KindPod, Direction: metrics.Upward, Reason: Conflict}
	if ok, n := l.Allow(a); !ok || n != 0 {
		t.Fatalf("first retry: allow = %v, %d; want true, 0", ok, n)
	}
	for i := range 5 {
		now = now.Add(10 * time.Second)
		if ok, _ := l.Allow(a); ok && i < 5 {
			t.Fatalf("retry %d within the interval was logged", i+2)
		}
	}
	b := a
	b.Reason = SuperCacheBehind
	if ok, n := l.Allow(b); !ok || n != 0 {
		t.Fatalf("another reason's first retry: allow = %v, %d; want true, 0", ok, n)
	}
	other := a
	other.Tenant = "b"
	if ok, _ := l.Allow(other); !ok {
		t.Fatal("another tenant's first retry was not logged")
	}
	now = now.Add(10 * time.Second) // 60 s after the first line
	if ok, n := l.Allow(a); !ok || n != 5 {
		t.Fatalf("after the interval: allow = %v, %d; want true, 5 suppressed", ok, n)
	}
	if ok, _ := l.Allow(a); ok {
		t.Fatal("a retry right after a logged one was logged")
	}
	l.Forget("a")
	if ok, n := l.Allow(a); !ok || n != 0 {
		t.Fatalf("after forget: allow = %v, %d; want true, 0", ok, n)
	}
	if l.Len() != 2 {
		t.Errorf("%d keys kept, want 2 (tenant a's new line and tenant b's)", l.Len())
	}
}

// TestRetryBook: consecutive failures are counted per request until a success; the hot list
// holds requests retried more than HotRetries times, most retried first, bounded per tenant;
// a live enqueue (an input change) restarts the count that leads to the long backoff, not the
// hot count; the rate limiter holds a request past LongBackoffRetries without a change for at
// least LongBackoffInterval.
func TestRetryBook(t *testing.T) {
	now := time.Unix(1000, 0)
	b := NewBook(func() time.Time { return now })
	req := func(name string) resources.Request {
		return resources.Request{Tenant: "a", Kind: resources.KindPod, Namespace: "ns", Name: name}
	}
	fail := func(r resources.Request, n int) {
		for range n {
			now = now.Add(time.Second)
			b.Failed(r, Conflict, "conflict on "+r.Name)
		}
	}
	fail(req("cold"), HotRetries)
	fail(req("hot"), HotRetries+1)
	fail(req("hotter"), HotRetries+5)
	hot := b.Hot(3)
	if len(hot["a"]) != 2 || hot["a"][0].Request.Name != "hotter" || hot["a"][1].Request.Name != "hot" {
		t.Fatalf("hot = %+v, want hotter then hot", hot)
	}
	if h := hot["a"][0]; h.Retries != HotRetries+5 || h.Reason != Conflict || h.LastError != "conflict on hotter" || h.Since.IsZero() {
		t.Errorf("hotter = %+v", h)
	}
	if got := b.Hot(1)["a"]; len(got) != 1 {
		t.Errorf("hot(1) = %d rows, want 1", len(got))
	}
	counts := b.HotCounts()
	if counts[HotKey{Tenant: "a", Kind: resources.KindPod, Reason: Conflict}] != 2 {
		t.Errorf("hotCounts = %v, want 2 Conflict Pods", counts)
	}
	b.Succeeded(req("hot"))
	if got := b.Hot(3)["a"]; len(got) != 1 {
		t.Errorf("after a success: %d hot, want 1", len(got))
	}

	lim := Backoff{inner: constLimiter(time.Second), book: b}
	r := req("stuck")
	fail(r, LongBackoffRetries-1)
	if d := lim.When(r); d != time.Second {
		t.Fatalf("below the bound: When = %v, want the inner 1s", d)
	}
	fail(r, 1)
	if d := lim.When(r); d != LongBackoffInterval {
		t.Fatalf("at the bound: When = %v, want %v", d, LongBackoffInterval)
	}
	if !b.LongBackoff(r) {
		t.Fatal("longBackoff = false at the bound")
	}
	b.Changed(r) // the object changed: its next retries are short again
	if d := lim.When(r); d != time.Second || b.LongBackoff(r) {
		t.Fatalf("after a change: When = %v, longBackoff %v; want 1s, false", d, b.LongBackoff(r))
	}
	if e := b.Hot(10)["a"][0]; e.Request != r || e.Retries != LongBackoffRetries {
		t.Errorf("a change must not reset the hot count: %+v", e)
	}
	b.Forget("a")
	if len(b.Hot(10)) != 0 || b.Len() != 0 {
		t.Error("forget left entries")
	}
}

type constLimiter time.Duration

func (c constLimiter) When(resources.Request) time.Duration { return time.Duration(c) }
func (constLimiter) Forget(resources.Request)               {}
func (constLimiter) NumRequeues(resources.Request) int      { return 0 }
