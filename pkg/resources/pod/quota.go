package pod

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// reportQuota reports that tenant Pod t does not fit in its super namespace's ResourceQuota
// (d): admit.DenyQuota (a Warning Event and a count, once per Pod version and policy
// generation) and, when that reported, condition PodScheduled=False with the Event's reason
// (d.Reason(): QuotaExceeded) and d's message on the tenant Pod, as a scheduler marks a Pod it
// cannot place, and the Event on the Pod's controller (reportOwner).
// It returns the error to retry with: it wraps admit.ErrNoQuotaRoom (and cause, the super
// apiserver's answer, when not nil).
func reportQuota(ctx context.Context, c *tenant.Cluster, t *corev1.Pod, d *policy.Denial, cause error) error {
	err := fmt.Errorf("Pod %s/%s: %w", t.Namespace, t.Name, admit.ErrNoQuotaRoom)
	if cause != nil {
		err = fmt.Errorf("%w: %w", err, cause)
	}
	if !admit.DenyQuota(c, resources.KindPod, t, d) {
		return err
	}
	if _, perr := setNotScheduled(ctx, c, t, d.Reason(), d.Error()); perr != nil {
		// Reported again on the next retry, condition included.
		admit.QuotaAdmitted(c, resources.KindPod, t.Namespace, t.Name)
		return fmt.Errorf("%w (condition not written: %w)", err, perr)
	}
	reportOwner(ctx, c, t, d.Reason(), d.Error())
	return err
}

// MarkPolicyDenied sets condition PodScheduled=False with reason policy.ReasonPolicyDenied and
// message d.Error() on tenant Pod t, as a scheduler marks a Pod it cannot place, unless t (as
// cached) has it already: a strategic-merge patch of the Pod's status, other conditions kept.
// The error is the patch's.
func MarkPolicyDenied(ctx context.Context, c *tenant.Cluster, t *corev1.Pod, d *policy.Denial) error {
	_, err := setNotScheduled(ctx, c, t, d.Reason(), d.Error())
	return err
}

// setNotScheduled sets condition PodScheduled=False with reason and message on tenant Pod t
// (see MarkPolicyDenied) and returns the Pod as written (t itself when it had the condition
// already, and nothing was written).
func setNotScheduled(ctx context.Context, c *tenant.Cluster, t *corev1.Pod, reason, message string) (*corev1.Pod, error) {
	for _, cond := range t.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == reason && cond.Message == message {
			return t, nil
		}
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: reason, Message: message,
		LastTransitionTime: metav1.Now(),
	}}}})
	if err != nil {
		return nil, err
	}
	return c.Client.CoreV1().Pods(t.Namespace).Patch(ctx, t.Name, types.StrategicMergePatchType, patch,
		metav1.PatchOptions{FieldManager: reconcile.FieldManager}, "status")
}
