// Package sharding runs three `vc-syncer run --sharding` processes against one super
// cluster and six real tenant control planes, and checks the shard ring end to end: every
// tenant is synced by exactly one replica; a third replica takes the tenants the ring gives it
// from their old shard's checkpoint; a SIGKILLed replica's tenants are synced again by the
// others within the shard Lease duration plus 2 s, again from a checkpoint; nothing is lost or
// duplicated; and the super apiserver's audit log shows no tenant's objects written by two
// replicas in one period.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package sharding
