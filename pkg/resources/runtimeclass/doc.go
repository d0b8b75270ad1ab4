// Package runtimeclass syncs the super cluster's RuntimeClasses that a tenant's policy allows
// upward into that tenant.
//
// A tenant Pod may name a RuntimeClass only when the tenant's apiserver has it (its
// RuntimeClass admission plugin refuses a Pod naming an unknown class), and the super Pod may
// carry the name only when the tenant's Pod policy allows it (pods.allowedRuntimeClassNames or
// pods.defaultRuntimeClassName; policy.RuntimeClassAllowed). So each super RuntimeClass the
// policy allows gets a copy in the tenant, labelled tenancy.vcsyncer.io/managed-by=vc-syncer
// there, and a Pod naming it is synced with the name and runs with the super class. A copy is
// deleted when the super class is deleted or the policy stops allowing it; a policy change
// re-examines every class of the tenant (the syncer's PolicyChanged hook). The allowlist is
// the provider's: no class reaches a tenant unless its policy names it, whatever labels the
// super class carries.
//
// # Translation
//
// handler and overhead are copied, so the tenant's admission gives the tenant Pod the same
// spec.overhead the super admission gives its super Pod (the super Pod never carries the
// tenant's overhead; pkg/resources/pod). scheduling is not copied: the super admission adds its
// node selector and tolerations to the super Pod, and in the tenant they would put node label
// keys into the tenant Pod that its node-placement policy may refuse. handler is immutable, so
// a copy whose super class was recreated with another handler is recreated.
//
// # Not synced
//
// The syncer never writes super RuntimeClasses. A RuntimeClass the tenant created itself is
// never touched, even when an allowed super class has the same name; a Pod naming it runs
// with the super class of that name (pkg/resources/pod, localRuntimeClass, for a class only
// the tenant has).
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/conversion, pkg/policy, pkg/reconcile, pkg/resources, pkg/tenant);
// test/layering checks it.
package runtimeclass
