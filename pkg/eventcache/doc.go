// Package eventcache is the compact form in which the syncer's informers cache Events: the
// super cluster's (Event, with readers that hand callers ordinary *corev1.Event values), and
// the syncer's copies in each tenant (Copy: a record of what a copy shows, of bounded size).
//
// # Usage
//
// The super Event informer's transform returns New(trimmed) for each Event; the tenant Event
// informer's returns NewCopy(e), and the copier compares a Copy's Digest with ShownDigest of
// the copy it would write (GetCopy reads one from the cache). Code that reads an
// Event cache goes through From (one object from an event handler or a store) or NewLister (a
// lister over an informer's indexer); both accept plain *corev1.Event objects too, so unit
// tests may fill stores with ordinary Events.
//
// # Implementation details
//
// A cached Event keeps its metadata decoded, so key functions, indexers and event handlers
// read it as any metav1.Object, and keeps everything else (involved object, reason, message,
// source, timestamps, count, series, reporting fields) as the protobuf encoding of an Event
// without metadata, one allocation, decoded on each read. A decoded *corev1.Event is a 640-byte
// struct plus a separate allocation for each of its dozen strings; with Event sync on, the
// syncer caches two Events per synced Pod (the super cluster's Scheduled Event and a record of
// the tenant's copy of it), so their form is part of the memory each synced Pod costs. A Copy
// keeps no labels, annotations or message: a tenant can label Events of its own as the
// syncer's copies, and whatever they carry must not reach the syncer's memory.
//
// # Implementation considerations
//
// Reading a cached Event costs a decode (about a microsecond) and allocates a new
// *corev1.Event whose metadata maps and slices are shared with the cache: like any object read
// from an informer's cache, it must not be modified (DeepCopy it first).
//
// It sits on floor 0 of the package map in docs/architecture.md and may import packages on
// floors 0–0 only (today: none of the module's packages); test/layering checks it.
package eventcache
