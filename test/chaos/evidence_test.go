package chaos

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vcsyncer/syncer/pkg/status"
)

// TestObjectEvidence: a stale object's violation names, per replica, the tenant's queues and
// the object's hot request (or its absence), and the log lines about its request and the
// tenant's hand-overs; other lines and other objects' lines are left out.
func TestObjectEvidence(t *testing.T) {
	now := time.Date(2026, 12, 6, 20, 0, 0, 0, time.UTC)
	statuses := map[string]*status.Snapshot{
		"shard-0": {Time: now, Tenants: []status.Tenant{{Name: "tenant-1", Phase: "Running", Shard: "shard-0",
			Downward: &status.Queue{}, Upward: &status.Queue{}, LastSync: now.Add(-3 * time.Second),
			Retrying: []status.HotRequest{{Direction: "downward", Kind: "Pod", Namespace: "chaos-a", Name: "pod-5",
				Retries: 14, Reason: "Other", LastError: "not in the cache yet", Since: now.Add(-90 * time.Second)}}}}},
	}
	errs := map[string]error{"shard-1": errors.New("connection refused")}
	logs := map[string][]byte{
		"shard-0": []byte(`{"msg":"Retrying sync","request":"tenant-1/Pod/chaos-a/pod-5"}
{"msg":"Retrying sync","request":"tenant-1/Pod/chaos-a/pod-6"}
{"msg":"Took the tenant","tenant":"tenant-1"}
{"msg":"Took the tenant","tenant":"tenant-2"}
`),
	}
	got := strings.Join(objectEvidence("tenant-1/Pod/chaos-a/pod-5", []string{"shard-0", "shard-1"}, statuses, errs, logs), "\n")
	for _, want := range []string{
		`replica shard-0: tenant tenant-1 phase Running shard "shard-0", downward depth 0`,
		"downward retried 14 times since 90s ago, reason Other, long backoff false: not in the cache yet",
		`replica shard-0 log: {"msg":"Retrying sync","request":"tenant-1/Pod/chaos-a/pod-5"}`,
		`replica shard-0 log: {"msg":"Took the tenant","tenant":"tenant-1"}`,
		"replica shard-1: no status (connection refused)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("evidence lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"pod-6", "tenant-2"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("evidence names %q:\n%s", unwanted, got)
		}
	}
	if e := objectEvidence("super/Pod/ns/p", nil, nil, nil, nil); e != nil {
		t.Errorf("evidence for a super key: %v", e)
	}
}
