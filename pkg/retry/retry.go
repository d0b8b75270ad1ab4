package retry

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
)

// Retry reasons: the "reason" label of vcsyncer_sync_retries_total and
// vcsyncer_sync_hot_requests and the reason field of "Retrying sync" log lines. The set is
// fixed: Reason derives it from the error's type (an API status reason or one of the
// syncer's sentinel errors), never from text a tenant controls, so a tenant cannot mint label
// values.
const (
	// Conflict: the apiserver refused a write for a stale resourceVersion (409 Conflict).
	Conflict = "Conflict"
	// NotFound: an object the reconcile read or wrote is gone (404).
	NotFound = "NotFound"
	// AlreadyExists: a create met an existing object (409 AlreadyExists).
	AlreadyExists = "AlreadyExists"
	// Forbidden: 403 other than a quota refusal (RBAC, a namespace being terminated,
	// admission that is retried).
	Forbidden = "Forbidden"
	// Quota: the super namespace's ResourceQuota has no room (the syncer's own check,
	// admit.ErrNoQuotaRoom, or the apiserver's quota admission: "exceeded quota").
	Quota = "Quota"
	// Unauthorized: 401, the tenant's or the super cluster's credentials were refused.
	Unauthorized = "Unauthorized"
	// Invalid: 400/422/413, the apiserver refused the object itself.
	Invalid = "Invalid"
	// TooManyRequests: 429, the apiserver's priority and fairness or a webhook throttled.
	TooManyRequests = "TooManyRequests"
	// Timeout: the request exceeded --tenant-request-timeout, the apiserver's own
	// timeout (504) or a network timeout.
	Timeout = "Timeout"
	// Unavailable: the apiserver could not be reached or answered 500/503.
	Unavailable = "Unavailable"
	// SuperCacheBehind: the syncer's cached super Pod is older than the tenant Pod's
	// status (pod.ErrSuperCacheBehind); the next super event or retry brings the newer one.
	SuperCacheBehind = "SuperCacheBehind"
	// TenantCacheBehind: the tenant cache is behind the tenant apiserver
	// (reconcile.ErrTenantCacheBehind).
	TenantCacheBehind = "TenantCacheBehind"
	// BoundsPending: the super namespace's ResourceQuota is not computed yet
	// (admit.ErrBoundsPending).
	BoundsPending = "BoundsPending"
	// NotOwned: a super object at the mapped name is not the syncer's (resources.ErrNotOwned).
	NotOwned = "NotOwned"
	// Panic: the reconcile panicked (logged with its stack).
	Panic = "Panic"
	// Other: any other error; the log line carries its message.
	Other = "Other"
)

// Reasons lists every retry reason.
var Reasons = []string{
	Conflict, NotFound, AlreadyExists, Forbidden, Quota, Unauthorized,
	Invalid, TooManyRequests, Timeout, Unavailable, SuperCacheBehind,
	TenantCacheBehind, BoundsPending, NotOwned, Panic, Other,
}

// ErrPanic wraps the error the syncer's workers (pkg/syncer: process) return for a reconcile that panicked.
var ErrPanic = errors.New("panic")

// Hot requests and the long backoff.
const (
	// HotRetries: a request whose reconcile failed more than this many times in a row (about
	// 100 s of backoff: 0.1 s doubling) is hot: counted in vcsyncer_sync_hot_requests and
	// listed on the status page until a reconcile succeeds.
	HotRetries = 10
	// LongBackoffRetries: a request that failed this many times without a change of its
	// object (no live event enqueued it since; about 22 min: 10 doublings, then 20 retries a
	// minute apart) is retried only every LongBackoffInterval until its object changes (a live
	// event enqueues it at once, and its next retries are short again).
	LongBackoffRetries = 30
	// LongBackoffInterval is the retry interval of a request past LongBackoffRetries.
	LongBackoffInterval = 5 * time.Minute
	// maxLastErrorBytes bounds the error message kept per failing request (tenant objects'
	// names and webhook messages are in it).
	maxLastErrorBytes = 512
	// retryLogInterval: "Retrying sync" lines per (tenant, kind, direction, reason) are at
	// most one per interval after the first.
	retryLogInterval = time.Minute
)

// Reason classifies a failed reconcile's error into one of Reasons: the syncer's
// sentinel errors first (errors.Is through any wrapping), then the API status reason of the
// first apierrors.APIStatus in the chain (apierrors.ReasonForError uses errors.As), then
// network and context errors. Only a quota refusal reads the status message, which the super
// apiserver's quota admission writes ("exceeded quota: ..."); a message text can move an
// error between Forbidden and Quota, never outside the fixed set.
func Reason(err error) string {
	switch {
	case errors.Is(err, ErrPanic):
		return Panic
	case errors.Is(err, pod.ErrSuperCacheBehind):
		return SuperCacheBehind
	case errors.Is(err, reconcile.ErrTenantCacheBehind):
		return TenantCacheBehind
	case errors.Is(err, admit.ErrNoQuotaRoom):
		return Quota
	case errors.Is(err, admit.ErrBoundsPending):
		return BoundsPending
	case errors.Is(err, resources.ErrNotOwned):
		return NotOwned
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		switch {
		case apierrors.IsConflict(err):
			return Conflict
		case apierrors.IsNotFound(err), apierrors.IsGone(err):
			return NotFound
		case apierrors.IsAlreadyExists(err):
			return AlreadyExists
		case apierrors.IsForbidden(err):
			msg := status.Status().Message
			if strings.Contains(msg, "exceeded quota") || strings.Contains(msg, "failed quota") {
				return Quota
			}
			return Forbidden
		case apierrors.IsUnauthorized(err):
			return Unauthorized
		case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsRequestEntityTooLargeError(err):
			return Invalid
		case apierrors.IsTooManyRequests(err):
			return TooManyRequests
		case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err):
			return Timeout
		case apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err), apierrors.IsUnexpectedServerError(err):
			return Unavailable
		}
		if c := status.Status().Code; c >= 500 {
			return Unavailable
		}
		return Other
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return Timeout
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || errors.As(err, new(*net.OpError)) || errors.As(err, new(*net.DNSError)) {
		return Unavailable
	}
	return Other
}

// IsReason reports whether r is one of Reasons.
func IsReason(r string) bool { return slices.Contains(Reasons, r) }

// LogKey is what "Retrying sync" lines are rate-limited by.
type LogKey struct {
	Tenant    string
	Kind      resources.Kind
	Direction string
	Reason    string
}

type logEntry struct {
	last       time.Time
	suppressed int
}

// Log rate-limits the "Retrying sync" log lines: the first retry of each (tenant, kind,
// direction, reason) is logged, then at most one per retryLogInterval, each line carrying the
// number of retries of that key not logged since the previous line. Memory: one entry per key
// ever logged (tenants × kinds × 2 × len(Reasons) at most), a removed tenant's entries
// are dropped by Forget. Safe for concurrent use.
type Log struct {
	now func() time.Time

	mu sync.Mutex
	m  map[LogKey]*logEntry
}

// NewLog returns an empty Log on clock now.
func NewLog(now func() time.Time) *Log {
	return &Log{now: now, m: map[LogKey]*logEntry{}}
}

// Allow reports whether a retry of k is logged now, and how many retries of k were not logged
// since the previous line.
func (l *Log) Allow(k LogKey) (bool, int) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.m[k]
	if !ok {
		l.m[k] = &logEntry{last: now}
		return true, 0
	}
	if now.Sub(e.last) < retryLogInterval {
		e.suppressed++
		return false, 0
	}
	n := e.suppressed
	e.last, e.suppressed = now, 0
	return true, n
}

// Forget drops tenant's entries.
func (l *Log) Forget(tenant string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.m {
		if k.Tenant == tenant {
			delete(l.m, k)
		}
	}
}

// Len returns the number of keys held.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}

// HotRequest is one request whose reconciles keep failing.
type HotRequest struct {
	Request resources.Request
	// Retries is the number of failed reconciles in a row (since the last success).
	Retries int
	// SinceChange is the number of failed reconciles since its object last changed (a live
	// event enqueued it); past LongBackoffRetries it is retried every LongBackoffInterval.
	SinceChange int
	// Reason and LastError are the last failure's (LastError cut to maxLastErrorBytes).
	Reason, LastError string
	// Since is when the first of these failures happened; Last when the latest did.
	Since, Last time.Time
}

// HotKey groups hot requests for vcsyncer_sync_hot_requests.
type HotKey struct {
	Tenant string
	Kind   resources.Kind
	Reason string
}

// Book records, for one pipeline, every request whose last reconcile failed and is
// retried: an entry is made by the first failure and dropped by a success, a final refusal,
// the end of the request (its tenant removed) or Forget. Memory: one entry per failing request
// (each is also in the queue, waiting for its retry). Safe for concurrent use.
type Book struct {
	now func() time.Time

	mu sync.Mutex
	m  map[resources.Request]*HotRequest
}

// NewBook returns an empty Book on clock now.
func NewBook(now func() time.Time) *Book {
	return &Book{now: now, m: map[resources.Request]*HotRequest{}}
}

// Failed records a failed reconcile of r with reason and message msg, and returns the entry's
// state after it.
func (b *Book) Failed(r resources.Request, reason, msg string) HotRequest {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.m[r]
	if !ok {
		e = &HotRequest{Request: r, Since: now}
		b.m[r] = e
	}
	e.Retries++
	e.SinceChange++
	e.Reason, e.LastError, e.Last = reason, conversion.Truncate(msg, maxLastErrorBytes), now
	return *e
}

// Succeeded drops r's entry: its reconcile succeeded or ended for good.
func (b *Book) Succeeded(r resources.Request) {
	b.mu.Lock()
	delete(b.m, r)
	b.mu.Unlock()
}

// Changed records that r's object changed (a live event enqueued it): the failures counted
// towards the long backoff start again; the count of failures in a row stays.
func (b *Book) Changed(r resources.Request) {
	b.mu.Lock()
	if e, ok := b.m[r]; ok {
		e.SinceChange = 0
	}
	b.mu.Unlock()
}

// LongBackoff reports whether r failed at least LongBackoffRetries times since its object
// last changed.
func (b *Book) LongBackoff(r resources.Request) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.m[r]
	return ok && e.SinceChange >= LongBackoffRetries
}

// Forget drops tenant's entries.
func (b *Book) Forget(tenant string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for r := range b.m {
		if r.Tenant == tenant {
			delete(b.m, r)
		}
	}
}

// Len returns the number of failing requests held.
func (b *Book) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}

// Hot returns, per tenant, at most n of its hot requests (more than HotRetries failures in a
// row), most failures first (then oldest first, then by request). O(failing requests).
func (b *Book) Hot(n int) map[string][]HotRequest {
	b.mu.Lock()
	out := map[string][]HotRequest{}
	for _, e := range b.m {
		if e.Retries > HotRetries {
			out[e.Request.Tenant] = append(out[e.Request.Tenant], *e)
		}
	}
	b.mu.Unlock()
	for t, l := range out {
		slices.SortFunc(l, func(a, b HotRequest) int {
			if a.Retries != b.Retries {
				return b.Retries - a.Retries
			}
			if c := a.Since.Compare(b.Since); c != 0 {
				return c
			}
			return strings.Compare(a.Request.String(), b.Request.String())
		})
		if len(l) > n {
			l = l[:n]
		}
		out[t] = l
	}
	return out
}

// HotCount is the value of one HotKey: hot requests, and those of them in the long backoff.
type HotCount struct{ Requests, LongBackoff int }

// HotCounts counts the hot requests by tenant, kind and last reason. O(failing requests).
func (b *Book) HotCounts() map[HotKey]int {
	out := map[HotKey]int{}
	for k, c := range b.HotCountsFull() {
		out[k] = c.Requests
	}
	return out
}

// HotCountsFull is HotCounts with, per key, the requests in the long backoff too.
func (b *Book) HotCountsFull() map[HotKey]HotCount {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[HotKey]HotCount{}
	for _, e := range b.m {
		if e.Retries <= HotRetries {
			continue
		}
		k := HotKey{Tenant: e.Request.Tenant, Kind: e.Request.Kind, Reason: e.Reason}
		c := out[k]
		c.Requests++
		if e.SinceChange >= LongBackoffRetries {
			c.LongBackoff++
		}
		out[k] = c
	}
	return out
}

// Oldest returns, per tenant, when the first failure of its longest-failing request happened.
func (b *Book) Oldest() map[string]time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]time.Time{}
	for _, e := range b.m {
		if cur, ok := out[e.Request.Tenant]; !ok || e.Since.Before(cur) {
			out[e.Request.Tenant] = e.Since
		}
	}
	return out
}

// Backoff is a pipeline's rate limiter: inner's delay, raised to LongBackoffInterval for a
// request past LongBackoffRetries failures without a change of its object (book). A live
// event still enqueues such a request at once (workqueue Add skips delays).
type Backoff struct {
	inner workqueue.TypedRateLimiter[resources.Request]
	book  *Book
}

var _ workqueue.TypedRateLimiter[resources.Request] = Backoff{}

// When returns how long r waits before its retry.
func (h Backoff) When(r resources.Request) time.Duration {
	d := h.inner.When(r)
	if d < LongBackoffInterval && h.book.LongBackoff(r) {
		return LongBackoffInterval
	}
	return d
}

// NewBackoff returns the Backoff of inner's delays and book's requests.
func NewBackoff(inner workqueue.TypedRateLimiter[resources.Request], book *Book) Backoff {
	return Backoff{inner: inner, book: book}
}

// Forget resets inner's per-item backoff of r.
func (h Backoff) Forget(r resources.Request) { h.inner.Forget(r) }

// NumRequeues returns inner's count of r's retries.
func (h Backoff) NumRequeues(r resources.Request) int { return h.inner.NumRequeues(r) }
