package eventcache

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func fullEvent() *corev1.Event {
	t0 := metav1.NewTime(time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC))
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web.1", UID: "e-uid", ResourceVersion: "42",
			Labels: map[string]string{"l": "v"}, CreationTimestamp: t0},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "web", UID: "p-uid", APIVersion: "v1", FieldPath: "spec.containers{c}"},
		Reason:         "Scheduled", Message: "Successfully assigned ns/web to node-1",
		Source:         corev1.EventSource{Component: "default-scheduler", Host: "h"},
		FirstTimestamp: t0, LastTimestamp: t0, Count: 3, Type: corev1.EventTypeNormal,
		EventTime: metav1.NewMicroTime(t0.Time),
		Series:    &corev1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(t0.Time)},
		Action:    "Binding", ReportingController: "default-scheduler", ReportingInstance: "sched-1",
	}
}

func TestRoundTrip(t *testing.T) {
	want := fullEvent()
	c, err := New(want.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Event()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("decoded cached Event (-want +got):\n%s", d)
	}
	if c.GetName() != "web.1" || c.GetResourceVersion() != "42" {
		t.Errorf("cached metadata %s %s", c.GetName(), c.GetResourceVersion())
	}
	if gvk := c.GetObjectKind().GroupVersionKind(); gvk.Kind != "Event" || gvk.Version != "v1" {
		t.Errorf("kind %v", gvk)
	}
	cp := c.DeepCopyObject().(*Event)
	cp.Labels["l"] = "changed"
	if c.Labels["l"] != "v" {
		t.Error("DeepCopyObject shares the labels map")
	}
}

func TestFromAndGet(t *testing.T) {
	plain := fullEvent()
	cached, err := New(fullEvent())
	if err != nil {
		t.Fatal(err)
	}
	for name, obj := range map[string]any{"plain": plain, "cached": cached} {
		e, ok := From(obj)
		if !ok || e.Reason != "Scheduled" || e.Name != "web.1" {
			t.Errorf("From(%s) = %v, %v", name, e, ok)
		}
	}
	if _, ok := From(&corev1.Pod{}); ok {
		t.Error("From(Pod) = true")
	}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := idx.Add(cached); err != nil {
		t.Fatal(err)
	}
	if e, err := Get(idx, "ns", "web.1"); err != nil || e.Message != plain.Message {
		t.Errorf("Get = %v, %v", e, err)
	}
	if _, err := Get(idx, "ns", "other"); !apierrors.IsNotFound(err) {
		t.Errorf("Get of a missing Event: %v, want NotFound", err)
	}
}
