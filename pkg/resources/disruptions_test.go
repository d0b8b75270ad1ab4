package resources

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/conversion"
)

func superPodOf(uid string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "super-ns"}}
	conversion.Stamp(&p.ObjectMeta, conversion.Owner{Tenant: "t", TenantUID: "tu", Namespace: "app", Name: "web", UID: uid})
	return p
}

func withDisruption(reason string, status corev1.ConditionStatus) *corev1.PodStatus {
	return &corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		{Type: corev1.DisruptionTarget, Status: status, Reason: reason}}}
}

// Only the reasons a control plane writes, with status True, are disruptions.
func TestDisruption(t *testing.T) {
	for reason, want := range map[string]bool{
		ReasonEvictionByEvictionAPI: true, ReasonPreemptionByScheduler: true, ReasonDeletionByTaintManager: true,
		ReasonDeletionByPodGC: true, ReasonTerminationByKubelet: true, "SuperPodLost": false, "": false,
	} {
		if got := Disruption(withDisruption(reason, corev1.ConditionTrue)) != nil; got != want {
			t.Errorf("Disruption(%q) = %v, want %v", reason, got, want)
		}
	}
	if Disruption(withDisruption(ReasonEvictionByEvictionAPI, corev1.ConditionFalse)) != nil {
		t.Error("a False DisruptionTarget is a disruption")
	}
	if Disruption(nil) != nil || Disruption(&corev1.PodStatus{}) != nil {
		t.Error("no condition is a disruption")
	}
}

// A deleted super Pod's disruption is remembered under its tenant Pod's UID until forgotten or
// expired; the store stays bounded; a nil store remembers nothing.
func TestDisruptions(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := &Disruptions{now: func() time.Time { return now }}
	d.SuperPodDeleted(superPodOf("a"), withDisruption(ReasonEvictionByEvictionAPI, corev1.ConditionTrue))
	d.SuperPodDeleted(superPodOf("b"), withDisruption("", corev1.ConditionTrue))                        // no known reason
	d.SuperPodDeleted(&corev1.Pod{}, withDisruption(ReasonEvictionByEvictionAPI, corev1.ConditionTrue)) // not the syncer's
	if c, ok := d.Get("a"); !ok || c.Reason != ReasonEvictionByEvictionAPI {
		t.Errorf("Get(a) = %+v, %v", c, ok)
	}
	if _, ok := d.Get("b"); ok {
		t.Error("a deletion without a disruption was recorded")
	}
	if len(d.m) != 1 {
		t.Errorf("%d entries, want 1", len(d.m))
	}
	d.Forget("a")
	if _, ok := d.Get("a"); ok {
		t.Error("Get after Forget")
	}
	d.SuperPodDeleted(superPodOf("a"), withDisruption(ReasonPreemptionByScheduler, corev1.ConditionTrue))
	now = now.Add(disruptionTTL + time.Second)
	if _, ok := d.Get("a"); ok {
		t.Error("Get after the TTL")
	}
	// Full: expired entries go first, then the oldest.
	for i := range maxDisruptions {
		d.m[types.UID(fmt.Sprint("x", i))] = disruption{at: now.Add(time.Duration(i) * time.Millisecond)}
	}
	d.SuperPodDeleted(superPodOf("new"), withDisruption(ReasonEvictionByEvictionAPI, corev1.ConditionTrue))
	if len(d.m) != maxDisruptions {
		t.Errorf("%d entries, want %d", len(d.m), maxDisruptions)
	}
	if _, ok := d.m["x0"]; ok {
		t.Error("the oldest entry was kept")
	}
	if _, ok := d.Get("new"); !ok {
		t.Error("the newest entry was dropped")
	}
	var none *Disruptions
	none.SuperPodDeleted(superPodOf("a"), withDisruption(ReasonEvictionByEvictionAPI, corev1.ConditionTrue))
	none.Forget("a")
	if _, ok := none.Get("a"); ok {
		t.Error("a nil store remembered")
	}
}
