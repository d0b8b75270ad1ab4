// Package retry is the bookkeeping of failed reconciles that are retried: why a request
// failed (Reason, a fixed set of label values derived from the error's type, never from text
// a tenant controls), how long it waits (Backoff over a per-item exponential backoff and one
// token bucket per tenant, TenantBuckets; the long backoff of a request that keeps failing
// without a change of its object), which requests are hot (Book: failures in a row, since the
// last change, the last error cut to 512 bytes) and how often "Retrying sync" is logged (Log).
//
// # Inputs and outputs
//
// In: the requests of a pipeline and the errors of their reconciles (Book.Failed,
// Book.Succeeded), live changes of their objects (Book.Changed). Out: delays for the
// workqueue (Backoff and TenantBuckets implement workqueue.TypedRateLimiter), reasons for
// the metrics' labels and log lines, and the hot requests for vcsyncer_sync_hot_requests and
// the status page (Book.Hot, HotCounts, HotCountsFull, Oldest). It writes no metric and no
// log line itself: pkg/syncer (retries.go: retryFailed, hotStats) does, from what it returns.
//
// # Lock rules
//
// Book, Log and TenantBuckets each hold a mutex of their own only while reading or writing
// their maps, and call nothing while holding it; all are safe for concurrent use. A Book and
// a Log keep one entry per failing request or logged key; Forget drops a removed tenant's.
//
// It sits on floor 6 of the package map in docs/architecture.md, beside the kinds, because
// Reason recognizes their sentinel errors (pod.ErrSuperCacheBehind); it may import packages on
// floors 0–6 only (today: pkg/admit, pkg/reconcile, pkg/resources, pkg/resources/pod);
// test/layering checks it.
package retry
