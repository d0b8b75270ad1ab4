// Package admission paces the creation of Pods in the super cluster so that one tenant's burst
// does not queue every other tenant's Pods behind it in the super scheduler.
//
// The super cluster's scheduler serves Pods first come, first served (within a priority), so
// the order the syncer's fair queue gives its workers is lost once Pods are created faster than
// the scheduler binds them. Window keeps the backlog in the syncer instead: it bounds the Pods
// created and not yet bound, shares that bound among tenants by weight, and adapts the bound to
// the scheduler's create-to-bind latency, so that at low load nothing waits.
//
// Budget counts each tenant's use of its tenant-wide budget (limits.quota over all of its
// namespaces): the charges of Pods, claims, Services and the other counted kinds, reserved
// before their super copies are created (or updated to cost more) and then observed from the
// super informers, and the objects parked for room, woken (first come, first served, those
// that fit) when an object of the tenant ends, is deleted or costs less:
//
//	b := admission.NewBudget(admission.BudgetOptions[Req]{Wake: requeue, Synced: handlersSynced})
//	ok, over, err := b.Reserve(tenant, req, "Kind/ns/name", charge, hard) // !ok: parked, report over
//	... write the copy: b.Created(tenant, "Kind/ns/name"), or on failure b.Release(tenant, "Kind/ns/name")
//	b.Observe(tenant, "Kind/ns/name", chargeOrNil)                         // from the super informers
//
// # Usage
//
//	w := admission.New(admission.Options[Req]{Weight: weight, Wake: requeue})
//	ok, took := w.Acquire(tenant, req, "ns/name")
//	if !ok { return nil }                                  // waits; Wake runs req again
//	... create the Pod; if took: w.Created("ns/name"), or on failure w.Abort("ns/name")
//	w.Settle(tenant, req)                                  // after every run of req
//	w.Observe(tenant, "ns/name", created, pending, bound)  // from the super Pod informer
//	w.Adjust()                                              // every DefaultAdjustInterval
//
// SuperPodHandler is that Observe as a super Pod informer handler (SuperPodPending decides
// pending and bound from a cached or plain Pod, reading its status only when it is unbound).
//
// It sits on floor 0 of the package map in docs/architecture.md and may import packages on floors
// 0–0 only (today: pkg/conversion, pkg/podcache); test/layering checks it.
package admission
