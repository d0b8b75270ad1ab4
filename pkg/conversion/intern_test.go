package conversion

import (
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Two decoded Pods share the bytes of their repeating metadata strings after InternObject, and
// keep their values.
func TestInternObjectSharesRepeatingStrings(t *testing.T) {
	mk := func(name string) *corev1.Pod {
		// string(...) of a byte slice: a fresh copy each time, as a decoder makes.
		s := func(v string) string { return string([]byte(v)) }
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s("shop"),
				Labels:      map[string]string{s("app"): s("web")},
				Annotations: map[string]string{s(AnnotationTenant): s("t1"), s(AnnotationUID): s("uid-" + name)}},
			Status: corev1.PodStatus{Phase: corev1.PodPhase(s("Running")),
				Conditions: []corev1.PodCondition{{Type: corev1.PodConditionType(s("Ready")), Status: corev1.ConditionStatus(s("True"))}}},
		}
	}
	a, b := mk("a"), mk("b")
	InternObject(a)
	InternObject(b)
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	if !same(a.Namespace, b.Namespace) || !same(a.Labels["app"], b.Labels["app"]) || !same(a.Annotations[AnnotationTenant], b.Annotations[AnnotationTenant]) {
		t.Error("repeating strings not shared between the two Pods")
	}
	for k := range a.Annotations {
		for k2 := range b.Annotations {
			if k == k2 && !same(k, k2) {
				t.Errorf("annotation key %q not shared", k)
			}
		}
	}
	if a.Annotations[AnnotationUID] != "uid-a" || b.Annotations[AnnotationUID] != "uid-b" {
		t.Errorf("per-Pod values changed: %v %v", a.Annotations, b.Annotations)
	}
	if a.Namespace != "shop" || a.Labels["app"] != "web" || a.Status.Conditions[0].Status != "True" {
		t.Errorf("values changed: %+v", a)
	}
}
