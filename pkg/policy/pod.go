package policy

import (
	corev1 "k8s.io/api/core/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// CheckPod returns the first refusal of spec under p (stub).
func CheckPod(p *tenancyv1alpha1.PodPolicy, spec *corev1.PodSpec, inPool func(nodeName string) bool) *Denial {
	return nil
}

// FilterPod applies the filtering rules of p to spec (stub).
func FilterPod(p *tenancyv1alpha1.PodPolicy, spec *corev1.PodSpec) *Denial {
	return nil
}
