package podcache

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Pod is a cached Pod: its metadata decoded, its spec and status kept as their protobuf
// encodings (see the package documentation). It implements metav1.Object and runtime.Object,
// so informers, key functions and indexers handle it as any other object. The zero value is a
// Pod with empty metadata, spec and status.
type Pod struct {
	metav1.ObjectMeta
	spec, status []byte
	full         bool // the spec is whole, not trimmed (NewFull)
}

var (
	_ metav1.Object  = (*Pod)(nil)
	_ runtime.Object = (*Pod)(nil)
)

// New returns the cached form of p (which keeps p's metadata maps and slices; p must not be
// modified afterwards). It returns an error only when the spec or status cannot be encoded,
// which the generated protobuf marshallers never do for a decoded object.
func New(p *corev1.Pod) (*Pod, error) {
	spec, err := p.Spec.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encoding the spec of Pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	status, err := p.Status.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encoding the status of Pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return &Pod{ObjectMeta: p.ObjectMeta, spec: spec, status: status}, nil
}

// NewFull is New for a Pod whose spec the caller did not trim: Full reports it, so a reader
// that needs the whole spec may take it from the cache instead of the apiserver.
func NewFull(p *corev1.Pod) (*Pod, error) {
	c, err := New(p)
	if err != nil {
		return nil, err
	}
	c.full = true
	return c, nil
}

// Full reports whether the cached Pod was made by NewFull (its spec is whole).
func (p *Pod) Full() bool { return p.full }

// Pod decodes the cached Pod into a new *corev1.Pod that shares the metadata's maps and
// slices with the cache (read-only, as any cached object). Its TypeMeta is empty, as that of
// objects decoded by informers. It returns an error when the stored encodings do not decode,
// which cannot happen for a Pod built by New.
func (p *Pod) Pod() (*corev1.Pod, error) {
	out := &corev1.Pod{ObjectMeta: p.ObjectMeta}
	if err := out.Spec.Unmarshal(p.spec); err != nil {
		return nil, fmt.Errorf("decoding the cached spec of Pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	if err := out.Status.Unmarshal(p.status); err != nil {
		return nil, fmt.Errorf("decoding the cached status of Pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return out, nil
}

// podSpecNodeName is the field number of nodeName in the v1.PodSpec protobuf message
// (k8s.io/api/core/v1/generated.proto).
const podSpecNodeName = 10

// NodeName returns the cached Pod's spec.nodeName, read from the spec's encoding without
// decoding the rest of it; "" when the spec has none or does not decode.
func (p *Pod) NodeName() string {
	b := p.spec
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		if num == podSpecNodeName && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return ""
			}
			return string(v)
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return ""
		}
		b = b[n:]
	}
	return ""
}

// NodeNameOf returns the spec.nodeName of a Pod given as a *corev1.Pod or a cached *Pod
// (decoding nothing else), and false for anything else.
func NodeNameOf(obj any) (string, bool) {
	switch p := obj.(type) {
	case *corev1.Pod:
		return p.Spec.NodeName, true
	case *Pod:
		return p.NodeName(), true
	}
	return "", false
}

// MetaOf returns the metadata of a Pod given as a *corev1.Pod or a cached *Pod, and false
// for anything else. Unlike From it does not check that a cached Pod's spec and status decode
// (New only stores encodings the generated marshallers wrote).
func MetaOf(obj any) (*metav1.ObjectMeta, bool) {
	switch p := obj.(type) {
	case *corev1.Pod:
		return &p.ObjectMeta, true
	case *Pod:
		return &p.ObjectMeta, true
	}
	return nil, false
}

// StatusOf returns the status of a Pod given as a *corev1.Pod or a cached *Pod (decoding only
// the status), and false for anything else or a status that does not decode.
func StatusOf(obj any) (*corev1.PodStatus, bool) {
	switch p := obj.(type) {
	case *corev1.Pod:
		return &p.Status, true
	case *Pod:
		var st corev1.PodStatus
		if err := st.Unmarshal(p.status); err != nil {
			return nil, false
		}
		return &st, true
	}
	return nil, false
}

// SpecEqual reports whether p and o have the same cached spec (the same encoding: the
// generated marshallers write the fields of equal specs in the same order).
func (p *Pod) SpecEqual(o *Pod) bool { return bytes.Equal(p.spec, o.spec) }

// GetObjectKind implements runtime.Object: a cached Pod reports v1 Pod (its type is in no
// scheme, so event recorders and reference builders learn its kind from here); setting it
// does nothing.
func (p *Pod) GetObjectKind() schema.ObjectKind { return podKind{} }

type podKind struct{}

func (podKind) SetGroupVersionKind(schema.GroupVersionKind) {}
func (podKind) GroupVersionKind() schema.GroupVersionKind {
	return corev1.SchemeGroupVersion.WithKind("Pod")
}

// DeepCopyObject implements runtime.Object.
func (p *Pod) DeepCopyObject() runtime.Object {
	out := &Pod{spec: bytes.Clone(p.spec), status: bytes.Clone(p.status), full: p.full}
	p.DeepCopyInto(&out.ObjectMeta)
	return out
}

// Marshal returns the protobuf encoding of the whole Pod, byte for byte what the Pod's
// generated Marshal writes (fields 1, 2 and 3 of a v1.Pod message: metadata, spec, status),
// so that checkpoints store a cached Pod as they store any other cached object. Only the
// metadata is encoded anew.
func (p *Pod) Marshal() ([]byte, error) {
	meta, err := p.ObjectMeta.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encoding the metadata of Pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	out := make([]byte, 0, len(meta)+len(p.spec)+len(p.status)+3*(1+binary.MaxVarintLen64))
	for i, field := range [][]byte{meta, p.spec, p.status} {
		out = append(out, byte((i+1)<<3|2)) // field number i+1, wire type 2 (length-delimited)
		out = binary.AppendUvarint(out, uint64(len(field)))
		out = append(out, field...)
	}
	return out, nil
}

// From returns obj as a *corev1.Pod: a cached Pod decoded (see Pod.Pod) or a *corev1.Pod as
// it is. It returns false for anything else (a cache.DeletedFinalStateUnknown included: its
// Obj is what to pass), and for a cached Pod whose encodings do not decode.
func From(obj any) (*corev1.Pod, bool) {
	switch p := obj.(type) {
	case *corev1.Pod:
		return p, true
	case *Pod:
		full, err := p.Pod()
		return full, err == nil
	}
	return nil, false
}

// Is reports whether obj is a Pod, cached or plain.
func Is(obj any) bool {
	switch obj.(type) {
	case *corev1.Pod, *Pod:
		return true
	}
	return false
}

// Size returns the size of the protobuf encoding of the whole cached Pod (what Marshal
// returns), computing only the metadata's size anew: the bytes the cache holds for it, as
// policy.ObjectBytes counts them.
func (p *Pod) Size() int {
	n := 0
	for _, l := range []int{p.ObjectMeta.Size(), len(p.spec), len(p.status)} {
		n += 1 + uvarintLen(uint64(l)) + l
	}
	return n
}

// uvarintLen returns the length of the protobuf varint encoding of v.
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// NewBare returns a cached Pod with metadata meta (kept as it is) whose spec names node
// nodeName ("" for none) and nothing else, and whose status is empty: the form of a Pod that
// a cache keeps out but whose placement (the vNode it is bound to) must stay known. Bare
// reports it.
func NewBare(meta metav1.ObjectMeta, nodeName string) *Pod {
	spec, _ := (&corev1.PodSpec{NodeName: nodeName}).Marshal() // a decoded spec always encodes
	return &Pod{ObjectMeta: meta, spec: spec}
}

// Bare reports whether the cached Pod has the shape NewBare gives: an empty status and a spec
// without containers (the apiserver never accepts a Pod without one).
func (p *Pod) Bare() bool {
	if len(p.status) > 0 {
		return false
	}
	var spec corev1.PodSpec
	if err := spec.Unmarshal(p.spec); err != nil {
		return false
	}
	return len(spec.Containers) == 0 && len(spec.InitContainers) == 0
}
