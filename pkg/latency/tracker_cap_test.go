package latency

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodTrackerCapIsPerTenant: a tenant with 20000 Pods whose creation never finishes (all
// unschedulable) does not stop the tracking of another tenant's Pods; it is itself capped at
// maxTrackedPodsPerTenant.
func TestPodTrackerCapIsPerTenant(t *testing.T) {
	var tr Tracker
	now := time.Now()
	for i := range 20000 {
		tr.podAdded("greedy", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint(i)}}, "", now)
	}
	tr.podAdded("regular", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}, "", now)
	if tr.pods[podKey{"regular", "ns", "p"}] == nil {
		t.Fatal("the regular tenant's Pod is not tracked beside a greedy tenant's 20000")
	}
	n := 0
	for k := range tr.pods {
		if k.tenant == "greedy" {
			n++
		}
	}
	if n > maxTrackedPodsPerTenant {
		t.Fatalf("greedy tenant has %d tracked Pods, cap %d", n, maxTrackedPodsPerTenant)
	}
	tr.podGone(podKey{"greedy", "ns", "0"})
	tr.podAdded("greedy", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "new"}}, "", now)
	if tr.pods[podKey{"greedy", "ns", "new"}] == nil {
		t.Fatal("after one of its Pods went, the greedy tenant's next Pod is not tracked")
	}
}
