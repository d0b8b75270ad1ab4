package vnode_test

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/test/integration/itest"
)

// pinnedPod returns a tenant Pod that the super scheduler can only place on super Node node
// (nodeSelector kubernetes.io/hostname, which the fake Nodes carry with their name).
func pinnedPod(name, node string) *corev1.Pod {
	zero := int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{corev1.LabelHostname: node},
			TerminationGracePeriodSeconds: &zero,
			Containers:                    []corev1.Container{{Name: "c", Image: "busybox"}},
		},
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func nodeCondition(n *corev1.Node, typ corev1.NodeConditionType) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

// Shared helpers (test/integration/itest).
var (
	startSyncer       = itest.StartSyncer
	eventually        = itest.Eventually
	errorf            = itest.Errorf
	mustCreateNS      = itest.MustCreateNS
	waitTenantRunning = itest.WaitRunning
)
