package pod_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
)

// A bound tenant Pod whose super Pod the super cluster disrupted (evicted, preempted, deleted by
// the taint manager) goes the way it would on a real cluster: DisruptionTarget written to its
// status, then deleted so that its controller replaces it. The kubelet's own terminations
// leave a Failed Pod; a super Pod that went away for no known reason is a loss (SuperPodLost).
func TestDownwardSettlesDisruptedPods(t *testing.T) {
	started := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	evicted := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: resources.ReasonEvictionByEvictionAPI,
		Message: "Eviction API: evicting", LastTransitionTime: started}
	kubelet := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: resources.ReasonTerminationByKubelet,
		Message: "The node was low on resource: memory.", LastTransitionTime: started}
	grace := int64(30)
	for name, tc := range map[string]struct {
		recorded    *corev1.PodCondition // the super Pod's last state when its deletion was seen
		copiedUp    *corev1.PodCondition // in the tenant Pod's status already
		terminating *corev1.PodCondition // the super Pod is still cached, being deleted with it
		wantReason  string               // DisruptionTarget reason in the tenant Pod
		wantPhase   corev1.PodPhase
		wantDelete  *int64 // grace period of the tenant Pod's deletion; nil: not deleted
		deleted     bool
	}{
		"evicted, seen at deletion":   {recorded: &evicted, wantReason: resources.ReasonEvictionByEvictionAPI, wantPhase: corev1.PodFailed, deleted: true},
		"evicted, copied up before":   {copiedUp: &evicted, wantReason: resources.ReasonEvictionByEvictionAPI, wantPhase: corev1.PodFailed, deleted: true},
		"evicted, still terminating":  {terminating: &evicted, wantReason: resources.ReasonEvictionByEvictionAPI, wantPhase: corev1.PodRunning, wantDelete: &grace, deleted: true},
		"kubelet's termination":       {recorded: &kubelet, wantReason: resources.ReasonTerminationByKubelet, wantPhase: corev1.PodFailed},
		"deleted for no known reason": {wantReason: pod.ReasonSuperPodLost, wantPhase: corev1.PodFailed},
		"a SuperPodLost is no reason": {copiedUp: &corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: pod.ReasonSuperPodLost}, wantReason: pod.ReasonSuperPodLost, wantPhase: corev1.PodFailed},
	} {
		t.Run(name, func(t *testing.T) {
			h := restest.New(t, "disrupted-"+fmt.Sprint(len(name)), "app")
			h.Env.Disruptions = &resources.Disruptions{}
			superNS := resources.SuperNamespace(h.C, "app")
			tp := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "app", UID: "tenant-uid", ResourceVersion: "7"},
				Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "i"}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0.1", Conditions: []corev1.PodCondition{
					{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}}}}
			if tc.copiedUp != nil {
				tp.Status.Conditions = append(tp.Status.Conditions, *tc.copiedUp)
			}
			h.Tenant(h.C.Informers.Core().V1().Pods().Informer(), tp)
			sp := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: superNS, UID: "super-uid"}, Spec: tp.Spec, Status: *tp.Status.DeepCopy()}
			conversion.Stamp(&sp.ObjectMeta, conversion.Owner{Tenant: h.C.Name, TenantUID: h.C.UID, Namespace: "app", Name: "web", UID: string(tp.UID)})
			superPods := (pod.Resource).SuperInformer(h.Env)
			if tc.recorded != nil {
				sp.Status.Conditions = append(sp.Status.Conditions, *tc.recorded)
				h.Env.Disruptions.SuperPodDeleted(sp, &sp.Status)
			}
			if tc.terminating != nil {
				now := metav1.Now()
				sp.DeletionTimestamp, sp.DeletionGracePeriodSeconds = &now, &grace
				sp.Status.Conditions = append(sp.Status.Conditions, *tc.terminating)
				h.Super(superPods, sp)
			}
			if err := (pod.Resource).Downward(h.Ctx(), h.Env, h.C, "app", "web"); err != nil {
				t.Fatalf("Downward = %v", err)
			}
			var status *corev1.PodStatus
			var deleted *k8stesting.DeleteActionImpl
			for _, a := range h.TenantCS.Actions() {
				switch a := a.(type) {
				case k8stesting.UpdateActionImpl:
					if a.GetSubresource() == "status" {
						status = &a.GetObject().(*corev1.Pod).Status
					}
				case k8stesting.DeleteActionImpl:
					if a.GetResource().Resource == "pods" {
						deleted = &a
					}
				}
			}
			if status == nil {
				t.Fatal("the tenant Pod's status was not written")
			}
			var dt *corev1.PodCondition
			for i := range status.Conditions {
				if status.Conditions[i].Type == corev1.DisruptionTarget {
					dt = &status.Conditions[i]
				}
			}
			if dt == nil || dt.Status != corev1.ConditionTrue || dt.Reason != tc.wantReason || status.Phase != tc.wantPhase {
				t.Errorf("phase %s DisruptionTarget %+v, want %s with reason %s", status.Phase, dt, tc.wantPhase, tc.wantReason)
			}
			if tc.wantPhase == corev1.PodFailed && (status.ContainerStatuses[0].State.Terminated == nil || status.ContainerStatuses[0].State.Terminated.ExitCode != 137) {
				t.Errorf("container %+v, want terminated with 137", status.ContainerStatuses[0])
			}
			switch {
			case tc.deleted != (deleted != nil):
				t.Errorf("tenant Pod deleted: %v, want %v", deleted != nil, tc.deleted)
			case deleted != nil:
				o := deleted.DeleteOptions
				if o.Preconditions == nil || o.Preconditions.UID == nil || *o.Preconditions.UID != types.UID("tenant-uid") {
					t.Errorf("deletion without the UID precondition: %+v", o)
				}
				if (tc.wantDelete == nil) != (o.GracePeriodSeconds == nil) || tc.wantDelete != nil && *o.GracePeriodSeconds != *tc.wantDelete {
					t.Errorf("grace period %v, want %v", o.GracePeriodSeconds, tc.wantDelete)
				}
			}
			if tc.recorded != nil && tc.terminating == nil {
				if _, ok := h.Env.Disruptions.Get(tp.UID); ok {
					t.Error("the disruption record was kept after the tenant Pod was settled")
				}
			}
		})
	}
}
