package tenant

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
)

// TestLazyRecorder: nothing is started before the first Event; Events reach the recorder once
// started; after shutdown the broadcaster is shut down and later Events are dropped without
// starting a new one.
func TestLazyRecorder(t *testing.T) {
	starts := 0
	fake := record.NewFakeRecorder(10)
	b := record.NewBroadcaster()
	l := &lazyRecorder{start: func() (record.EventBroadcaster, record.EventRecorder) {
		starts++
		return b, fake
	}}
	if starts != 0 {
		t.Fatal("started before the first Event")
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	l.Eventf(pod, corev1.EventTypeWarning, "R", "m %d", 1)
	l.Event(pod, corev1.EventTypeNormal, "R", "m")
	if starts != 1 || len(fake.Events) != 2 {
		t.Fatalf("%d starts, %d Events; want 1 and 2", starts, len(fake.Events))
	}
	l.shutdown()
	l.AnnotatedEventf(pod, nil, corev1.EventTypeNormal, "R", "after")
	if starts != 1 || len(fake.Events) != 2 {
		t.Fatalf("after shutdown: %d starts, %d Events; want 1 and 2", starts, len(fake.Events))
	}
	never := &lazyRecorder{start: func() (record.EventBroadcaster, record.EventRecorder) {
		t.Fatal("started after shutdown")
		return nil, nil
	}}
	never.shutdown()
	never.Event(pod, corev1.EventTypeNormal, "R", "m")
}
