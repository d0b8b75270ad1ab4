package syncer

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
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
)

// Retry reasons: the "reason" label of vcsyncer_sync_retries_total and
// vcsyncer_sync_hot_requests and the reason field of "Retrying sync" log lines. The set is
// fixed: retryReason derives it from the error's type (an API status reason or one of the
// syncer's sentinel errors), never from text a tenant controls, so a tenant cannot mint label
// values.
const (
	// RetryConflict: the apiserver refused a write for a stale resourceVersion (409 Conflict).
	RetryConflict = "Conflict"
	// RetryNotFound: an object the reconcile read or wrote is gone (404).
	RetryNotFound = "NotFound"
	// RetryAlreadyExists: a create met an existing object (409 AlreadyExists).
	RetryAlreadyExists = "AlreadyExists"
	// RetryForbidden: 403 other than a quota refusal (RBAC, a namespace being terminated,
	// admission that is retried).
	RetryForbidden = "Forbidden"
	// RetryQuota: the super namespace's ResourceQuota has no room (the syncer's own check,
	// admit.ErrNoQuotaRoom, or the apiserver's quota admission: "exceeded quota").
	RetryQuota = "Quota"
	// RetryUnauthorized: 401, the tenant's or the super cluster's credentials were refused.
	RetryUnauthorized = "Unauthorized"
	// RetryInvalid: 400/422/413, the apiserver refused the object itself.
	RetryInvalid = "Invalid"
	// RetryTooManyRequests: 429, the apiserver's priority and fairness or a webhook throttled.
	RetryTooManyRequests = "TooManyRequests"
	// RetryTimeout: the request exceeded --tenant-request-timeout, the apiserver's own
	// timeout (504) or a network timeout.
	RetryTimeout = "Timeout"
	// RetryUnavailable: the apiserver could not be reached or answered 500/503.
	RetryUnavailable = "Unavailable"
	// RetrySuperCacheBehind: the syncer's cached super Pod is older than the tenant Pod's
	// status (pod.ErrSuperCacheBehind); the next super event or retry brings the newer one.
	RetrySuperCacheBehind = "SuperCacheBehind"
	// RetryTenantCacheBehind: the tenant cache is behind the tenant apiserver
	// (reconcile.ErrTenantCacheBehind).
	RetryTenantCacheBehind = "TenantCacheBehind"
	// RetryBoundsPending: the super namespace's ResourceQuota is not computed yet
	// (admit.ErrBoundsPending).
	RetryBoundsPending = "BoundsPending"
	// RetryNotOwned: a super object at the mapped name is not the syncer's (resources.ErrNotOwned).
	RetryNotOwned = "NotOwned"
	// RetryPanic: the reconcile panicked (logged with its stack).
	RetryPanic = "Panic"
	// RetryOther: any other error; the log line carries its message.
	RetryOther = "Other"
)

// RetryReasons lists every retry reason.
var RetryReasons = []string{
	RetryConflict, RetryNotFound, RetryAlreadyExists, RetryForbidden, RetryQuota, RetryUnauthorized,
	RetryInvalid, RetryTooManyRequests, RetryTimeout, RetryUnavailable, RetrySuperCacheBehind,
	RetryTenantCacheBehind, RetryBoundsPending, RetryNotOwned, RetryPanic, RetryOther,
}

// errPanic wraps the error process returns for a reconcile that panicked.
var errPanic = errors.New("panic")

// Hot requests and the long backoff.
const (
	// hotRetries: a request whose reconcile failed more than this many times in a row (about
	// 100 s of backoff: 0.1 s doubling) is hot: counted in vcsyncer_sync_hot_requests and
	// listed on the status page until a reconcile succeeds.
	hotRetries = 10
	// longBackoffRetries: a request that failed this many times without a change of its
	// object (no live event enqueued it since; about 22 min: 10 doublings, then 20 retries a
	// minute apart) is retried only every longBackoffInterval until its object changes (a live
	// event enqueues it at once, and its next retries are short again).
	longBackoffRetries = 30
	// longBackoffInterval is the retry interval of a request past longBackoffRetries.
	longBackoffInterval = 5 * time.Minute
	// maxLastErrorBytes bounds the error message kept per failing request (tenant objects'
	// names and webhook messages are in it).
	maxLastErrorBytes = 512
	// retryLogInterval: "Retrying sync" lines per (tenant, kind, direction, reason) are at
	// most one per interval after the first.
	retryLogInterval = time.Minute
)

// retryReason classifies a failed reconcile's error into one of RetryReasons: the syncer's
// sentinel errors first (errors.Is through any wrapping), then the API status reason of the
// first apierrors.APIStatus in the chain (apierrors.ReasonForError uses errors.As), then
// network and context errors. Only a quota refusal reads the status message, which the super
// apiserver's quota admission writes ("exceeded quota: ..."); a message text can move an
// error between Forbidden and Quota, never outside the fixed set.
func retryReason(err error) string {
	switch {
	case errors.Is(err, errPanic):
		return RetryPanic
	case errors.Is(err, pod.ErrSuperCacheBehind):
		return RetrySuperCacheBehind
	case errors.Is(err, reconcile.ErrTenantCacheBehind):
		return RetryTenantCacheBehind
	case errors.Is(err, admit.ErrNoQuotaRoom):
		return RetryQuota
	case errors.Is(err, admit.ErrBoundsPending):
		return RetryBoundsPending
	case errors.Is(err, resources.ErrNotOwned):
		return RetryNotOwned
	case errors.Is(err, context.DeadlineExceeded):
		return RetryTimeout
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		switch {
		case apierrors.IsConflict(err):
			return RetryConflict
		case apierrors.IsNotFound(err), apierrors.IsGone(err):
			return RetryNotFound
		case apierrors.IsAlreadyExists(err):
			return RetryAlreadyExists
		case apierrors.IsForbidden(err):
			msg := status.Status().Message
			if strings.Contains(msg, "exceeded quota") || strings.Contains(msg, "failed quota") {
				return RetryQuota
			}
			return RetryForbidden
		case apierrors.IsUnauthorized(err):
			return RetryUnauthorized
		case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsRequestEntityTooLargeError(err):
			return RetryInvalid
		case apierrors.IsTooManyRequests(err):
			return RetryTooManyRequests
		case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err):
			return RetryTimeout
		case apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err), apierrors.IsUnexpectedServerError(err):
			return RetryUnavailable
		}
		if c := status.Status().Code; c >= 500 {
			return RetryUnavailable
		}
		return RetryOther
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return RetryTimeout
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || errors.As(err, new(*net.OpError)) || errors.As(err, new(*net.DNSError)) {
		return RetryUnavailable
	}
	return RetryOther
}

// isRetryReason reports whether r is one of RetryReasons.
func isRetryReason(r string) bool { return slices.Contains(RetryReasons, r) }

// truncate cuts s to at most n bytes (at a rune boundary), marking the cut with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// retryLogKey is what "Retrying sync" lines are rate-limited by.
type retryLogKey struct {
	tenant    string
	kind      resources.Kind
	direction string
	reason    string
}

type retryLogEntry struct {
	last       time.Time
	suppressed int
}

// retryLog rate-limits the "Retrying sync" log lines: the first retry of each (tenant, kind,
// direction, reason) is logged, then at most one per retryLogInterval, each line carrying the
// number of retries of that key not logged since the previous line. Memory: one entry per key
// ever logged (tenants × kinds × 2 × len(RetryReasons) at most), a removed tenant's entries
// are dropped by forget. Safe for concurrent use.
type retryLog struct {
	now func() time.Time

	mu sync.Mutex
	m  map[retryLogKey]*retryLogEntry
}

func newRetryLog(now func() time.Time) *retryLog {
	return &retryLog{now: now, m: map[retryLogKey]*retryLogEntry{}}
}

// allow reports whether a retry of k is logged now, and how many retries of k were not logged
// since the previous line.
func (l *retryLog) allow(k retryLogKey) (bool, int) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.m[k]
	if !ok {
		l.m[k] = &retryLogEntry{last: now}
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

// forget drops tenant's entries.
func (l *retryLog) forget(tenant string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.m {
		if k.tenant == tenant {
			delete(l.m, k)
		}
	}
}

func (l *retryLog) len() int {
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
	// event enqueued it); past longBackoffRetries it is retried every longBackoffInterval.
	SinceChange int
	// Reason and LastError are the last failure's (LastError cut to maxLastErrorBytes).
	Reason, LastError string
	// Since is when the first of these failures happened; Last when the latest did.
	Since, Last time.Time
}

// hotKey groups hot requests for vcsyncer_sync_hot_requests.
type hotKey struct {
	tenant string
	kind   resources.Kind
	reason string
}

// retryBook records, for one pipeline, every request whose last reconcile failed and is
// retried: an entry is made by the first failure and dropped by a success, a final refusal,
// the end of the request (its tenant removed) or forget. Memory: one entry per failing request
// (each is also in the queue, waiting for its retry). Safe for concurrent use.
type retryBook struct {
	now func() time.Time

	mu sync.Mutex
	m  map[resources.Request]*HotRequest
}

func newRetryBook(now func() time.Time) *retryBook {
	return &retryBook{now: now, m: map[resources.Request]*HotRequest{}}
}

// failed records a failed reconcile of r with reason and message msg, and returns the entry's
// state after it.
func (b *retryBook) failed(r resources.Request, reason, msg string) HotRequest {
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
	e.Reason, e.LastError, e.Last = reason, truncate(msg, maxLastErrorBytes), now
	return *e
}

// succeeded drops r's entry: its reconcile succeeded or ended for good.
func (b *retryBook) succeeded(r resources.Request) {
	b.mu.Lock()
	delete(b.m, r)
	b.mu.Unlock()
}

// changed records that r's object changed (a live event enqueued it): the failures counted
// towards the long backoff start again; the count of failures in a row stays.
func (b *retryBook) changed(r resources.Request) {
	b.mu.Lock()
	if e, ok := b.m[r]; ok {
		e.SinceChange = 0
	}
	b.mu.Unlock()
}

// longBackoff reports whether r failed at least longBackoffRetries times since its object
// last changed.
func (b *retryBook) longBackoff(r resources.Request) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.m[r]
	return ok && e.SinceChange >= longBackoffRetries
}

// forget drops tenant's entries.
func (b *retryBook) forget(tenant string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for r := range b.m {
		if r.Tenant == tenant {
			delete(b.m, r)
		}
	}
}

func (b *retryBook) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}

// hot returns, per tenant, at most n of its hot requests (more than hotRetries failures in a
// row), most failures first (then oldest first, then by request). O(failing requests).
func (b *retryBook) hot(n int) map[string][]HotRequest {
	b.mu.Lock()
	out := map[string][]HotRequest{}
	for _, e := range b.m {
		if e.Retries > hotRetries {
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

// hotCount is the value of one hotKey: hot requests, and those of them in the long backoff.
type hotCount struct{ requests, longBackoff int }

// hotCounts counts the hot requests by tenant, kind and last reason. O(failing requests).
func (b *retryBook) hotCounts() map[hotKey]int {
	out := map[hotKey]int{}
	for k, c := range b.hotCountsFull() {
		out[k] = c.requests
	}
	return out
}

func (b *retryBook) hotCountsFull() map[hotKey]hotCount {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[hotKey]hotCount{}
	for _, e := range b.m {
		if e.Retries <= hotRetries {
			continue
		}
		k := hotKey{tenant: e.Request.Tenant, kind: e.Request.Kind, reason: e.Reason}
		c := out[k]
		c.requests++
		if e.SinceChange >= longBackoffRetries {
			c.longBackoff++
		}
		out[k] = c
	}
	return out
}

// oldest returns, per tenant, when the first failure of its longest-failing request happened.
func (b *retryBook) oldest() map[string]time.Time {
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

// hotBackoff is a pipeline's rate limiter: inner's delay, raised to longBackoffInterval for a
// request past longBackoffRetries failures without a change of its object (book). A live
// event still enqueues such a request at once (workqueue Add skips delays).
type hotBackoff struct {
	inner workqueue.TypedRateLimiter[resources.Request]
	book  *retryBook
}

var _ workqueue.TypedRateLimiter[resources.Request] = hotBackoff{}

// When returns how long r waits before its retry.
func (h hotBackoff) When(r resources.Request) time.Duration {
	d := h.inner.When(r)
	if d < longBackoffInterval && h.book.longBackoff(r) {
		return longBackoffInterval
	}
	return d
}

// Forget resets inner's per-item backoff of r.
func (h hotBackoff) Forget(r resources.Request) { h.inner.Forget(r) }

// NumRequeues returns inner's count of r's retries.
func (h hotBackoff) NumRequeues(r resources.Request) int { return h.inner.NumRequeues(r) }

// retryFailed records a failed reconcile of req that is about to be retried with backoff: it
// counts it in vcsyncer_sync_queue_retries_total and vcsyncer_sync_retries_total{reason} (for a
// registered tenant), records it in q's retry book, and logs "Retrying sync" at the default
// level for the first failure of each (tenant, kind, direction, reason) and then at most once
// a minute with the number of retries not logged since (the others at V(1)). A request that
// reaches longBackoffRetries failures without a change of its object is logged once as
// retried every longBackoffInterval from then on.
func (s *Syncer) retryFailed(ctx context.Context, q *pipelineQueue, req resources.Request, down bool, err error) {
	dir := directionUpward
	if down {
		dir = directionDownward
	}
	reason := retryReason(err)
	e := q.retries.failed(req, reason, err.Error())
	metrics.QueueRetry(req.Tenant, dir)
	if s.registry == nil {
		metrics.SyncRetry(req.Tenant, string(req.Kind), dir, reason)
	} else if _, ok := s.registry.Get(req.Tenant); ok {
		metrics.SyncRetry(req.Tenant, string(req.Kind), dir, reason)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("tenant", req.Tenant, "kind", string(req.Kind), "direction", dir, "reason", reason)
	msg := truncate(err.Error(), 1024)
	if ok, suppressed := s.retryLog.allow(retryLogKey{tenant: req.Tenant, kind: req.Kind, direction: dir, reason: reason}); ok {
		log.Info("Retrying sync", "request", req.String(), "retries", e.Retries, "error", msg,
			"suppressedSinceLastLine", suppressed)
	} else {
		log.V(1).Info("Retrying sync", "request", req.String(), "retries", e.Retries, "error", msg)
	}
	if e.SinceChange == longBackoffRetries {
		if ok, suppressed := s.retryLog.allow(retryLogKey{tenant: req.Tenant, kind: req.Kind, direction: dir, reason: "long:" + reason}); ok {
			log.Info("Retrying only every "+longBackoffInterval.String()+" until the object changes", "request", req.String(),
				"retries", e.Retries, "failingSince", e.Since, "error", msg, "suppressedSinceLastLine", suppressed)
		}
	}
}

// hotStats reports the hot requests of both pipelines for vcsyncer_sync_hot_requests and
// vcsyncer_sync_long_backoff_requests, for registered tenants only.
func (s *Syncer) hotStats() []metrics.HotCount {
	var out []metrics.HotCount
	for dir, q := range map[string]*pipelineQueue{directionDownward: s.down, directionUpward: s.up} {
		for k, c := range q.retries.hotCountsFull() {
			if s.registry != nil {
				if _, ok := s.registry.Get(k.tenant); !ok {
					continue
				}
			}
			out = append(out, metrics.HotCount{Tenant: k.tenant, Kind: string(k.kind), Direction: dir, Reason: k.reason,
				Requests: c.requests, LongBackoff: c.longBackoff})
		}
	}
	return out
}
