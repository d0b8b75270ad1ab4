package fairqueue

import (
	"context"
	"net/http"
	"sync/atomic"
)

// WriteCounter counts the write requests one piece of work (for the syncer: one reconcile)
// makes through a client whose transport is wrapped by CountWrites, so that they can be
// charged to its tenant's Budget.
type WriteCounter struct{ n atomic.Int64 }

// Count returns the writes counted so far.
func (c *WriteCounter) Count() int64 { return c.n.Load() }

type writeCounterKey struct{}

// WithWriteCounter returns ctx carrying a fresh WriteCounter, and that counter.
func WithWriteCounter(ctx context.Context) (context.Context, *WriteCounter) {
	c := &WriteCounter{}
	return context.WithValue(ctx, writeCounterKey{}, c), c
}

// CountWrites wraps a client's transport (rest.Config.Wrap) so that each write request (any
// method but GET, HEAD and OPTIONS) made with a context of WithWriteCounter is counted by
// that context's WriteCounter. Requests without one (for the syncer: informers, checkpoints,
// leader election) are not counted.
func CountWrites(rt http.RoundTripper) http.RoundTripper {
	return countingTransport{rt}
}

type countingTransport struct{ next http.RoundTripper }

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if c, ok := r.Context().Value(writeCounterKey{}).(*WriteCounter); ok {
			c.n.Add(1)
		}
	}
	return t.next.RoundTrip(r)
}

// ReserveOf returns the workers kept in reserve (Options.Reserve) out of workers for percent:
// percent of them rounded up, at least 1 and at most all but one; none for percent 0 or fewer
// than 2 workers.
func ReserveOf(workers, percent int) int {
	if percent <= 0 || workers < 2 {
		return 0
	}
	return min(max((workers*percent+99)/100, 1), workers-1)
}
