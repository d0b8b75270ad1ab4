package pod

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOlderStatus(t *testing.T) {
	at := func(sec int) metav1.Time { return metav1.NewTime(time.Unix(int64(1000+sec), 0)) }
	pod := func(conds ...corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Conditions: conds}}
	}
	ready := func(s corev1.ConditionStatus, sec int) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.PodReady, Status: s, LastTransitionTime: at(sec)}
	}
	for _, tc := range []struct {
		name         string
		super, tenat *corev1.Pod
		want         corev1.PodConditionType
	}{
		{"cache behind: tenant Ready is newer", pod(ready(corev1.ConditionFalse, 1)), pod(ready(corev1.ConditionTrue, 5)), corev1.PodReady},
		{"super newer", pod(ready(corev1.ConditionTrue, 5)), pod(ready(corev1.ConditionFalse, 1)), ""},
		{"same time", pod(ready(corev1.ConditionTrue, 5)), pod(ready(corev1.ConditionTrue, 5)), ""},
		{"condition only in the tenant (readiness gate)", pod(), pod(ready(corev1.ConditionTrue, 5)), ""},
		{"PodScheduled set by the tenant's Binding later than the super scheduler's",
			pod(corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(1)}),
			pod(corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(3)}), ""},
	} {
		if got := olderStatus(tc.super, tc.tenat); got != tc.want {
			t.Errorf("%s: olderStatus = %q, want %q", tc.name, got, tc.want)
		}
	}
}
