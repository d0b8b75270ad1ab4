// Package reconcile is the engine every synced kind stands on: the generic tenant → super
// reconciler (Reconcile with a Spec), the kind descriptor built on it (Descriptor), the upward
// status pair (UpwardPair), refusal reports (Report, Refuse, Rejected), conflict handling
// (Conflict) and the syncer's field manager. It sits below the kinds (pkg/resources/<kind>,
// pkg/vnode) and the orchestration (pkg/syncer).
//
// A kind whose super copy is a plain translation of the tenant object (ConfigMap, Secret,
// ServiceAccount, NetworkPolicy, Ingress, PodDisruptionBudget) is one Descriptor value: its
// informer, super client, Skip, Refuse, Desired and Equal. A *Descriptor is a
// resources.Resource (Downward runs Reconcile with the Spec it builds) and a resources.Checker
// (the drift check uses the same Desired and Equal). Kinds with more to do embed a Descriptor
// and add methods (Ingress's upward status); kinds with a life cycle of their own (Pod,
// Namespace, PersistentVolumeClaim) write their own reconciler from the same steps.
//
// A cluster-scoped super kind copied up into the tenants that may use it (public
// PriorityClasses, the RuntimeClasses a tenant's policy allows) is one SharedClass value: its
// caches, clients, which tenants get a copy, Desired, Equal and Merge (what an update may
// change; anything else recreates the copy).
//
// # Implementation details
//
// Reconcile reads both caches, never the apiservers: tenant object refused by the tenant's
// policy (Spec.Refuse) → report it, delete any super copy; tenant object missing or being deleted
// → delete the super copy (with a UID precondition, and only if the tenant owns it); super copy
// missing → the tenant's budget (resources.AdmitBudget with policy.ObjectCharge of the
// desired copy: an object without room is reported once per version, QuotaExceeded, and
// parked, not retried; Spec.Waits adds a condition), ensure the super namespace, create;
// otherwise update only when Spec.Equal says the owned fields differ, after the budget when
// the update costs more (resources.AdmitBudgetChange). A super object at the mapped name that the tenant does not own is never
// touched: Reconcile returns resources.ErrNotOwned and records a Warning Event on the tenant
// object. Nor is a super namespace that holds another tenant namespace of the same tenant (the
// two names collide): admit.ErrNamespaceCollision, reported on the tenant Namespace.
//
// It sits on floor 4 of the package map in docs/architecture.md and may import packages on floors
// 0–4 only (today: pkg/admit, pkg/conversion, pkg/policy, pkg/resources, pkg/tenant); test/layering checks it.
package reconcile
