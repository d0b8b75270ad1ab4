package syncer

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vcsyncer/syncer/pkg/resources"
)

// TestPipelineQueueTracksAndKeepsPriorities: the pipeline queue is the tracking queue (its
// snapshot lists queued, processing and orphaned requests) and, with fair queuing on, still
// serves a live event (addHigh) before bulk work (addLow) of the same tenant, and reports
// per-tenant stats.
func TestPipelineQueueTracksAndKeepsPriorities(t *testing.T) {
	bulk := resources.Request{Tenant: "t1", Kind: "ConfigMap", Namespace: "ns", Name: "bulk"}
	live := resources.Request{Tenant: "t1", Kind: "ConfigMap", Namespace: "ns", Name: "live"}
	late := resources.Request{Tenant: "t2", Kind: "Secret", Namespace: "ns", Name: "late"}
	for name, tc := range map[string]struct {
		fair      bool
		wantFirst resources.Request
		wantStats bool
	}{
		"fair": {fair: true, wantFirst: live, wantStats: true},
		"fifo": {fair: false, wantFirst: bulk},
	} {
		t.Run(name, func(t *testing.T) {
			q := newPipelineQueue("test-"+name, tc.fair, queueShare{workers: 20}, func(string) int { return 1 }, nil)
			q.addLow(bulk)
			q.addHigh(live)
			if got := q.Size(); got != 2 {
				t.Errorf("Size = %d, want 2", got)
			}
			if st := q.stats(); (st["t1"].Depth == 2) != tc.wantStats {
				t.Errorf("stats = %v, want depth 2 for t1: %v", st, tc.wantStats)
			}
			first, _ := q.Get()
			if first != tc.wantFirst {
				t.Errorf("first Get = %v, want %v", first, tc.wantFirst)
			}
			q.ShutDown()
			q.addHigh(late)
			snap := q.Snapshot()
			want := map[string][]resources.Request{
				"queued":     {bulk, live},
				"processing": {first},
				"orphans":    {late},
			}
			want["queued"] = removeReq(want["queued"], first)
			got := map[string][]resources.Request{"queued": snap.Queued, "processing": snap.Processing, "orphans": snap.Orphans}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("snapshot after ShutDown (-want +got):\n%s", diff)
			}
		})
	}
}

func removeReq(l []resources.Request, r resources.Request) []resources.Request {
	var out []resources.Request
	for _, x := range l {
		if x != r {
			out = append(out, x)
		}
	}
	return out
}
