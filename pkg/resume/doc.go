// Package resume is what the syncer resumes from and writes to its checkpoints: which state a
// checkpoint saves (the queues' unfinished requests, the parked ones, the tenants' policy
// marks, the vNode bookkeeping), which tenants it leaves out, and how a process (or a new
// leader) takes that state back before its informers start.
//
// # What it owns
//
//   - The parked requests (parked.go): requests of registered tenants that have not synced
//     yet (Park, DrainParked when the tenant syncs, DropParked when it goes), and the queue
//     part of a checkpoint (State implements checkpoint.Queues: QueueSize, SnapshotQueues;
//     QueueItem, EncodeQueueItems, DecodeQueueItems, QueueItems, RestoreQueues).
//   - The budget (budget.go): the tenants with more unfinished requests than MaxItems are left
//     out of the checkpoint being taken (OverBudget); the tenants the checkpoint resumed from
//     left out are cold: every object of theirs is enqueued on their next sync (TakeCold).
//   - The policy marks (policymark.go): per tenant, the effective policy generation every
//     object was last examined under, saved as the extra state "tenant-policies"; a resume
//     under another policy examines every object again (PolicyChangedSince).
//   - The extra state "vnode-bindings" and the configuration digest (extras.go: Digest).
//   - The warm-up and the leader's resume (warm.go): Warmup (every replica: restore, check the
//     super cluster's identity, start the super informers), AwaitRestore (a tenant's Cluster
//     waits for the restore before it counts its objects), ResumeLeader (a newer checkpoint
//     written by the previous leader).
//   - The super informers' scope with sharding (scope.go): a tenant's super objects are cached
//     while it is registered here (ScopeWaitFor, ScopeRemove); the tenants a checkpoint's super
//     caches held are in the scope from the resume on, for a grace.
//   - The Source IDs of the syncer's informers (TenantPrefix, SuperPrefix, TenantSourceID) and
//     the ack entry of an owned super object (OwnerVersion).
//   - The diff against the ack maps (diff.go): which of a tenant's objects, and of the super
//     objects it owns, changed or vanished since they were last enqueued (DiffTenant,
//     DiffSuper; every object for a cold tenant), logged with a bounded sample; and the acks a
//     removed tenant leaves behind (ForgetTenantSources).
//
// # Inputs and outputs
//
// In: Config: the checkpoint Options (cmd/: store, interval, budget), the schema, migrations
// and digest the syncer declares (pkg/syncer/checkpoint.go: CheckpointSchema), the informers'
// source.Registry and the super Scope, the vNode Bindings, the super clientset, and the
// syncer's pipelines as a struct of functions (Pipelines: snapshots and sizes of the two
// queues and the admission window, Enqueue, Seed) and StartSuper. The tenant registry comes
// later (SetRegistry). Out: a checkpoint.Checkpointer (Checkpointer: the syncer runs and saves
// it), requests put back into the pipelines through Pipelines, restored source states and
// scope entries, and the answers the syncer's hooks read (TakeCold, DiffTenant, DiffSuper,
// PolicyChangedSince, Marks).
//
// # Usage
//
// pkg/syncer builds one State in New (checkpoint.go, newResume) and calls it from its tenant
// hooks (tenants.go) and workers (Park); pkg/handover reads and restores one tenant's part of
// it for a shard hand-over.
//
// # Lock rules
//
// The parking lock is held while the parked set is read or written and while QueueItems takes
// the queues' snapshots (Pipelines.Snapshots, Window) and Park enqueues (Pipelines.Enqueue) or
// DrainParked seeds (Pipelines.Seed), so no request moves between a queue and the parked set
// unseen; those functions must not call back into the State. The budget lock and the marks'
// lock are leaves: nothing is called while they are held. Warm runs once; concurrent callers
// wait for it.
//
// It sits on floor 5 of the package map in docs/architecture.md, beside pkg/vnode whose
// bookkeeping it saves, and may import packages on floors 0–5 only (today: pkg/checkpoint,
// pkg/checkpoint/source, pkg/checkpoint/trackingqueue, pkg/conversion, pkg/resources,
// pkg/tenant, pkg/vnode); test/layering checks it.
package resume
