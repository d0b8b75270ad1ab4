// Package syncer runs the two pipelines of vc-syncer: downward (tenant → super: specs) and
// upward (super → tenant: binding and status).
//
// # Usage
//
// New builds a Syncer from Options; it implements tenant.Hooks (give it to tenant.NewRegistry)
// and manager.Runnable (add it to the controller-runtime manager, so it runs only while the
// process is the leader).
//
// # Implementation details
//
// One request type ({Tenant, Kind, Namespace, Name}), two workqueues, two worker pools
// (--downward-workers, --upward-workers), dispatch to per-kind resources.Resource reconcilers.
// Tenant informer events enqueue downward requests, but only once the tenant's caches have
// synced: ClusterSynced then enqueues every cached object in one pass. Super informer events
// (only objects labelled as managed by the syncer) are mapped back to the tenant object through
// their ownership annotations and enqueue both an upward request (status) and a downward one
// (so a super object deleted or changed by someone else is repaired).
//
// # Implementation considerations
//
// The queues are client-go rate-limiting workqueues with one FIFO; per-tenant weighted fair
// queuing replaces the FIFO through workqueue.TypedQueueConfig.Queue (pkg/fairqueue).
package syncer
