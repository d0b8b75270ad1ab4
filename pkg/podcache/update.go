package podcache

import (
	"bytes"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StatusOnly reports whether a Pod's update (oldObj, newObj: *corev1.Pod or cached *Pod)
// changed nothing but its status (and resourceVersion). For other kinds it returns false.
func StatusOnly(oldObj, newObj any) bool {
	if o, ok := oldObj.(*Pod); ok {
		if n, ok := newObj.(*Pod); ok { // cached Pods: their specs compare encoded
			return metaOnlyStatus(&o.ObjectMeta, &n.ObjectMeta) && o.SpecEqual(n)
		}
	}
	o, ok1 := From(oldObj)
	n, ok2 := From(newObj)
	if !ok1 || !ok2 {
		return false
	}
	return metaOnlyStatus(&o.ObjectMeta, &n.ObjectMeta) && equality.Semantic.DeepEqual(o.Spec, n.Spec)
}

// metaOnlyStatus reports whether two versions of a Pod's metadata are equal in what
// StatusOnly compares: UID, generation, deletion timestamp, labels and annotations.
func metaOnlyStatus(o, n *metav1.ObjectMeta) bool {
	return o.UID == n.UID && o.Generation == n.Generation &&
		equality.Semantic.DeepEqual(o.DeletionTimestamp, n.DeletionTimestamp) &&
		equality.Semantic.DeepEqual(o.Labels, n.Labels) &&
		equality.Semantic.DeepEqual(o.Annotations, n.Annotations)
}

// StatusOrBindingOnly reports whether a Pod's update (oldObj, newObj: *corev1.Pod or cached
// *Pod) changed nothing but its status and, from empty to a node, its spec.nodeName: what the
// scheduler's Binding and a kubelet write. For other kinds it returns false.
func StatusOrBindingOnly(oldObj, newObj any) bool {
	if o, ok := oldObj.(*Pod); ok {
		if n, ok := newObj.(*Pod); ok { // cached Pods: their specs compare encoded
			return metaOnlyStatus(&o.ObjectMeta, &n.ObjectMeta) && (o.SpecEqual(n) ||
				o.NodeName() == "" && n.NodeName() != "" && equalBut(o.spec, n.spec, podSpecNodeName))
		}
	}
	o, ok1 := From(oldObj)
	n, ok2 := From(newObj)
	if !ok1 || !ok2 || !metaOnlyStatus(&o.ObjectMeta, &n.ObjectMeta) {
		return false
	}
	os, ns := o.Spec, n.Spec
	if os.NodeName == "" && ns.NodeName != "" {
		ns.NodeName = "" // a binding: compare the rest
	}
	return equality.Semantic.DeepEqual(os, ns)
}

// equalBut reports whether two protobuf encodings are equal once field num (a length-delimited
// field written at most once, as the generated marshallers write a string) is left out of
// both; false when either does not parse up to that field (the bytes after it are compared,
// not parsed).
func equalBut(a, b []byte, num protowire.Number) bool {
	a1, a2, ok1 := splitAround(a, num)
	b1, b2, ok2 := splitAround(b, num)
	if !ok1 || !ok2 || len(a1)+len(a2) != len(b1)+len(b2) {
		return false
	}
	// Compare a1+a2 with b1+b2 without joining them.
	x, y := [2][]byte{a1, a2}, [2][]byte{b1, b2}
	for i, j := 0, 0; i < 2 && j < 2; {
		if len(x[i]) == 0 {
			i++
			continue
		}
		if len(y[j]) == 0 {
			j++
			continue
		}
		k := min(len(x[i]), len(y[j]))
		if !bytes.Equal(x[i][:k], y[j][:k]) {
			return false
		}
		x[i], y[j] = x[i][k:], y[j][k:]
	}
	return true
}

// splitAround returns the encoding before and after field num (all of b and nothing when the
// field is absent); ok is false when b does not parse.
func splitAround(b []byte, num protowire.Number) (before, after []byte, ok bool) {
	for rest := b; len(rest) > 0; {
		start := len(b) - len(rest)
		n, typ, tagLen := protowire.ConsumeTag(rest)
		if tagLen < 0 {
			return nil, nil, false
		}
		valLen := protowire.ConsumeFieldValue(n, typ, rest[tagLen:])
		if valLen < 0 {
			return nil, nil, false
		}
		rest = rest[tagLen+valLen:]
		if n == num {
			return b[:start], rest, true
		}
	}
	return b, nil, true
}
