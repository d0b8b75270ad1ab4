// Package checkpoint saves and restores the syncer's progress so that a restart (a deploy, an
// eviction, a leader failover) resumes where the last process left off instead of listing every
// tenant and the super cluster again and reconciling every object.
//
// A checkpoint holds, in this order (checkpointing.md section 4.5, after the Confluent
// "resumable controllers" design and controller-runtime#3234):
//
//  1. every Source's position, cached objects and ack map (pkg/checkpoint/source);
//  2. the workqueues' unfinished items (pkg/checkpoint/trackingqueue), plus the requests parked
//     for tenants that were not synced;
//  3. extra in-memory state (Checkpointable: vNode bookkeeping, remediation findings).
//
// Taking positions before queues, and queues before extra state, gives at-least-once delivery:
// a change is either behind a saved position (it is replayed by the watch or found by the
// relist diff) or was enqueued before the queue snapshot (it is in the snapshot, or its
// reconcile already finished). Any older checkpoint is also valid, only with more replay: that
// is why a checkpoint is skipped, and the previous one kept, when the queues hold more than
// Options.MaxItems (section 4.6).
//
// Compatibility is decided by a schema version, not by the build (Options.Schema, set by the
// syncer: syncer.CheckpointSchema). A checkpoint of the running schema is used; one of an older
// schema is migrated (Options.Migrations) when the migrations reach it; any other (older than
// they reach, or newer: written before a rollback), one whose migration fails, and one written
// with other options (Checkpoint.Config differs) is discarded whole, logged with both schemas
// and counted (vcsyncer_checkpoint_discarded_total{reason}), and the syncer cold-starts.
// Nothing is ever half-resumed.
//
// It sits on floor 2 of the package map in docs/architecture.md and may import packages on floors
// 0–2 only (today: pkg/checkpoint/source, pkg/metrics); test/layering checks it.
package checkpoint
