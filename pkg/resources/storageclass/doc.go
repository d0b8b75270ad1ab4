// Package storageclass syncs public StorageClasses upward (super → tenant).
//
// # Upward
//
// Super-cluster admins mark a StorageClass public with the label
// tenancy.vcsyncer.io/public=true (conversion.LabelPublic). Every tenant then gets a copy (see
// Desired) labelled tenancy.vcsyncer.io/managed-by=vc-syncer, so tenant claims can name the
// class and a default class (the storageclass.kubernetes.io/is-default-class annotation is
// copied) is applied by the tenant apiserver's DefaultStorageClass admission as in the super
// cluster. The copy is removed when the label is removed or the super class is deleted, and
// replaced when the super class is recreated with other immutable fields.
//
// # Which classes a claim may name
//
// The public label decides what tenants may use as well as what they see: a tenant claim (or a
// generic ephemeral volume's claim template) naming a super class that is neither public nor
// listed in its policy's storage.allowedStorageClassNames is refused, rule storageClass
// (ClaimClassDenial; the claim or Pod gets a PolicyDenied Warning Event and is not synced).
// Such a claim could bind an Available PV the provider made in that class for another tenant.
// Class "" and names the super cluster has no class of are not refused: their super claims
// bind only PVs labelled for the tenant (conversion.Confinement).
//
// # Not synced
//
// The syncer never writes super StorageClasses. A StorageClass the tenant created itself is
// left alone, even when a public class has the same name: the tenant's class wins in the
// tenant, and claims naming it go to the super cluster with that class name (served by the
// super class of that name only when the tenant may use that class, see above).
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/apis/tenancy/v1alpha1, pkg/conversion, pkg/policy, pkg/reconcile,
// pkg/resources, pkg/tenant); test/layering
// checks it.
package storageclass
