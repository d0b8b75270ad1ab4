package syncer

import (
	"fmt"
	"testing"
	"time"

	"github.com/vcsyncer/syncer/pkg/resources"
)

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

// TestRetryBucketsOfIdleTenantsAreDropped: once a tenant's bucket is full again, the next
// sweep drops it, so buckets of removed tenants do not accumulate; a busy bucket is kept.
func TestRetryBucketsOfIdleTenantsAreDropped(t *testing.T) {
	now := time.Unix(1000, 0)
	b := newTenantRetryBuckets()
	b.now = func() time.Time { return now }
	for i := range 100 {
		b.When(resources.Request{Tenant: fmt.Sprint("gone-", i)})
	}
	for range retryBurst + 10 {
		b.When(resources.Request{Tenant: "busy"})
	}
	if b.len() != 101 {
		t.Fatalf("%d buckets, want 101", b.len())
	}
	now = now.Add(retrySweepEvery) // every bucket is full again
	if d := b.When(resources.Request{Tenant: "busy"}); d != 0 {
		t.Fatalf("busy waits %v after a minute, want 0", d)
	}
	if b.len() != 1 {
		t.Fatalf("after a sweep %d buckets, want 1 (busy, just used)", b.len())
	}
}
