// Package admit decides whether a tenant object reaches the super cluster under its tenant's
// policy limits, and records and signals every refusal: the one path a tenant object takes
// between "the reconciler has it" and "its super copy may be written", in one place.
//
// # What it owns
//
//   - The refusal records and their signals (refusals.go): Deny, Filtered, KeepRefused,
//     Admitted, Gone, IsRefused, RecordRejected, IsRejected, HeldOut and ReportDroppedMeta.
//     Every refusal, of any policy rule, is reported here: a Warning Event on the tenant
//     object, one count of vcsyncer_policy_denials_total, once per object version and policy
//     generation (the records live in tenant.Cluster.Refusals, a policy.Refusals).
//   - The object count cap, limits.maxObjects (counts.go: which keys are admitted and refused
//     per tenant and kind; count.go: the Gate's Admit, AdmitInitial, Release, Raise, SkipRefused).
//   - The bytes held per tenant, limits.maxObjectBytes and limits.maxCachedBytes, past the
//     tenant informers' transform (held.go: ReleaseHeld, ReadmitHeld, ReadmitOnce).
//   - The super namespace's bounds, limits.quota and limits.limitRange (bounds.go: the
//     ResourceQuota and LimitRange in each super namespace; quota.go and checks.go: whether the
//     quota has room for an object, DenyQuota; waiting.go: the wake of objects that waited for
//     a quota to be computed).
//   - The tenants' budgets, limits.quota counted over all of a tenant's namespaces (budget.go:
//     NewBudget feeds an admission.Budget from the super informers with each owned super
//     object's charge; resources.BudgetHold reserves in it).
//   - The super namespace itself (namespace.go: EnsureSuperNamespace, which every kind calls
//     before it writes into a namespace: collision, held-out and count checks, then the bounds)
//     and namespace collisions (collision.go: CheckNamespaceCollision, RefuseNamespaceCollision;
//     colliders.go: the wake of the refused namespaces when a super namespace is freed).
//
// # Inputs and outputs
//
// In: the tenant's resolved policy (c.Policy().Limits()), the tenant and super caches
// (tenant.Cluster informers, resources.Env.SuperInformers), and, for the Gate, the syncer's
// pipelines (Pipelines: enqueue, its synced kinds, its super caches, its readiness).
// Out: a decision (bool, a *policy.Denial, or a wrapped ErrNoQuotaRoom, ErrBoundsPending,
// ErrNamespaceRefused, ErrNamespaceCollision that the workers read as retry or final);
// Warning Events and conditions on tenant objects; vcsyncer_policy_denials_total; writes of the
// syncer's ResourceQuota and LimitRange and of super Namespaces to the super apiserver; reads
// of held-out objects from the tenant apiserver; requests enqueued through Pipelines.
//
// # Usage
//
// Reconcilers (pkg/reconcile, pkg/resources/<kind>) call the functions: EnsureSuperNamespace,
// CheckNamespaceCollision, CheckQuota and DenyQuota, HeldOut, Deny, Admitted, Gone. The syncer
// builds one Gate (NewGate, with its Pipelines and pod.MarkPolicyDenied, which this package
// cannot import) and calls it from its handlers (pkg/syncer/limits.go lists where); it builds
// the tenants' budgets with NewBudget, once it knows the kinds it syncs.
//
// # Lock rules
//
// The budget's charge interner has a mutex of its own, held only while it reads or writes its
// map. The Gate's count state and its readmit runs each have a mutex of their own, held only while
// their maps are read or written, never while calling Pipelines, the Cluster or an apiserver.
// Pipelines is called with no lock of this package held, from event handlers (which must not
// block: Down and Up only enqueue) and from workers. ReadmitHeld reads from the tenant
// apiserver in a goroutine of its own, at most one per tenant. The refusal records are
// tenant.Cluster.Refusals, safe for concurrent use. The package-level functions hold no state.
//
// It sits on floor 4 of the package map in docs/architecture.md and may import packages on
// floors 0–4 only (today: pkg/admission, pkg/apis/tenancy/v1alpha1, pkg/checkpoint/source, pkg/conversion,
// pkg/metrics, pkg/podcache, pkg/policy, pkg/resources, pkg/tenant); test/layering checks it.
package admit
