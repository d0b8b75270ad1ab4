package service

import (
	"context"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// noCopy is appended to the message of the condition of a Service left without a super copy.
const noCopy = "; the Service has no copy in the super cluster: nothing answers at its ClusterIP, and the tenant DNS leaves its name unanswered"

// markRefused tells the tenant that Service t has no super copy because of a refusal with
// reason and msg: condition Synced=False with that reason (the reason of the refusal's Warning
// Event too; replaced when the reason or message changes) and label conversion.LabelRefused
// (value reason), which a tenant DNS configured for it uses to leave the Service unanswered.
// Each write happens only when it changes something. Its Warning Event is the caller's
// (admit.Deny, admit.Filtered), so setSyncedCondition is told not to record one.
func markRefused(ctx context.Context, c *tenant.Cluster, t *corev1.Service, reason, msg string) error {
	cond := &metav1.Condition{Type: ConditionSynced, Status: metav1.ConditionFalse, Reason: reason, Message: msg + noCopy}
	if err := writeSynced(ctx, c, t, nil, cond, false); err != nil {
		return err
	}
	return setRefusedLabel(ctx, c, t, reason)
}

// setRefusedLabel sets label conversion.LabelRefused of tenant Service t to value, or removes
// it when value is "", with a merge patch of the label alone (field manager vc-syncer), unless
// t (as cached) has it so already.
func setRefusedLabel(ctx context.Context, c *tenant.Cluster, t *corev1.Service, value string) error {
	have, ok := t.Labels[conversion.LabelRefused]
	if (value == "" && !ok) || (value != "" && ok && have == value) {
		return nil
	}
	var v any
	if value != "" {
		v = value
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{conversion.LabelRefused: v}}})
	if err != nil {
		return err
	}
	_, err = c.Client.CoreV1().Services(t.Namespace).Patch(ctx, t.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: reconcile.FieldManager})
	return client404(err)
}

// refusedByPolicy reports whether the tenant's policy refuses tenant Service t (nil, nil when
// t is missing or being deleted).
func refusedByPolicy(c *tenant.Cluster, t *corev1.Service) *policy.Denial {
	if t == nil || !t.DeletionTimestamp.IsZero() {
		return nil
	}
	return policy.CheckService(c.Policy().Services(), t)
}

// client404 maps NotFound (the tenant Service is gone) to nil.
func client404(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
