// Package trackingqueue is client-go's rate-limiting workqueue that can list every unfinished
// item (Snapshot), so a checkpoint can save it, and be pre-seeded with them (Seed), so a
// restarted syncer resumes that work instead of losing it or re-listing everything. It is part
// (a) of the checkpointing design (/work/shared/design/checkpointing.md, sections 1, 4.2, 4.8).
//
// # Usage
//
//	q := trackingqueue.New(trackingqueue.Config[Request]{
//		Name:        "downward",
//		RateLimiter: workqueue.DefaultTypedControllerRateLimiter[Request](),
//		Storage:     fairqueue.New(...), // optional; FIFO by default
//	})
//	q.Seed(restored)             // before workers start
//	... workers: Get / Done / AddRateLimited / Forget as with any client-go queue ...
//	if q.Size() <= budget { save(q.Snapshot()) } // after the source positions (design 4.5)
//
// Invariant (I1): at any instant, every item with an outstanding reconcile obligation is in
// Snapshot(). An obligation is created by an Add that returned, by an AddAfter or
// AddRateLimited whose readyAt has not been reached by a reconcile that started at or after it,
// and by a Get whose Done has not returned. Snapshot may over-report (at most one extra
// reconcile per item after Seed), never under-report.
//
// # Implementation details
//
// The queue is built from client-go v0.37.2's three public hooks (design 1.3):
//
//	rate limiting (client-go) → AddAfter observer (hook 3) → delaying (client-go)
//	  → tracking core (hook 2, embeds *workqueue.Typed) → Typed → storage spy (hook 1) → storage
//
// Each added layer has one job:
//
//   - The storage spy sees Push (queued) and Pop (queued → processing) under Typed's own lock,
//     so the mirror cannot miss an Add that races with a Get (R1: a wrapper around an opaque
//     queue updates its mirror after Get returns and loses that Add).
//   - The core overrides Add (orphans after shutdown, discharge of delay windows), Get (reports
//     shutdown at once after ShutDown, R5) and Done (decrements the processing count only after
//     Typed.Done has re-pushed an item added while processing, R2).
//   - The observer records a {Earliest, Latest} readyAt window per item on AddAfter, because
//     client-go keeps delayed items in a heap local to its waiting goroutine. The window is
//     cleared only by an Add or a Get of the item at or after Latest (R6).
//
// # Implementation considerations
//
//   - Lock order (R3): Typed's lock → tracker.mu, taken only by the storage spy. The core
//     decides "shutting down" from its own atomic flag, set before Typed's, so it never needs
//     Typed's lock while holding tracker.mu.
//   - Windows over-report: when client-go coalesces a later AddAfter into an earlier heap entry,
//     nothing fires at Latest, and the window stays until the next Add or Get of the item at or
//     after Latest (or until Seed turns it into one extra reconcile, after which it is gone).
//     Per item there is at most one window.
//   - Not tracked: the rate limiter's per-item failure counts (backoff restarts at its base
//     after Seed) and priorities.
//   - Behaviour differences from client-go, as in controller-runtime's priority queue: Get
//     reports shutdown at once after ShutDown, and ShutDownWithDrain waits only for items
//     already handed out.
//
// It sits on floor 0 of the package map in docs/architecture.md and may import packages on floors
// 0–0 only (today: none of the module's packages); test/layering checks it.
package trackingqueue
