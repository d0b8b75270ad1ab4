// Package handover is this replica's side of moving a tenant between shards: which tenants it
// holds, whether its workers may write for a tenant now (the fence), the running reconciles a
// release waits for, and the tenant's hand-over checkpoint (written on release, read on
// adoption).
//
// # What it owns
//
//   - The fence (fence.go): Shard.SetClaimed records the tenants the Tenant controller claimed
//     for this shard; Fenced is true for a registered tenant that is not claimed, or that the
//     Fence (pkg/sharding.Membership) says this shard does not own, for example because its
//     own Lease is stale. A fenced request waits FenceDelay in its queue.
//   - The running reconciles per tenant (Begin, End), which Drain waits for.
//   - Drain (drain.go): wait for the tenant's reconciles, then write its hand-over checkpoint
//     (its tenant sources, the super ack entries of its objects, its unfinished requests and
//     policy mark, whether the budget leaves it out) to resume.Options.TenantStoreOf.
//   - Adopt (adopt.go): take one tenant's part of the best checkpoint (its hand-over
//     checkpoint, or the last one of the shard that died holding it) before it is
//     registered; other shards' checkpoints are cached for 30 s, as a dead shard's tenants are
//     adopted one after another.
//
// # Inputs and outputs
//
// In: a Fence (nil without sharding: nothing is fenced), the syncer's resume.State (its
// Checkpointer, Options.StoreOf and TenantStoreOf, Sources, Marks, the queues' items), the
// tenant registry (SetRegistry). Out: the tenant.Handover calls the Tenant controller makes
// (pkg/syncer delegates to Shard), hand-over checkpoints written to their stores, one tenant's
// state restored into resume.State (sources, acks, parked requests, policy mark, cold), and
// vcsyncer_shard_handovers_total.
//
// # Lock rules
//
// The running counts have a mutex and a condition of their own; Drain waits on it with no
// other lock held. The claims are a sync.Map. The checkpoint cache's mutex is held only while
// its map is read or written, never while a checkpoint is loaded. Calls into resume.State take
// that package's locks.
//
// It sits on floor 6 of the package map in docs/architecture.md, above pkg/resume whose state
// it hands over, and may import packages on floors 0–6 only (today: pkg/checkpoint,
// pkg/checkpoint/source, pkg/metrics, pkg/resume, pkg/tenant); test/layering checks it.
package handover
