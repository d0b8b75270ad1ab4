// Package event copies super-cluster Events about synced objects up into the tenants.
//
// A super Event is copied when it lives in a super namespace the syncer created for a tenant
// and its involvedObject is a super object the syncer synced for that tenant (found in the super
// caches, owned by the tenant, same UID). The tenant copy goes into the tenant namespace under
// the super Event's name, with involvedObject rewritten to the tenant object (its namespace,
// name and UID, from the super object's ownership annotations) and the super namespace in the
// message replaced by the tenant namespace. It is labelled tenancy.vcsyncer.io/managed-by in
// the tenant.
//
// # Deduplication, rate limiting and priorities
//
// The super cluster's event recorders already aggregate repeats into one Event (count,
// lastTimestamp, series); the tenant copy follows that one object: a later change of the super
// Event updates the copy's count, timestamps and message instead of creating another Event, and
// an unchanged one is not written (NeedsWrite checks this from the caches before anything is
// queued). Event copies run in their own pipeline (Pipeline: Queue, a few workers of its own,
// never the upward workers that carry Pod statuses; the syncer builds it with NewPipeline,
// registers its Handler on the super Event informer, calls QueueTenant when a tenant has
// synced and Forget when it is removed, and runs it with Run): per tenant, Warnings are written
// before Normals, each tenant's writes are paced by its own token bucket (QueueOptions.QPS,
// Burst; client-go's event recorders use the same kind of per-source bucket), repeated changes
// of a waiting Event coalesce into one write, and when a tenant has QueueOptions.MaxPending
// copies waiting, Normals are dropped first (counted by tenant, type and reason). Tenant copies
// expire with the tenant apiserver's --event-ttl; they are not deleted with the super Event.
//
// # Lock rules
//
// Queue holds one mutex, only while its per-tenant state is read or written. Pipeline holds
// no lock of its own: its Handler runs in the super Event informer's goroutine and only
// queues; its workers take copies from the Queue and write them with no lock held, each
// write bounded by writeTimeout.
//
// # Implementation considerations
//
// Super Events are not labelled by the syncer, so they have their own informer
// (resources.Env.SuperEvents), trimmed of managedFields. The tenant informer of this kind
// caches only the syncer's copies (label selector), registered through InformerFor so it
// replaces the factory's Event informer.
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/conversion, pkg/eventcache, pkg/metrics, pkg/reconcile, pkg/resources,
// pkg/tenant); test/layering checks it.
package event
