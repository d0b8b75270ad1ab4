package pod

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// The controller of refused Pods gets one Warning Event per reason, whatever the number of
// its Pods and reports; an owner reference naming a missing object, an object of another UID,
// or a kind that is not a workload controller gets none (and the last is not even read).
func TestReportOwnerOncePerOwnerAndReason(t *testing.T) {
	ctx := context.Background()
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", UID: "rs-uid"}}
	cs := fake.NewClientset(rs)
	rec := record.NewFakeRecorder(100)
	c := &tenant.Cluster{Name: "t-owner-" + t.Name(), Client: cs, Recorder: rec}
	owners.forget(c.Name)
	t.Cleanup(func() { owners.forget(c.Name) })
	pod := func(name, kind, apiVersion, owner string, uid types.UID) *corev1.Pod {
		yes := true
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", OwnerReferences: []metav1.OwnerReference{
			{APIVersion: apiVersion, Kind: kind, Name: owner, UID: uid, Controller: &yes}}}}
	}
	for i, name := range []string{"web-1-a", "web-1-b", "web-1-c", "web-1-a"} {
		reportOwner(ctx, c, pod(name, "ReplicaSet", "apps/v1", "web-1", "rs-uid"), ReasonQuotaExceeded, "quota: no room")
		if i == 0 {
			ev := restest.Drain(rec)
			if len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning "+ReasonQuotaExceeded+" Pod web-1-a does not run: quota: no room") {
				t.Fatalf("events = %q, want one Warning %s naming the Pod and the refusal", ev, ReasonQuotaExceeded)
			}
		}
	}
	if ev := restest.Drain(rec); len(ev) != 0 {
		t.Errorf("events after the first for the same owner and reason: %q", ev)
	}
	// Another reason is another Event.
	reportOwner(ctx, c, pod("web-1-d", "ReplicaSet", "apps/v1", "web-1", "rs-uid"), ReasonSuperClusterRejected, "violates PodSecurity")
	if ev := restest.Drain(rec); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning "+ReasonSuperClusterRejected+" ") {
		t.Errorf("events = %q, want one Warning %s", ev, ReasonSuperClusterRejected)
	}
	// Hostile owner references.
	cs.ClearActions()
	for _, p := range []*corev1.Pod{
		pod("x", "ReplicaSet", "apps/v1", "web-1", "other-uid"),     // another UID
		pod("y", "ReplicaSet", "apps/v1", "missing", "missing-uid"), // no such object
		pod("z", "StatefulSet", "apps/v1", "web-1", "sts-uid"),      // a kind with no object of that name
	} {
		reportOwner(ctx, c, p, ReasonQuotaExceeded, "quota: no room")
	}
	reportOwner(ctx, c, pod("s", "Secret", "v1", "creds", "secret-uid"), ReasonQuotaExceeded, "quota: no room")
	reportOwner(ctx, c, pod("f", "ReplicaSet", "example.com/v1", "web-1", "rs-uid2"), ReasonQuotaExceeded, "quota: no room")
	if ev := restest.Drain(rec); len(ev) != 0 {
		t.Errorf("events for owner references that name no such object: %q", ev)
	}
	if n := len(cs.Actions()); n != 3 {
		t.Errorf("%d tenant reads, want 3 (none for a kind that is not a workload controller)", n)
	}
}
