// Package syncer runs the two pipelines of vc-syncer: downward (tenant → super: specs) and
// upward (super → tenant: binding and status).
//
// # Usage
//
// New builds a Syncer from Options; it implements tenant.Hooks (give it to tenant.NewRegistry)
// and manager.Runnable (add it to the controller-runtime manager, so it runs only while the
// process is the leader). ReadyCheck is its /readyz check (ready once Start has synced the
// super caches); TenantStatuses feeds the status page (pkg/status), and SetLastCheckpoint
// gives that page each tenant's last checkpoint time (both kept in a status.Recorder).
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
// Two more super caches hold objects the syncer does not own and only reads (storage.go):
// every PersistentVolume, trimmed, whose events are mapped through claimRef and the owned
// super namespace to the tenant claim (upward), and StorageClasses labelled
// tenancy.vcsyncer.io/public=true, whose events are enqueued upward for every tenant.
//
// # Implementation considerations
//
// The queues are client-go rate-limiting workqueues whose ordering is pkg/fairqueue (one
// sub-queue per tenant, weighted deficit round-robin, weights from Tenant.spec.weight),
// plugged in through workqueue.TypedQueueConfig.Queue; --fair-queuing=false puts client-go's
// FIFO back. Live events are high priority within a tenant; a tenant's initial list is low
// priority, so a tenant registering with many objects does not delay live changes.
//
// Each tenant also has a share of the syncer's super writes and workers (share.go): the super
// client's transport counts the writes each reconcile makes (fairqueue.CountWrites, through a
// counter in the reconcile's context, fairqueue.WithWriteCounter) and charges them to the tenant's token bucket in a
// fairqueue.Budget (--super-write-qps shared by weight among the tenants writing,
// --super-write-burst each); a tenant below zero has its downward requests held in its
// sub-queue, holding no worker, until it is back at zero. --worker-reserve-percent of each
// pipeline's workers are kept from any tenant beyond its weighted share, so a tenant whose
// requests are slow cannot hold every worker when another tenant's request arrives, and with
// --slow-tenant-threshold a tenant whose requests hold a worker that long on average leaves
// each tenant active in the last second the workers it used lately plus one, within its
// weighted share (fairqueue Options.SlowAfter), so it does not take back each worker a
// neighbour with sparse requests frees. Workers wait for a request they may take in the fair queue (pipelineQueue.Get,
// fairqueue.Queue.Wait).
//
// Whether a tenant object is synced under its tenant's limits (limits.maxObjects, the bytes
// held, the super namespace's bounds and collisions), and the records and signals of every
// refusal, is pkg/admit's: the syncer builds one admit.Gate and calls it from its handlers and
// workers (limits.go lists where); the Gate wakes requests through the syncer's pipelines.
// The tenants' budgets are fed by admit.NewBudget, the Pod admission window by
// admission.Window.SuperPodHandler (admission.go).
//
// The pieces with state of their own are in lower packages and wired here: the sync lag and
// Pod-creation latency (latency.Tracker, metrics.go), the Event pipeline (event.Pipeline,
// events.go), the kinds it runs (pkg/resources/kinds, kindset.go), the retried requests
// (pkg/retry, retries.go).
//
// What a checkpoint saves and how a process resumes from it (queue snapshots, parked
// requests, the per-tenant budget, policy marks, the warm-up, the super scope, the diff of a
// syncing tenant's objects against the ack maps) is pkg/resume's,
// and moving a tenant between shards (the fence, Drain, Adopt, hand-over checkpoints)
// pkg/handover's: checkpoint.go builds both, gives resume.State the pipelines as a struct of
// functions (resume.Pipelines), declares CheckpointSchema, and keeps the methods cmd/ calls
// (Warmup, AddCheckpointExtra, SetClaimed, Drain, Adopt, SnapshotQueues) as one-line
// delegations.
//
// A tenant object's change is acked in its checkpoint Source when it is enqueued, so a resume
// enqueues only what changed since; the request itself must therefore be in every checkpoint
// until its reconcile ends. On a stop, Start cancels the workers' context, shuts the queues
// down and writes the final checkpoint: a reconcile cut by the cancelled context puts its
// request back (queued again, or kept as an orphan of the tracking queue) and its worker
// returns, so the final checkpoint holds it (workWith).
//
// It sits on floor 7 of the package map in docs/architecture.md and may import packages on
// floors 0–7 only (today: pkg/admission, pkg/admit, pkg/checkpoint, pkg/checkpoint/source,
// pkg/checkpoint/trackingqueue, pkg/conversion, pkg/fairqueue, pkg/handover, pkg/latency,
// pkg/metrics, pkg/podcache, pkg/resources, pkg/resources/event, pkg/resources/kinds,
// pkg/resources/persistentvolume, pkg/resources/pod, pkg/resources/storageclass, pkg/resume,
// pkg/retry, pkg/status, pkg/tenant, pkg/vnode); test/layering checks it.
package syncer
