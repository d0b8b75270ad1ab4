package syncer

import (
	"sort"

	"github.com/vcsyncer/syncer/pkg/resources"
)

// Env returns the super cluster's client and caches that the reconcilers share (for periodic
// remediation, which reads the same caches).
func (s *Syncer) Env() *resources.Env { return s.env }

// Resources returns the synced kinds, sorted by kind name.
func (s *Syncer) Resources() []resources.Resource {
	out := make([]resources.Resource, 0, len(s.resources))
	for _, r := range s.resources {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind() < out[j].Kind() })
	return out
}

// Requeue adds req at low priority (behind live events, as the initial list) to the downward
// pipeline, or to the upward pipeline when upward is true and the kind has an upward path.
// Periodic remediation (pkg/remediation) calls it for the mismatches it confirms; the request
// is then handled by the normal reconcilers, which re-read both caches.
//
// A request in the long backoff (failed retry.LongBackoffRetries times without a change of its
// object) is not requeued: its own retry, every retry.LongBackoffInterval, already re-reads both
// caches, and a scan every --remediation-interval would undo the backoff.
func (s *Syncer) Requeue(req resources.Request, upward bool) {
	if !upward {
		if !s.down.retries.LongBackoff(req) {
			s.enqueue(s.down, req, false)
		}
		return
	}
	if s.upwardKind(req.Kind) && !s.up.retries.LongBackoff(req) {
		s.enqueue(s.up, req, false)
	}
}
