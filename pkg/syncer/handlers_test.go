package syncer

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

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
