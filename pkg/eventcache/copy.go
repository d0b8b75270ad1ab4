package eventcache

import (
	"crypto/sha256"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// Copy is a tenant Event labelled as the syncer's copy of a super Event, as the tenant
// informer caches it: its name, namespace, UID, resourceVersion and deletion timestamp, and
// the Digest of what the copy shows. Everything else (labels, annotations, the shown fields
// themselves) is dropped, so an entry takes a bounded number of bytes (Size) whatever a tenant
// writes into an Event it labels as the syncer's.
type Copy struct {
	metav1.ObjectMeta
	// Digest is ShownDigest of the Event; zero for a stub (tenant.AnnotationHeldOut).
	Digest [sha256.Size]byte
}

var (
	_ metav1.Object  = (*Copy)(nil)
	_ runtime.Object = (*Copy)(nil)
)

// NewCopy returns the cached form of tenant Event e (e is not modified).
func NewCopy(e *corev1.Event) *Copy {
	return &Copy{
		ObjectMeta: metav1.ObjectMeta{
			Name: e.Name, Namespace: e.Namespace, UID: e.UID, ResourceVersion: e.ResourceVersion,
			CreationTimestamp: e.CreationTimestamp, DeletionTimestamp: e.DeletionTimestamp,
		},
		Digest: ShownDigest(e),
	}
}

// ShownDigest returns the SHA-256 of what Event e shows a user: its involved object, reason,
// message, type, count, first and last timestamps and series (the protobuf encoding of an
// Event with those fields only). Two Events whose shown fields are equal (timestamps to the
// second, the series' last observed time to the microsecond, as the apiserver stores them)
// have the same digest.
func ShownDigest(e *corev1.Event) [sha256.Size]byte {
	shown := corev1.Event{
		InvolvedObject: e.InvolvedObject, Reason: e.Reason, Message: e.Message, Type: e.Type, Count: e.Count,
		FirstTimestamp: metav1.NewTime(e.FirstTimestamp.Rfc3339Copy().UTC()),
		LastTimestamp:  metav1.NewTime(e.LastTimestamp.Rfc3339Copy().UTC()),
	}
	if e.FirstTimestamp.IsZero() {
		shown.FirstTimestamp = metav1.Time{}
	}
	if e.LastTimestamp.IsZero() {
		shown.LastTimestamp = metav1.Time{}
	}
	if e.Series != nil {
		shown.Series = &corev1.EventSeries{Count: e.Series.Count,
			LastObservedTime: metav1.NewMicroTime(e.Series.LastObservedTime.Truncate(1000).UTC())}
		if e.Series.LastObservedTime.IsZero() {
			shown.Series.LastObservedTime = metav1.MicroTime{}
		}
	}
	b, err := shown.Marshal()
	if err != nil {
		// The generated marshaller does not fail on a value built here; a zero digest makes
		// the copy look stale, so it is written again.
		return [sha256.Size]byte{}
	}
	return sha256.Sum256(b)
}

// Size returns an estimate of the bytes the cached Copy takes in the informer's cache: its
// strings and a fixed 640 bytes for the struct, its metadata and the cache's index entries
// (about 750 bytes in all were measured per entry). It bounds the entry whatever the tenant's Event held
// (policy.ObjectBytes reads it).
func (c *Copy) Size() int {
	n := 640 + len(c.Name) + len(c.Namespace) + len(c.UID) + len(c.ResourceVersion) + sha256.Size
	for k, v := range c.Annotations { // a stub's one annotation
		n += len(k) + len(v)
	}
	return n
}

// GetObjectKind implements runtime.Object: a Copy reports v1 Event; setting it does nothing.
func (c *Copy) GetObjectKind() schema.ObjectKind { return eventKind{} }

// DeepCopyObject implements runtime.Object.
func (c *Copy) DeepCopyObject() runtime.Object {
	out := &Copy{Digest: c.Digest}
	c.DeepCopyInto(&out.ObjectMeta)
	return out
}

// GetCopy returns the Copy namespace/name cached in indexer (the tenant Event informer's), or
// a NotFound error (apierrors.IsNotFound) when the cache holds none under that key. A plain
// *corev1.Event in the cache (unit tests fill stores with them) is returned as its Copy.
func GetCopy(indexer cache.Indexer, namespace, name string) (*Copy, error) {
	obj, exists, err := indexer.GetByKey(namespace + "/" + name)
	if err != nil {
		return nil, err
	}
	if exists {
		switch o := obj.(type) {
		case *Copy:
			return o, nil
		case *corev1.Event:
			return NewCopy(o), nil
		}
	}
	return nil, apierrors.NewNotFound(corev1.Resource("event"), name)
}
