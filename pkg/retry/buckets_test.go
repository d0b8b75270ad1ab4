package retry

import (
	"fmt"
	"testing"
	"time"

	"github.com/vcsyncer/syncer/pkg/resources"
)

// TestRetryBucketsOfIdleTenantsAreDropped: once a tenant's bucket is full again, the next
// sweep drops it, so buckets of removed tenants do not accumulate; a busy bucket is kept.
func TestRetryBucketsOfIdleTenantsAreDropped(t *testing.T) {
	now := time.Unix(1000, 0)
	b := NewTenantBuckets()
	b.now = func() time.Time { return now }
	for i := range 100 {
		b.When(resources.Request{Tenant: fmt.Sprint("gone-", i)})
	}
	for range retryBurst + 10 {
		b.When(resources.Request{Tenant: "busy"})
	}
	if b.Len() != 101 {
		t.Fatalf("%d buckets, want 101", b.Len())
	}
	now = now.Add(retrySweepEvery) // every bucket is full again
	if d := b.When(resources.Request{Tenant: "busy"}); d != 0 {
		t.Fatalf("busy waits %v after a minute, want 0", d)
	}
	if b.Len() != 1 {
		t.Fatalf("after a sweep %d buckets, want 1 (busy, just used)", b.Len())
	}
}
