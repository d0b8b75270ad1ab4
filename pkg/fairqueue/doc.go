// Package fairqueue is a client-go workqueue ordering (workqueue.Queue[T]) that shares workers
// fairly between tenants: one FIFO sub-queue per tenant, dispatched by weighted deficit
// round-robin, with two priority lanes inside each tenant.
//
// # Usage
//
// Build a Queue with New, then plug it into a client-go queue through
// workqueue.TypedQueueConfig.Queue (or TypedRateLimitingQueueConfig.DelayingQueue's config).
// Producers call AddLow before Add for low-priority work (initial lists, resyncs,
// remediation); a plain Add is high priority. See example_test.go.
//
// # Implementation details
//
// Deficit round-robin (Shreedhar and Varghese, SIGCOMM 1995) with unit-cost items: tenants
// with queued items form a ring; the tenant at the ring's cursor is served up to its weight
// (Tenant.spec.weight, read through Options.Weight each time its quantum is refilled, so
// weight changes take effect without a restart) before the cursor moves on. With all weights
// 1 this is plain round-robin, as in the VirtualCluster paper. Push, Pop and Touch are O(1)
// amortised, independent of the number of tenants.
//
// With Options.Workers set, the queue also counts each tenant's items in flight (popped, Done
// not called yet) and, while other tenants have items queued, skips a tenant that holds its
// weighted share of the workers, ceil(Workers × weight ÷ Σ weights of the tenants with queued
// items); the skipped tenant keeps its credit. This is the worker-seat idea of the apiserver's
// API Priority and Fairness (KEP-1040) applied to a workqueue: a tenant whose items are slow
// (its apiserver answers slowly) holds at most its share of the workers, never all of them,
// and a tenant alone still uses every worker. The weight sum is kept incrementally, and at
// most Workers-1 tenants can be at their cap, so a Pop walks at most Workers ring entries.
//
// Options.Reserve keeps workers free for the other tenants: a tenant holds at most
// Workers-Reserve items in flight even alone, so another tenant's first items start at once
// instead of waiting for one of a slow tenant's items to finish (with the work-conserving cap
// alone, a tenant whose requests take 25 s could hold every worker when another tenant's Pod
// arrived). Options.Limiter (a Budget: per-tenant token buckets sharing a rate by weight,
// charged after the work is done) takes a tenant in debt out of the ring until its bucket is
// back at zero; its items stay queued, hold no worker, and come back on a timer. With either,
// client-go's Get no longer suffices to wait (it waits only while Len is 0), so each worker
// calls Wait first: it blocks on the queue's own condition until an item it may take exists,
// counting the workers let through and not popped yet.
//
// Options.SlowAfter (the slow-tenant cap, slow.go) closes what the reserve leaves open: with the
// cap counting only the tenants with items queued, a tenant whose items are slow takes back
// every worker a neighbour frees whenever the neighbour's queue is empty for a moment, so a
// neighbour with sparse work (a few Pods a second) is left with the reserve between two of the
// slow tenant's items. The queue keeps a moving average of each tenant's hold time (Pop to
// Done); a tenant at or above SlowAfter leaves every other active tenant (in the ring, with
// items in flight, or with an item Done less than ActiveFor ago) its recent demand plus one
// worker, at most that tenant's weighted share among the active tenants, and is never held
// below its own share among them. The demand is the most items in flight at once in the last
// one to two ActiveFor. So a neighbour with a few quick items costs the slow tenant a few
// workers, not a whole share, and the next item of each neighbour finds a free worker. A quick
// tenant keeps the work-conserving cap (its workers come back within one of its short items),
// and a slow tenant alone still uses every worker but Reserve: the cap gives up work only for
// ActiveFor after a neighbour's last item, by that neighbour's recent demand plus one. When
// every tenant is slow (a starved syncer), each leaves the others their demand, which keeps
// the queue close to work-conserving (TestSlowCapWhenEveryTenantIsSlow). Weights of idle
// active tenants are kept in idleWeight as their sub-queues are reclaimed, and swept out after
// ActiveFor; a timer wakes the waiters when one stops counting. A slow tenant's first items,
// before any of them is Done, are not known to be slow: the reserve covers them.
//
// Inside a tenant, the high lane is served first, but while the low lane is not empty at
// least one item in every LowEvery pops comes from it, so low-priority work is never starved
// (controller-runtime's priority queue gives its initial list low priority in the same way).
// An item added with high priority while it waits in the low lane is promoted: a new entry
// goes to the high lane and the old one is skipped lazily.
//
// # Implementation considerations
//
// client-go's Typed queue keeps the dirty and processing sets, so its guarantees hold
// unchanged: an item is never handed to two workers at once, an item added while processing
// is queued again on Done, duplicates collapse. A sub-queue is reclaimed as soon as it holds
// no item; this is safe here because processing state lives in client-go's sets, not in the
// sub-queue (the original syncer lost items when it reclaimed a sub-queue whose item was being
// processed).
//
// Budget is charged with work done after the fact; for the syncer that work is super writes,
// counted per reconcile by CountWrites (a transport wrapper) into the WriteCounter of the
// reconcile's context (WithWriteCounter). A counter is one atomic integer; the transport holds
// no lock.
//
// It sits on floor 0 of the package map in docs/architecture.md and may import packages on floors
// 0–0 only (today: none of the module's packages); test/layering checks it.
package fairqueue
