// Package source makes informers resumable from a checkpoint.
//
// A Source is one cache the syncer watches: one tenant's or the super cluster's informer of one
// kind. It is identified by an ID such as "tenant/blue/Pod" or "super/ConfigMap", and keeps
// three things that a checkpoint records (State):
//
//   - the position: the resourceVersion the informer's cache is at (the last event, bookmark
//     or list applied to it; the reflector's own position runs ahead by the events still
//     queued for the cache);
//   - the objects in the informer's cache at that position (protobuf-encoded), so a restart can
//     start watching from the position without listing the world again;
//   - the ack map: for each object key, the (UID, resourceVersion) the syncer last handed to
//     its workqueue (or decided needed no work).
//
// The informer's cache runs ahead of its event handlers: events wait in per-handler buffers
// (client-go's processorListener), so a position taken from the informer may already include
// changes that were never enqueued (design notes, checkpointing.md finding 6). The ack map closes
// that gap: the handlers write it after they enqueue, and a change that reached the cache but
// not the queue shows up on resume as a cache object whose version differs from its ack entry.
// So on resume the syncer enqueues exactly the keys whose cached (UID, resourceVersion) differs
// from the ack map, plus the acked keys no longer cached (deleted while it was away), and nothing
// else. Positions are taken before objects and objects before the ack map, which with the
// synchronous ack-after-enqueue gives at-least-once delivery (checkpointing.md section 4.6).
//
// Resuming by position: the first list of a resumed informer is answered from the checkpoint
// (resourceVersion = position, no request to the apiserver), then the reflector watches from the
// position. An informer that streams its lists (client-go's watch-list, KEP-3157) is answered
// with a stream of the checkpointed objects and the initial-events-end bookmark at the
// position, followed by the apiserver's watch from there (resumedStream); one that lists with
// LIST requests (a scoped informer, a fake clientset) with a list. If the apiserver no longer
// has that history (410 Gone / "too old resource version"), the reflector lists once more, by
// a stream where it streams, and the diff against the ack map still enqueues only what changed
// (checkpointing.md sections 3.1, 3.2).
//
// It sits on floor 0 of the package map in docs/architecture.md and may import packages on floors
// 0–0 only (today: none of the module's packages); test/layering checks it.
package source
