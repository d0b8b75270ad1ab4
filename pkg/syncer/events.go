package syncer

import (
	"github.com/vcsyncer/syncer/pkg/resources/event"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// newEventPipeline returns the Event pipeline (event.Pipeline) for Event resource r: its own
// queue and workers, whose Normal Events wait while the downward or upward queue has requests.
func (s *Syncer) newEventPipeline(r event.Copier, o event.PipelineOptions) *event.Pipeline {
	return event.NewPipeline(r, s.env, event.Tenants{
		Synced: s.syncedClusters,
		Get:    func(name string) (*tenant.Cluster, bool) { return s.registry.Get(name) },
	}, o, func() bool { return s.down.Len() > 0 || s.up.Len() > 0 })
}

// queueTenantEvents queues, for tenant c that has just synced, the copies of the super Events
// about its objects that its copies do not show yet.
func (s *Syncer) queueTenantEvents(c *tenant.Cluster) {
	if s.events != nil {
		s.events.QueueTenant(c)
	}
}

// forgetEvents drops removed tenant name's waiting Event copies and token bucket.
func (s *Syncer) forgetEvents(name string) {
	if s.events != nil {
		s.events.Forget(name)
	}
}
