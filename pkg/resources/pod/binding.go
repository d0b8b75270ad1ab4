package pod

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
)

// TenantBindingOnly reports whether an update of a tenant Pod (oldObj, newObj: *corev1.Pod or
// cached *podcache.Pod, as the tenant informers' transform keeps them) is its binding and
// nothing else: spec.nodeName set from empty, the rest of the spec equal once both are trimmed
// as the cache keeps a bound Pod (conversion.TrimPodSpec: the old version is cached whole, the
// bound one trimmed), and what podcache.StatusOnly compares of the metadata unchanged. A
// pods/binding request changes nothing else (spec.nodeName and the PodScheduled condition).
// False for other kinds.
func TenantBindingOnly(oldObj, newObj any) bool {
	o, ok1 := podcache.From(oldObj)
	n, ok2 := podcache.From(newObj)
	if !ok1 || !ok2 || o.Spec.NodeName != "" || n.Spec.NodeName == "" {
		return false
	}
	// Shallow copies: TrimPodSpec replaces the spec, it does not change the one it was given.
	ot := &corev1.Pod{ObjectMeta: o.ObjectMeta, Spec: o.Spec}
	nt := &corev1.Pod{ObjectMeta: n.ObjectMeta, Spec: n.Spec}
	conversion.TrimPodSpec(ot)
	conversion.TrimPodSpec(nt)
	ot.Spec.NodeName = nt.Spec.NodeName
	return podcache.StatusOnly(ot, nt)
}
