// Package policy resolves the rules that decide what a tenant may pass to the super cluster
// (TenantPolicy, tenancy.vcsyncer.io/v1alpha1) and checks tenant objects against them. It is
// pure: no clients, no caches; the per-kind reconcilers in pkg/resources call it and report
// its Denials through pkg/admit (Deny). The checks of limits.maxObjects and limits.quota live
// in pkg/admit with the rest of the limits; limits.maxObjectBytes (CheckObjectBytes) stays here
// because pkg/tenant's informer transform applies it.
//
// # Usage
//
//	e := policy.Resolve(defaultPolicy, namedPolicy) // either may be nil
//	pods := e.Pods()                                 // every field set
//	if d := policy.CheckPod(pods, &pod.Spec, inPool); d != nil { ... report d, do not sync ... }
//	report := policy.FilterPod(pods, &superPod.Spec)  // drops what the policy filters
//
// # Implementation details
//
// Resolve layers three specs field by field: the built-in defaults (Builtin), the TenantPolicy
// named "default", and the TenantPolicy a Tenant names. A nil pointer, slice or map inherits;
// anything else, an empty list included, replaces. The result is immutable and carries a hash
// (Effective.Generation) that changes when any resolved value changes, so a refusal recorded
// under one generation is re-examined after the policy changes (Refusals).
//
// # Implementation considerations
//
// Every rule is an allowlist with a safe default: what a tenant may pass is listed, and
// anything a newer Kubernetes adds (a new volume source, a new Service field) is refused until
// an admin allows it. The built-in defaults follow the Pod Security "restricted" volume set
// and the VirtualCluster paper's threat model (tenants are untrusted).
//
// It sits on floor 1 of the package map in docs/architecture.md and may import packages on floors
// 0–1 only (today: pkg/apis/tenancy/v1alpha1); test/layering checks it.
package policy
