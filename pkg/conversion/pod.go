package conversion

import corev1 "k8s.io/api/core/v1"

// TrimPodSpec reduces a cached Pod's spec to what the syncer reads from its caches: nodeName,
// the names and images of containers and init containers, the scheduling gates (which the
// syncer removes from a super Pod when the tenant removes them), the names of ephemeral containers
// (which the syncer reports, as it does not sync them), the readiness gates (whose
// conditions the syncer copies from a tenant Pod into its super Pod), and the ServiceAccount
// and projected serviceAccountToken sources (from which the syncer requests a new Pod's tenant
// tokens while it reads the full spec), and what a Pod costs in its tenant's budget (each
// container's requests and limits and an init container's restartPolicy, the pod-level
// resources and the overhead: a few dozen bytes of the encoded spec), decided from the cache
// before anything is asked of an apiserver. Informer transforms of both the tenant and the super
// Pod caches use it (the VirtualCluster paper's 40 KB per Pod came mostly from two full copies
// of every Pod); code that needs a full spec reads it from the apiserver.
func TrimPodSpec(p *corev1.Pod) {
	trim := func(cs []corev1.Container) []corev1.Container {
		if len(cs) == 0 {
			return nil
		}
		out := make([]corev1.Container, len(cs))
		for i, c := range cs {
			out[i] = corev1.Container{Name: c.Name, Image: c.Image, RestartPolicy: c.RestartPolicy,
				Resources: corev1.ResourceRequirements{Requests: c.Resources.Requests, Limits: c.Resources.Limits}}
		}
		return out
	}
	ephemeral := p.Spec.EphemeralContainers
	p.Spec = corev1.PodSpec{
		NodeName:           p.Spec.NodeName,
		ServiceAccountName: p.Spec.ServiceAccountName,
		ReadinessGates:     p.Spec.ReadinessGates,
		SchedulingGates:    p.Spec.SchedulingGates,
		Containers:         trim(p.Spec.Containers),
		InitContainers:     trim(p.Spec.InitContainers),
		Volumes:            tokenVolumes(p.Spec.Volumes),
		Resources:          p.Spec.Resources,
		Overhead:           p.Spec.Overhead,
	}
	if len(ephemeral) > 0 {
		p.Spec.EphemeralContainers = make([]corev1.EphemeralContainer, len(ephemeral))
		for i, e := range ephemeral {
			p.Spec.EphemeralContainers[i].Name = e.Name
		}
	}
}

// tokenVolumes returns the projected volumes of vols that have serviceAccountToken sources,
// each with those sources only (in order); nil when there are none.
func tokenVolumes(vols []corev1.Volume) []corev1.Volume {
	var out []corev1.Volume
	for _, v := range vols {
		if v.Projected == nil {
			continue
		}
		var srcs []corev1.VolumeProjection
		for _, s := range v.Projected.Sources {
			if s.ServiceAccountToken != nil {
				srcs = append(srcs, corev1.VolumeProjection{ServiceAccountToken: s.ServiceAccountToken})
			}
		}
		if srcs != nil {
			out = append(out, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{
				Projected: &corev1.ProjectedVolumeSource{Sources: srcs}}})
		}
	}
	return out
}
