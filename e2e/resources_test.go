package e2e

// What a tenant asks of its Pods is what runs (issue 42): the super Pod's requests and limits
// (per container and init container, and the pod-level spec.resources) and its QoS class are
// the tenant Pod's. Metadata is not compared (the super Pod carries the syncer's annotations).

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
)

// diffPodResources returns one line per difference between the tenant Pod tp and its super
// copy sp, naming the container and the field; nil when they are equal. Containers are matched
// by name; a container missing on either side is a difference.
func diffPodResources(tp, sp *corev1.Pod) []string {
	var out []string
	diffContainers := func(kind string, tcs, scs []corev1.Container) {
		super := map[string]*corev1.Container{}
		for i := range scs {
			super[scs[i].Name] = &scs[i]
		}
		for i := range tcs {
			tc := &tcs[i]
			sc, ok := super[tc.Name]
			if !ok {
				out = append(out, fmt.Sprintf("%s %s: missing in the super Pod", kind, tc.Name))
				continue
			}
			delete(super, tc.Name)
			if !equality.Semantic.DeepEqual(tc.Resources.Requests, sc.Resources.Requests) {
				out = append(out, fmt.Sprintf("%s %s: resources.requests tenant %s, super %s", kind, tc.Name,
					resourceListString(tc.Resources.Requests), resourceListString(sc.Resources.Requests)))
			}
			if !equality.Semantic.DeepEqual(tc.Resources.Limits, sc.Resources.Limits) {
				out = append(out, fmt.Sprintf("%s %s: resources.limits tenant %s, super %s", kind, tc.Name,
					resourceListString(tc.Resources.Limits), resourceListString(sc.Resources.Limits)))
			}
		}
		for _, name := range sortedKeys(super) {
			out = append(out, fmt.Sprintf("%s %s: only in the super Pod", kind, name))
		}
	}
	diffContainers("initContainer", tp.Spec.InitContainers, sp.Spec.InitContainers)
	diffContainers("container", tp.Spec.Containers, sp.Spec.Containers)
	var tr, sr corev1.ResourceRequirements
	if tp.Spec.Resources != nil {
		tr = *tp.Spec.Resources
	}
	if sp.Spec.Resources != nil {
		sr = *sp.Spec.Resources
	}
	if !equality.Semantic.DeepEqual(tr.Requests, sr.Requests) {
		out = append(out, fmt.Sprintf("spec.resources.requests tenant %s, super %s", resourceListString(tr.Requests), resourceListString(sr.Requests)))
	}
	if !equality.Semantic.DeepEqual(tr.Limits, sr.Limits) {
		out = append(out, fmt.Sprintf("spec.resources.limits tenant %s, super %s", resourceListString(tr.Limits), resourceListString(sr.Limits)))
	}
	if tp.Status.QOSClass != sp.Status.QOSClass {
		out = append(out, fmt.Sprintf("status.qosClass tenant %q, super %q", tp.Status.QOSClass, sp.Status.QOSClass))
	}
	return out
}

// resourceListString prints a ResourceList in name order, "{}" when empty.
func resourceListString(l corev1.ResourceList) string {
	if len(l) == 0 {
		return "{}"
	}
	s := "{"
	for i, name := range sortedKeys(l) {
		if i > 0 {
			s += ", "
		}
		q := l[corev1.ResourceName(name)]
		s += name + ": " + q.String()
	}
	return s + "}"
}

func sortedKeys[K ~string, V any](m map[K]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, string(k))
	}
	slices.Sort(out)
	return out
}

// TestDiffPodResources shows that the check of TestRealWorld sees each kind of difference (it
// needs no control plane).
func TestDiffPodResources(t *testing.T) {
	rl := func(kv ...string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return l
	}
	tenant := func() *corev1.Pod {
		return &corev1.Pod{
			Spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "init"}},
				Containers: []corev1.Container{{Name: "db", Resources: corev1.ResourceRequirements{
					Requests: rl("cpu", "2", "memory", "2Gi")}}},
			},
			Status: corev1.PodStatus{QOSClass: corev1.PodQOSBurstable},
		}
	}
	cases := map[string]struct {
		alter func(sp *corev1.Pod)
		want  []string
	}{
		"equal": {alter: func(*corev1.Pod) {}},
		"equal quantities written differently, metadata ignored": {alter: func(sp *corev1.Pod) {
			sp.Annotations = map[string]string{annotationUID: "x"}
			sp.Spec.Containers[0].Resources.Requests = rl("cpu", "2000m", "memory", "2048Mi")
			sp.Spec.InitContainers[0].Resources.Limits = corev1.ResourceList{}
			sp.Spec.Resources = &corev1.ResourceRequirements{}
		}},
		"limits added by a LimitRange": {
			alter: func(sp *corev1.Pod) {
				sp.Spec.InitContainers[0].Resources.Limits = rl("cpu", "1", "memory", "1Gi")
				sp.Spec.Containers[0].Resources.Limits = rl("cpu", "1", "memory", "1Gi")
			},
			want: []string{
				"initContainer init: resources.limits tenant {}, super {cpu: 1, memory: 1Gi}",
				"container db: resources.limits tenant {}, super {cpu: 1, memory: 1Gi}",
			},
		},
		"requests, pod-level resources and QoS class": {
			alter: func(sp *corev1.Pod) {
				sp.Spec.Containers[0].Resources.Requests = rl("cpu", "1")
				sp.Spec.Resources = &corev1.ResourceRequirements{Limits: rl("memory", "4Gi")}
				sp.Status.QOSClass = corev1.PodQOSGuaranteed
			},
			want: []string{
				"container db: resources.requests tenant {cpu: 2, memory: 2Gi}, super {cpu: 1}",
				"spec.resources.limits tenant {}, super {memory: 4Gi}",
				`status.qosClass tenant "Burstable", super "Guaranteed"`,
			},
		},
		"containers missing or added": {
			alter: func(sp *corev1.Pod) {
				sp.Spec.InitContainers = nil
				sp.Spec.Containers = append(sp.Spec.Containers, corev1.Container{Name: "sidecar"})
			},
			want: []string{"initContainer init: missing in the super Pod", "container sidecar: only in the super Pod"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tp := tenant()
			sp := tp.DeepCopy()
			tc.alter(sp)
			got := diffPodResources(tp, sp)
			if !slices.Equal(got, tc.want) {
				t.Errorf("diffPodResources() =\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}
