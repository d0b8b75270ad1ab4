package pod

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
)

// TenantBindingOnly reports whether an update of a tenant Pod (oldPod → newPod, decoded from
// the tenant cache) is its binding and nothing else: spec.nodeName set from empty, the rest of
// the spec equal once both are trimmed as the cache keeps a bound Pod (conversion.TrimPodSpec:
// the old version is cached whole, the bound one trimmed), and what podcache.StatusOnly
// compares of the metadata unchanged. A pods/binding request changes nothing else (spec.nodeName
// and the PodScheduled condition). Neither Pod is changed.
func TenantBindingOnly(oldPod, newPod *corev1.Pod) bool {
	if oldPod.Spec.NodeName != "" || newPod.Spec.NodeName == "" {
		return false
	}
	// Shallow copies: TrimPodSpec replaces the spec, it does not change the one it was given.
	ot := &corev1.Pod{ObjectMeta: oldPod.ObjectMeta, Spec: oldPod.Spec}
	nt := &corev1.Pod{ObjectMeta: newPod.ObjectMeta, Spec: newPod.Spec}
	conversion.TrimPodSpec(ot)
	conversion.TrimPodSpec(nt)
	ot.Spec.NodeName = nt.Spec.NodeName
	return podcache.StatusOnly(ot, nt)
}
