// Package refusals proves on real control planes that a refusal reads as on a real cluster: a
// Pod's Warning Event and its PodScheduled=False condition carry the same reason, a quota
// refusal names what is used and what the Pod asked for, the controller of refused Pods gets
// one Warning Event per reason, a refused Service carries tenancy.vcsyncer.io/Synced=False
// until it is synced, and the tenant DNS (a real CoreDNS with the documented
// `labels !tenancy.vcsyncer.io/refused`) leaves a refused Service unanswered.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package refusals
