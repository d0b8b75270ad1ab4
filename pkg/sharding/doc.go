// Package sharding spreads tenants over several syncer replicas.
//
// Every replica (a shard) holds a Lease of its own in the syncer's namespace
// (Membership); the shards whose Lease is live form a consistent-hash Ring with virtual
// nodes, and a tenant is synced by the shard the Ring maps its name to. A change of membership
// moves about 1/N of the tenants (Karger et al., "Consistent hashing and random trees", 1997;
// the shard Leases and the ring follow timebertt/kubernetes-controller-sharding).
//
// The Ring only says who should sync a tenant. Who does is recorded on the Tenant itself
// (status.shard), written with the Tenant's resourceVersion as precondition, so two replicas
// whose views of the membership differ for a moment never both sync one tenant: a shard takes a
// tenant only when status.shard is empty, names itself, or names a shard whose Lease has
// expired; the old shard empties status.shard only after it stopped syncing the tenant and
// wrote its last checkpoint (see pkg/syncer's hand-over).
//
// It sits on floor 0 of the package map in docs/architecture.md and may import packages on floors
// 0–0 only (today: none of the module's packages); test/layering checks it.
package sharding
