package podcache

import (
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
