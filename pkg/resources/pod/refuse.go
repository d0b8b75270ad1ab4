package pod

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// refusePod reports that tenant c's policy refused tenant Pod t (read live from the tenant,
// not the trimmed cache) by denial d: the Pod gets condition PodScheduled=False with reason
// policy.ReasonPolicyDenied and message d.Error() (written only when it differs, so the
// status write happens once), then resources.Deny reports the Event and the metric for the
// Pod's version after that write, so the update event it causes is not reported again. The
// Pod gets no super Pod. It returns nil (no retry: the Pod comes back when it or the policy
// changes), or the error of the status write (retried).
func refusePod(ctx context.Context, c *tenant.Cluster, t *corev1.Pod, d *policy.Denial) error {
	cond := corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: policy.ReasonPolicyDenied, Message: d.Error(), LastTransitionTime: metav1.Now(),
	}
	i := -1
	for j, have := range t.Status.Conditions {
		if have.Type == corev1.PodScheduled {
			i = j
		}
	}
	if i < 0 || t.Status.Conditions[i].Status != cond.Status || t.Status.Conditions[i].Reason != cond.Reason ||
		t.Status.Conditions[i].Message != cond.Message {
		p := t.DeepCopy()
		if i < 0 {
			p.Status.Conditions = append(p.Status.Conditions, cond)
		} else {
			p.Status.Conditions[i] = cond
		}
		updated, err := c.Client.CoreV1().Pods(t.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("failed to set PodScheduled=False on refused tenant Pod %s/%s: %w", t.Namespace, t.Name, err)
		}
		t = updated
	}
	resources.Deny(c, resources.KindPod, t, d)
	return nil
}
