package syncer

import (
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/retry"
	"github.com/vcsyncer/syncer/pkg/status"
)

// TestHotRows: a tenant's hot requests of both pipelines are listed most failures first, at
// most status.MaxRetrying of them, with the total count and the long-backoff flag.
func TestHotRows(t *testing.T) {
	s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	req := func(name string) resources.Request {
		return resources.Request{Tenant: "a", Kind: resources.KindPod, Namespace: "ns", Name: name}
	}
	for i := range status.MaxRetrying + 2 {
		for range retry.HotRetries + 1 + i {
			s.down.retries.Failed(req(string(rune('a'+i))), retry.Quota, "no room")
		}
	}
	for range retry.LongBackoffRetries {
		s.up.retries.Failed(req("up"), retry.SuperCacheBehind, "behind")
	}
	n, rows := s.hotRows("a")
	if n != status.MaxRetrying+3 {
		t.Errorf("hot count = %d, want %d", n, status.MaxRetrying+3)
	}
	if len(rows) != status.MaxRetrying {
		t.Fatalf("%d rows, want %d", len(rows), status.MaxRetrying)
	}
	if r := rows[0]; r.Direction != "upward" || r.Name != "up" || r.Retries != retry.LongBackoffRetries || !r.LongBackoff || r.Reason != retry.SuperCacheBehind {
		t.Errorf("first row = %+v, want the upward request in the long backoff", r)
	}
	if r := rows[1]; r.Direction != "downward" || r.Name != "g" || r.LongBackoff || r.Reason != retry.Quota || r.LastError != "no room" {
		t.Errorf("second row = %+v, want downward g", r)
	}
	if n, rows := s.hotRows("other"); n != 0 || rows != nil {
		t.Errorf("other tenant: %d, %v", n, rows)
	}
}

// hotRows returns tenant's hot-request count and top rows (hotTables).
func (s *Syncer) hotRows(tenant string) (int, []status.HotRequest) {
	counts, rows := s.hotTables()
	return counts[tenant], rows[tenant]
}
