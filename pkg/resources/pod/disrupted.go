package pod

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// The container state the kubelet reports for a container it could not locate when the Pod was
// terminated (pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses): what is known of the
// containers of a super Pod that went away.
const (
	reasonContainerStatusUnknown  = "ContainerStatusUnknown"
	messageContainerStatusUnknown = "The container could not be located when the pod was terminated"
	// reasonPodCompleted is the reason of the Ready and ContainersReady conditions the kubelet
	// writes for a Pod in a terminal phase.
	reasonPodCompleted = "PodCompleted"
)

// disruptionOf returns why the super Pod of tenant Pod t went away, if the super cluster
// disrupted it: the DisruptionTarget condition of the super Pod's last state seen by the
// syncer (env.Disruptions), or else the one the upward copy brought to t while the super Pod
// was terminating (resources.Disruption); nil when neither says so. A super Pod whose
// condition the syncer never saw (its deletion seen only by a relist, or while the syncer was
// down, before the condition was copied up) reads as lost: the tenant Pod is then kept,
// Failed with reason SuperPodLost, and never deleted on a guess.
func disruptionOf(env *resources.Env, t *corev1.Pod) *corev1.PodCondition {
	if c, ok := env.Disruptions.Get(t.UID); ok {
		return &c
	}
	if c := resources.Disruption(&t.Status); c != nil {
		return c.DeepCopy()
	}
	return nil
}

// disrupted settles tenant Pod t whose super Pod the super cluster disrupted (cond: its
// DisruptionTarget condition, resources.Disruption) as a real cluster settles a disrupted Pod:
// the condition is written to t's status first (with, once the super Pod is gone, phase
// Failed and its containers terminated, as the kubelet leaves a Pod it terminated), then t is
// deleted, gracefully (grace: the super Pod's grace period; nil: t's own), so that its
// controller replaces it. The kubelet's own terminations (TerminationByKubelet: node pressure,
// node shutdown) leave a Failed Pod that nobody deletes: t is only marked. A tenant Pod that
// succeeded is left alone. Once the super Pod is gone (superGone) the record in
// env.Disruptions is dropped.
func disrupted(ctx context.Context, env *resources.Env, c *tenant.Cluster, t *corev1.Pod, cond corev1.PodCondition, superGone bool, grace *int64) error {
	if t.Status.Phase == corev1.PodSucceeded {
		env.Disruptions.Forget(t.UID)
		return nil
	}
	want := disruptedStatus(t, cond, superGone, metav1.Now())
	if !equality.Semantic.DeepEqual(want, &t.Status) {
		u := t.DeepCopy()
		u.Status = *want
		if _, err := c.Client.CoreV1().Pods(t.Namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: reconcile.FieldManager}); apierrors.IsNotFound(err) {
			return nil
		} else if err != nil { // a conflict too: retried with the newer Pod
			return fmt.Errorf("failed to write the disruption of tenant Pod %s/%s: %w", t.Namespace, t.Name, err)
		}
	}
	if cond.Reason != resources.ReasonTerminationByKubelet && t.DeletionTimestamp.IsZero() {
		uid := t.UID
		if err := c.Client.CoreV1().Pods(t.Namespace).Delete(ctx, t.Name, metav1.DeleteOptions{
			GracePeriodSeconds: grace, Preconditions: &metav1.Preconditions{UID: &uid},
		}); client404(err) != nil {
			return fmt.Errorf("failed to delete disrupted tenant Pod %s/%s: %w", t.Namespace, t.Name, err)
		}
		c.Recorder.Eventf(t, corev1.EventTypeNormal, cond.Reason, "The Pod's super-cluster copy was disrupted: %s", cond.Message)
	}
	if superGone {
		env.Disruptions.Forget(t.UID)
	}
	return nil
}

// disruptedStatus returns the status of tenant Pod t disrupted in the super cluster (cond, see
// disrupted): t's status with cond as its DisruptionTarget condition and, when the super Pod is
// gone (superGone) and t is not in a terminal phase yet, phase Failed, every container not
// terminated yet terminated with the kubelet's ContainerStatusUnknown (exit code 137), none
// ready or started, Ready and ContainersReady False (reason PodCompleted). t is not changed.
func disruptedStatus(t *corev1.Pod, cond corev1.PodCondition, superGone bool, now metav1.Time) *corev1.PodStatus {
	st := t.Status.DeepCopy()
	cond.ObservedGeneration = 0
	if cond.LastTransitionTime.IsZero() {
		cond.LastTransitionTime = now
	}
	if old := findCondition(st.Conditions, corev1.DisruptionTarget); old != nil {
		*old = cond
	} else {
		st.Conditions = append(st.Conditions, cond)
	}
	if !superGone || st.Phase == corev1.PodFailed || st.Phase == corev1.PodSucceeded {
		return st
	}
	st.Phase = corev1.PodFailed
	stopContainers(st, corev1.ContainerStateTerminated{Reason: reasonContainerStatusUnknown, Message: messageContainerStatusUnknown, ExitCode: lostExitCode})
	setCondition(st, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: reasonPodCompleted, LastTransitionTime: now})
	setCondition(st, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: reasonPodCompleted, LastTransitionTime: now})
	return st
}
