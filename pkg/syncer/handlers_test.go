package syncer

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodStatusOnly(t *testing.T) {
	base := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u", Labels: map[string]string{"a": "1"}},
		Spec: corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	now := metav1.Now()
	cases := map[string]struct {
		mutate func(p *corev1.Pod)
		want   bool
	}{
		"status":     {mutate: func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning; p.ResourceVersion = "2" }, want: true},
		"label":      {mutate: func(p *corev1.Pod) { p.Labels["a"] = "2" }, want: false},
		"annotation": {mutate: func(p *corev1.Pod) { p.Annotations = map[string]string{"x": "y"} }, want: false},
		"image":      {mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "j" }, want: false},
		"deleting":   {mutate: func(p *corev1.Pod) { p.DeletionTimestamp = &now }, want: false},
		"recreated":  {mutate: func(p *corev1.Pod) { p.UID = "v" }, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := base.DeepCopy()
			tc.mutate(n)
			if got := podStatusOnly(base, n); got != tc.want {
				t.Errorf("podStatusOnly = %v, want %v", got, tc.want)
			}
		})
	}
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
