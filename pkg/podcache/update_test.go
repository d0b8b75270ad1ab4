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

// TestStatusOrBindingOnly checks that a binding (spec.nodeName from empty to a node) with any
// status change passes, on *corev1.Pod and on cached Pods alike, and that every other spec or
// metadata change does not, a binding's included.
func TestStatusOrBindingOnly(t *testing.T) {
	base := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u", Labels: map[string]string{"a": "1"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}, SchedulerName: "s", Priority: ptr(int32(5))}}
	cases := map[string]struct {
		mutate func(*corev1.Pod)
		want   bool
	}{
		"status":               {func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }, true},
		"binding":              {func(p *corev1.Pod) { p.Spec.NodeName = "n" }, true},
		"binding and status":   {func(p *corev1.Pod) { p.Spec.NodeName = "n"; p.Status.Phase = corev1.PodPending }, true},
		"binding and image":    {func(p *corev1.Pod) { p.Spec.NodeName = "n"; p.Spec.Containers[0].Image = "j" }, false},
		"binding and priority": {func(p *corev1.Pod) { p.Spec.NodeName = "n"; p.Spec.Priority = ptr(int32(6)) }, false},
		"binding and label":    {func(p *corev1.Pod) { p.Spec.NodeName = "n"; p.Labels["a"] = "2" }, false},
		"image":                {func(p *corev1.Pod) { p.Spec.Containers[0].Image = "j" }, false},
		"recreated and bound":  {func(p *corev1.Pod) { p.Spec.NodeName = "n"; p.UID = "v" }, false},
	}
	for name, c := range cases {
		n := base.DeepCopy()
		c.mutate(n)
		if got := podcache.StatusOrBindingOnly(base, n); got != c.want {
			t.Errorf("%s, *corev1.Pod: %t; want %t", name, got, c.want)
		}
		co, err1 := podcache.NewFull(base)
		cn, err2 := podcache.NewFull(n)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if got := podcache.StatusOrBindingOnly(co, cn); got != c.want {
			t.Errorf("%s, cached: %t; want %t", name, got, c.want)
		}
	}
	bound := base.DeepCopy()
	bound.Spec.NodeName = "n"
	moved := base.DeepCopy()
	moved.Spec.NodeName = "m"
	if podcache.StatusOrBindingOnly(bound, moved) {
		t.Error("a change of an already set spec.nodeName passed as a binding")
	}
	if podcache.StatusOrBindingOnly(&corev1.Service{}, &corev1.Service{}) {
		t.Error("non-Pod kinds must never be filtered")
	}
}

func ptr[T any](v T) *T { return &v }
