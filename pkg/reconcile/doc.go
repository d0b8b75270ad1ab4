// Package reconcile is the engine every synced kind stands on: the generic tenant → super
// reconciler (Reconcile with a Spec), the upward status pair (UpwardPair), refusal reports
// (Report, Refuse, Rejected), conflict handling (Conflict) and the syncer's field manager. It
// sits below the kinds (pkg/resources/<kind>, pkg/vnode) and the orchestration (pkg/syncer)
// and may import pkg/resources (the shared kind interfaces and helpers), pkg/conversion,
// pkg/policy, pkg/tenant and client libraries, never a kind's package or pkg/syncer.
//
// Kinds whose super copy is a plain translation of the tenant object (ConfigMap, Secret,
// ServiceAccount, Service) use Reconcile with a Spec; kinds with a life cycle of their own
// (Pod, Namespace) write their own reconciler from the same steps.
//
// # Implementation details
//
// Reconcile reads both caches, never the apiservers: tenant object refused by the tenant's
// policy (Spec.Refuse) → report it, delete any super copy; tenant object missing or being deleted
// → delete the super copy (with a UID precondition, and only if the tenant owns it); super copy
// missing → ensure the super namespace, create; otherwise update only when Spec.Equal says the
// owned fields differ. A super object at the mapped name that the tenant does not own is never
// touched: Reconcile returns resources.ErrNotOwned and records a Warning Event on the tenant
// object. Nor is a super namespace that holds another tenant namespace of the same tenant (the
// two names collide): resources.ErrNamespaceCollision, reported on the tenant Namespace.
package reconcile
