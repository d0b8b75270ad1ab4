// Package persistentvolume syncs PersistentVolumes upward (super → tenant): a super PV bound
// to a tenant's claim appears in the tenant as a tenant PV bound to the tenant's claim.
//
// # Upward
//
// For a super PV whose claimRef names a super PersistentVolumeClaim that the syncer created
// for a tenant claim (UIDs checked on both sides), the tenant gets a PV (see Desired) that is
// pre-bound to the tenant claim (claimRef: namespace, name and UID of the tenant PVC), with
// status phase Bound, so the tenant sees a bound pair as its own PV controller would make it.
// Its name is the super PV's name, except when the tenant claim preset spec.volumeName and the
// super PV is the one that name maps to (conversion.SuperVolumeName): then the tenant PV has
// the name the tenant asked for. The tenant PV carries the label
// tenancy.vcsyncer.io/managed-by=vc-syncer and the annotation tenancy.vcsyncer.io/super-name.
//
// The tenant PV is a description, not a volume: its source is a placeholder CSI source
// (driver super.tenancy.vcsyncer.io, handle = super PV name), so no detail of the super
// cluster's storage (host paths, disk IDs, secrets) reaches a tenant; its reclaim policy is
// Retain, so nothing in the tenant tries to delete or recycle a volume it cannot reach. The
// super cluster reclaims the volume. The tenant PV is removed (status Released first, so the
// tenant's pv-protection controller lets it go) when the super PV is deleted, released, or
// no longer bound to the tenant claim's super copy.
//
// # Not synced
//
// The syncer never writes super PVs. PVs the tenant creates itself are never synced down
// (a tenant PV could name any host path or disk of the shared super cluster) and never
// touched; see package persistentvolumeclaim for what happens to a claim that names one.
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/conversion, pkg/reconcile, pkg/resources, pkg/tenant); test/layering
// checks it.
package persistentvolume
