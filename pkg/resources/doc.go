// Package resources defines the Resource interface every synced kind implements, the request
// type both pipelines carry, and the environment (super-cluster clients and caches) that
// reconcilers read.
//
// # Usage
//
// Each kind lives in pkg/resources/<kind>. A plain kind is one reconcile.Descriptor value
// (informer, super client, Desired, Equal) in resource.go beside its translation; a kind with
// a life cycle of its own has resource.go (informers and event mapping), downward.go
// (tenant → super) and, where it has one, upward.go (super → tenant). The syncer (pkg/syncer) builds one Env, registers every Resource's
// informers and dispatches requests from its two queues to Downward and Upward.
//
// # Implementation details
//
// Reconcilers are level-triggered: they read the tenant cache, the super cache, compute the
// desired object and write only on a real difference. They never parse super names to find
// the tenant object; requests carry the tenant namespace and name.
//
// It sits on floor 3 of the package map in docs/architecture.md and may import packages on floors
// 0–3 only (today: pkg/admission, pkg/conversion, pkg/policy, pkg/tenant); test/layering checks it.
package resources
