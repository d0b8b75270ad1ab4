package syncer

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/resources/restest"
)

func TestPodStatusOnly(t *testing.T) {
	base := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u", Labels: map[string]string{"a": "1"}},
		Spec: corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	now := metav1.Now()
	restest.RunEqualCases(t, base, (*corev1.Pod).DeepCopy, func(a, b *corev1.Pod) bool { return podStatusOnly(a, b) }, map[string]restest.EqualCase[*corev1.Pod]{
		"status":     {Mutate: func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning; p.ResourceVersion = "2" }, Equal: true},
		"label":      {Mutate: func(p *corev1.Pod) { p.Labels["a"] = "2" }, Equal: false},
		"annotation": {Mutate: func(p *corev1.Pod) { p.Annotations = map[string]string{"x": "y"} }, Equal: false},
		"image":      {Mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "j" }, Equal: false},
		"deleting":   {Mutate: func(p *corev1.Pod) { p.DeletionTimestamp = &now }, Equal: false},
		"recreated":  {Mutate: func(p *corev1.Pod) { p.UID = "v" }, Equal: false},
	})
	if podStatusOnly(&corev1.Service{}, &corev1.Service{}) {
		t.Error("non-Pod kinds must never be filtered")
	}
}

// A tenant Pod's status change goes downward only when it changes a tenant-owned condition.
func TestTenantPodConditionsChanged(t *testing.T) {
	base := &corev1.Pod{Spec: corev1.PodSpec{ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	undeclared := base.DeepCopy()
	undeclared.Status.Conditions = append(undeclared.Status.Conditions, corev1.PodCondition{Type: "example.com/other", Status: corev1.ConditionTrue})
	if tenantPodConditionsChanged(base, undeclared) {
		t.Error("a condition that is no readiness gate counts (it is never copied down)")
	}
	gate := base.DeepCopy()
	gate.Status.Conditions = append(gate.Status.Conditions, corev1.PodCondition{Type: "example.com/ready", Status: corev1.ConditionTrue})
	kubelet := base.DeepCopy()
	kubelet.Status.Conditions[0].Status = corev1.ConditionFalse
	if !tenantPodConditionsChanged(base, gate) {
		t.Error("a new gate condition does not count")
	}
	if tenantPodConditionsChanged(base, kubelet) {
		t.Error("a kubelet condition change counts")
	}
	if tenantPodConditionsChanged(&corev1.Service{}, &corev1.Service{}) {
		t.Error("a Service counts")
	}
}
