package podcache_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
)

func TestStatusOnly(t *testing.T) {
	base := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u", Labels: map[string]string{"a": "1"}},
		Spec: corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	now := metav1.Now()
	restest.RunEqualCases(t, base, (*corev1.Pod).DeepCopy, func(a, b *corev1.Pod) bool { return podcache.StatusOnly(a, b) }, map[string]restest.EqualCase[*corev1.Pod]{
		"status":     {Mutate: func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning; p.ResourceVersion = "2" }, Equal: true},
		"label":      {Mutate: func(p *corev1.Pod) { p.Labels["a"] = "2" }, Equal: false},
		"annotation": {Mutate: func(p *corev1.Pod) { p.Annotations = map[string]string{"x": "y"} }, Equal: false},
		"image":      {Mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "j" }, Equal: false},
		"deleting":   {Mutate: func(p *corev1.Pod) { p.DeletionTimestamp = &now }, Equal: false},
		"recreated":  {Mutate: func(p *corev1.Pod) { p.UID = "v" }, Equal: false},
	})
	if podcache.StatusOnly(&corev1.Service{}, &corev1.Service{}) {
		t.Error("non-Pod kinds must never be filtered")
	}
}
