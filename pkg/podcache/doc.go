// Package podcache is the compact form in which the syncer's informers cache Pods, and the
// readers that hand callers ordinary *corev1.Pod values from such caches.
//
// # Usage
//
// An informer transform returns New(trimmed) for each Pod it caches, or NewFull(pod) for a Pod
// whose whole spec it keeps (the tenant transform, for a Pod not yet bound: Full reports it,
// and the syncer makes the super Pod from it without reading the tenant Pod again). Code that reads a Pod
// cache goes through From (one object from an event handler or a store) or NewLister (a
// lister over an informer's indexer); both accept plain *corev1.Pod objects too, so unit
// tests may fill stores with ordinary Pods.
//
// # Implementation details
//
// A cached Pod keeps its metadata decoded, so key functions, indexers and event handlers read
// it as any metav1.Object, and keeps its (trimmed) spec and its status as their protobuf
// encodings, decoded on each read. A decoded *corev1.Pod is a 1.2 KB struct, most of it an
// empty PodSpec, plus separate allocations for every container, volume, condition and
// container status; the encodings of a trimmed spec and a status take a few hundred bytes in
// one allocation each.
//
// # Implementation considerations
//
// Reading a cached Pod costs a decode of its spec and status (a few microseconds) and
// allocates a new *corev1.Pod, whose metadata maps and slices are shared with the cache: like
// any object read from an informer's cache, it must not be modified (DeepCopy it first).
// Event handlers that need only the metadata, spec.nodeName or the status use MetaOf,
// NodeNameOf (which skips through the spec's encoding to field 10, about 40 times cheaper than
// a decode) and StatusOf: every Pod event runs several of them. LiveIPs and ChangedIPs
// (ips.go) read a Pod's addresses from its status the same way: the addresses a super Pod's
// update freed or gained, whose Endpoints and EndpointSlices the syncer then reconciles.
// StatusOnly (update.go) tells an update that changed only a Pod's status from one that
// changed its metadata or spec, comparing cached Pods' specs encoded, without a decode;
// StatusOrBindingOnly also lets a binding (spec.nodeName set) through, comparing the rest of
// the encoded specs.
//
// It sits on floor 0 of the package map in docs/architecture.md and may import packages on floors
// 0–0 only (today: none of the module's packages); test/layering checks it.
package podcache
