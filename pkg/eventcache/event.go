package eventcache

import (
	"bytes"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// Event is an Event as an informer caches it: its metadata decoded and the rest encoded.
type Event struct {
	metav1.ObjectMeta
	rest []byte // protobuf of a corev1.Event whose ObjectMeta is empty
}

var (
	_ metav1.Object  = (*Event)(nil)
	_ runtime.Object = (*Event)(nil)
)

// New returns the cached form of e (which keeps e's metadata maps and slices; e must not be
// modified afterwards). It returns an error only when the Event cannot be encoded, which the
// generated protobuf marshaller never does for a decoded object.
func New(e *corev1.Event) (*Event, error) {
	rest := *e // a shallow copy: e is left as it was
	rest.TypeMeta, rest.ObjectMeta = metav1.TypeMeta{}, metav1.ObjectMeta{}
	b, err := rest.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encoding Event %s/%s: %w", e.Namespace, e.Name, err)
	}
	return &Event{ObjectMeta: e.ObjectMeta, rest: b}, nil
}

// Event decodes the cached Event into a new *corev1.Event that shares the metadata's maps and
// slices with the cache (read-only, as any cached object). Its TypeMeta is empty, as that of
// objects decoded by informers. It returns an error when the stored encoding does not decode,
// which cannot happen for an Event built by New.
func (e *Event) Event() (*corev1.Event, error) {
	out := &corev1.Event{}
	if err := out.Unmarshal(e.rest); err != nil {
		return nil, fmt.Errorf("decoding the cached Event %s/%s: %w", e.Namespace, e.Name, err)
	}
	out.ObjectMeta = e.ObjectMeta
	return out, nil
}

// GetObjectKind implements runtime.Object: a cached Event reports v1 Event; setting it does
// nothing.
func (e *Event) GetObjectKind() schema.ObjectKind { return eventKind{} }

type eventKind struct{}

func (eventKind) SetGroupVersionKind(schema.GroupVersionKind) {}
func (eventKind) GroupVersionKind() schema.GroupVersionKind {
	return corev1.SchemeGroupVersion.WithKind("Event")
}

// DeepCopyObject implements runtime.Object.
func (e *Event) DeepCopyObject() runtime.Object {
	out := &Event{rest: bytes.Clone(e.rest)}
	e.DeepCopyInto(&out.ObjectMeta)
	return out
}

// From returns obj as a *corev1.Event: a cached Event decoded (see Event.Event) or a
// *corev1.Event as it is. It returns false for anything else (a cache.DeletedFinalStateUnknown
// included: its Obj is what to pass), and for a cached Event whose encoding does not decode.
func From(obj any) (*corev1.Event, bool) {
	switch e := obj.(type) {
	case *corev1.Event:
		return e, true
	case *Event:
		full, err := e.Event()
		return full, err == nil
	}
	return nil, false
}

// Get returns the Event namespace/name cached in indexer (an informer's), decoded, or a
// NotFound error (apierrors.IsNotFound) when the cache holds no Event under that key.
func Get(indexer cache.Indexer, namespace, name string) (*corev1.Event, error) {
	obj, exists, err := indexer.GetByKey(namespace + "/" + name)
	if err != nil {
		return nil, err
	}
	if e, ok := From(obj); exists && ok {
		return e, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("event"), name)
}
