package pod

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// systemPriorityClasses exist in every cluster, so a Pod that names one keeps it.
var systemPriorityClasses = []string{"system-cluster-critical", "system-node-critical"}

// Desired returns the super Pod for tenant Pod t in superNS. existingAnn are the annotations
// of the current super Pod (nil when creating), kept where the tenant does not set them.
func Desired(c *tenant.Cluster, t *corev1.Pod, superNS string, existingAnn map[string]string) *corev1.Pod {
	spec := t.Spec.DeepCopy()
	spec.NodeName = ""
	spec.Priority = nil
	spec.PreemptionPolicy = nil
	if !slices.Contains(systemPriorityClasses, spec.PriorityClassName) {
		spec.PriorityClassName = ""
	}
	spec.EphemeralContainers = nil
	stripServiceAccountToken(spec)
	return &corev1.Pod{
		ObjectMeta: resources.DesiredMeta(c, t, superNS, existingAnn),
		Spec:       *spec,
	}
}

// stripServiceAccountToken removes projected volumes that carry a service-account token (the
// tenant's kube-api-access-* volume) and their mounts, and turns off automounting so the
// super cluster's admission does not mount a super-cluster token instead.
func stripServiceAccountToken(spec *corev1.PodSpec) {
	removed := map[string]bool{}
	vols := spec.Volumes[:0]
	for _, v := range spec.Volumes {
		if v.Projected != nil && slices.ContainsFunc(v.Projected.Sources, func(s corev1.VolumeProjection) bool {
			return s.ServiceAccountToken != nil
		}) {
			removed[v.Name] = true
			continue
		}
		vols = append(vols, v)
	}
	spec.Volumes = vols
	if len(spec.Volumes) == 0 {
		spec.Volumes = nil
	}
	strip := func(cs []corev1.Container) {
		for i := range cs {
			cs[i].VolumeMounts = slices.DeleteFunc(cs[i].VolumeMounts, func(m corev1.VolumeMount) bool { return removed[m.Name] })
			if len(cs[i].VolumeMounts) == 0 {
				cs[i].VolumeMounts = nil
			}
		}
	}
	strip(spec.InitContainers)
	strip(spec.Containers)
	f := false
	spec.AutomountServiceAccountToken = &f
}

// NeedsUpdate reports whether the super Pod differs from desired in the fields that can be
// changed on a live Pod and that the syncer owns: labels, annotations and container images.
func NeedsUpdate(want, have *corev1.Pod) bool {
	if !resources.MapsEqual(want.Labels, have.Labels) || !resources.SubsetEqual(want.Annotations, have.Annotations) {
		return true
	}
	return !sameImages(want.Spec.Containers, have.Spec.Containers) || !sameImages(want.Spec.InitContainers, have.Spec.InitContainers)
}

func sameImages(a, b []corev1.Container) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Image != b[i].Image {
			return false
		}
	}
	return true
}

// ApplyUpdate returns a copy of the super Pod have with want's labels, annotations and images.
func ApplyUpdate(want, have *corev1.Pod) *corev1.Pod {
	u := have.DeepCopy()
	u.Labels = want.Labels
	u.Annotations = want.Annotations
	for i := range u.Spec.Containers {
		if i < len(want.Spec.Containers) {
			u.Spec.Containers[i].Image = want.Spec.Containers[i].Image
		}
	}
	for i := range u.Spec.InitContainers {
		if i < len(want.Spec.InitContainers) {
			u.Spec.InitContainers[i].Image = want.Spec.InitContainers[i].Image
		}
	}
	return u
}
