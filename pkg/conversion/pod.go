package conversion

import corev1 "k8s.io/api/core/v1"

// TrimPodSpec reduces a cached Pod's spec to what the syncer reads from its caches: nodeName,
// the names and images of containers and init containers, and the readiness gates (whose
// conditions the syncer copies from a tenant Pod into its super Pod). Informer transforms of both the
// tenant and the super Pod caches use it (the VirtualCluster paper's 40 KB per Pod came mostly
// from two full copies of every Pod); code that needs a full spec reads it from the apiserver.
func TrimPodSpec(p *corev1.Pod) {
	trim := func(cs []corev1.Container) []corev1.Container {
		if len(cs) == 0 {
			return nil
		}
		out := make([]corev1.Container, len(cs))
		for i, c := range cs {
			out[i] = corev1.Container{Name: c.Name, Image: c.Image}
		}
		return out
	}
	p.Spec = corev1.PodSpec{
		NodeName:       p.Spec.NodeName,
		ReadinessGates: p.Spec.ReadinessGates,
		Containers:     trim(p.Spec.Containers),
		InitContainers: trim(p.Spec.InitContainers),
	}
}
