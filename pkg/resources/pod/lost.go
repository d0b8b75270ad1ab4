package pod

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lostExitCode is the exit code of a container whose super Pod was lost: 137, the code the
// kubelet reports for a container it can no longer locate (ContainerStatusUnknown, in
// pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses and
// pkg/kubelet/status/status_manager.go TerminatePod), "because we do not know whether the
// container was successful, always report an error".
const lostExitCode = 137

// lostMessage is the status message of a tenant Pod whose super Pod was lost, and of its containers.
const lostMessage = "the Pod's super-cluster copy was deleted outside the syncer"

// lostStatus returns the status of tenant Pod t once its bound super Pod has disappeared, as a
// kubelet reports a Pod whose containers it cannot locate (TerminatePod): phase Failed with
// reason SuperPodLost; every container, init container and ephemeral container status not
// terminated yet becomes terminated with reason SuperPodLost and exit code 137 (startedAt from
// its running state), not ready, not started; Ready and ContainersReady become False and
// DisruptionTarget True with reason SuperPodLost at now (as the pod garbage collector marks a
// Pod whose Node is gone, so a Job's podFailurePolicy can tell a disruption from a failure).
// `kubectl get pods` then shows 0/N and SuperPodLost. Other conditions (PodScheduled, the
// tenant's own) are kept. t is not changed.
func lostStatus(t *corev1.Pod, now metav1.Time) *corev1.PodStatus {
	st := t.Status.DeepCopy()
	st.Phase = corev1.PodFailed
	st.Reason = ReasonSuperPodLost
	st.Message = lostMessage
	stopContainers(st, corev1.ContainerStateTerminated{Reason: ReasonSuperPodLost, Message: lostMessage, ExitCode: lostExitCode})
	setCondition(st, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: ReasonSuperPodLost, Message: lostMessage, LastTransitionTime: now})
	setCondition(st, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: ReasonSuperPodLost, Message: lostMessage, LastTransitionTime: now})
	setCondition(st, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: ReasonSuperPodLost, Message: lostMessage, LastTransitionTime: now})
	return st
}

// stopContainers makes every container, init container and ephemeral container status of st
// not terminated yet terminated with term (startedAt from its running state), and every
// container not ready and not started.
func stopContainers(st *corev1.PodStatus, term corev1.ContainerStateTerminated) {
	for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
		for i := range list {
			cs := &list[i]
			cs.Ready = false
			if cs.Started != nil {
				f := false
				cs.Started = &f
			}
			if cs.State.Terminated != nil {
				cs.State.Running, cs.State.Waiting = nil, nil
				continue
			}
			t := term
			if cs.State.Running != nil {
				t.StartedAt = cs.State.Running.StartedAt
			}
			cs.State = corev1.ContainerState{Terminated: &t}
		}
	}
}

// setCondition sets condition c in st, replacing the one of its type (keeping its
// lastTransitionTime when the status does not change) or appending it.
func setCondition(st *corev1.PodStatus, c corev1.PodCondition) {
	if old := findCondition(st.Conditions, c.Type); old != nil {
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	st.Conditions = append(st.Conditions, c)
}
