// Package persistentvolumeclaim syncs PersistentVolumeClaims: specs downward (tenant →
// super), binding and status upward. Claims made by a tenant's StatefulSet controller from
// volumeClaimTemplates, or by its ephemeral-volume controller, are ordinary claims here.
//
// # Downward
//
// The super claim is the tenant claim in the mapped namespace (see Desired), without the
// binding annotations each cluster's PV controller writes (pv.kubernetes.io/*,
// volume.kubernetes.io/*, volume.beta.kubernetes.io/storage-provisioner). A claim's spec is
// immutable apart from its storage request and volumeAttributesClassName, so only those (and
// labels and annotations) are updated; spec.volumeName, once the super cluster set it, is
// never changed.
//
// The super claim's class is the one the PV controller reads from the tenant claim: the
// legacy volume.beta.kubernetes.io/storage-class annotation (even "") before
// spec.storageClassName; for a claim with neither, the super cluster's default class (as its
// DefaultStorageClass admission would pick it, from all super classes), or "" when it has
// none. The class goes into spec.storageClassName only; the annotation is not copied. A super
// claim that can only bind existing PVs (class "", a class the super cluster lacks or one
// with provisioner kubernetes.io/no-provisioner, or any claim with a selector) gets the
// selector label tenancy.vcsyncer.io/tenant-uid=<tenant UID>, so it binds only PVs that
// super-cluster admins labelled for this tenant (conversion.Confinement).
//
// spec.dataSource and spec.dataSourceRef may only name a PersistentVolumeClaim of the claim's
// own namespace (and only while the tenant policy's storage.allowDataSources is true):
// anything else (VolumeSnapshots, volume populators, claims of other namespaces) refuses the
// claim (rule storageDataSource: a PolicyDenied Warning Event, the denial metric, no super
// copy; it is looked at again when the claim or the policy changes). Data sources are checked
// when the super copy is made: a super claim made earlier is kept after a policy change.
//
// A claim naming a super StorageClass that is neither public nor allowed by the tenant
// policy's storage.allowedStorageClassNames is refused the same way (rule storageClass,
// storageclass.ClaimClassDenial), when the super copy would be made.
//
// A preset spec.volumeName maps as follows (SuperVolume):
//   - it names a tenant PV the syncer created: the super PV that tenant PV mirrors, provided
//     that super PV is already bound (claimRef) to this claim's super copy;
//   - it names no tenant PV: the super PV conversion.SuperVolumeName(tenant, volumeName),
//     "<tenant>-<hash>-<volumeName>". PV names are cluster-wide in the super cluster, so a
//     tenant only reaches PVs that super-cluster admins made for it; it can never name another
//     tenant's volume. storageClassName "" with a preset volumeName is static binding to that
//     super PV;
//   - it names a PV the tenant created itself: the claim cannot be served, because tenant PVs
//     are never synced down (a tenant PV could name any host path or disk of the shared super
//     cluster). The claim gets no super copy (an unbound one made earlier is deleted), stays
//     Pending, and gets a Warning Event with reason VolumeNotSynced; Pods using it stay
//     Pending in the super cluster ("persistentvolumeclaim not found").
//
// # Upward
//
// When the super claim is bound to a super PV, the tenant gets the PV (package
// persistentvolume), the tenant claim is bound to it (spec.volumeName and the
// pv.kubernetes.io/bind-completed annotation, as the tenant's own PV controller would), and
// the super claim's status (phase, capacity, access modes, conditions, allocated resources)
// is copied into the tenant claim. Tenant control planes run without the PV binder; a tenant
// whose binder runs sees the same pre-bound pair and agrees.
//
// # Generic ephemeral volumes
//
// A claim whose controller owner is a Pod (made by the tenant's ephemeral-volume controller,
// KEP-1698) is not synced down: the super Pod keeps its ephemeral volume and the super
// cluster's own ephemeral-volume controller makes the super claim "<pod>-<volume>" (same
// name) for it; a synced copy would collide with it. Once the super PV bound to that claim is
// Bound (and the super Pod is the syncer's copy of the claim's Pod), the tenant claim gets its
// tenant PV and is bound to it, with phase Bound and the PV's capacity and access modes.
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/admit, pkg/conversion, pkg/podcache, pkg/policy, pkg/reconcile, pkg/resources,
// pkg/resources/persistentvolume, pkg/resources/storageclass, pkg/tenant); test/layering checks
// it.
package persistentvolumeclaim
