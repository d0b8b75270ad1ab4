package pod

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/syncer/downward"
	"github.com/vcsyncer/syncer/pkg/tenant"
	"github.com/vcsyncer/syncer/pkg/vnode"
)

func reconcileUpward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	t, s, ok, err := downward.UpwardPair[*corev1.Pod](c, c.Informers.Core().V1().Pods().Lister().Pods(ns),
		env.SuperInformers.Core().V1().Pods().Lister().Pods(resources.SuperNamespace(c, ns)), name)
	if !ok || err != nil {
		return err
	}
	if !t.DeletionTimestamp.IsZero() {
		return nil
	}
	if s.Spec.NodeName != "" {
		// Also for Pods created with spec.nodeName preset: their vNode must exist too. A tenant
		// Pod already bound to a super Node that has since disappeared keeps getting its status;
		// its vNode is gone (see pkg/vnode).
		if err := EnsureVNode(ctx, env, c, s.Spec.NodeName); err != nil &&
			!(errors.Is(err, vnode.ErrSuperNodeNotFound) && t.Spec.NodeName != "") {
			return err
		}
	}
	if s.Spec.NodeName != "" && t.Spec.NodeName == "" {
		err := c.Client.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: t.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: s.Spec.NodeName},
		}, metav1.CreateOptions{FieldManager: downward.FieldManager})
		if err != nil {
			return fmt.Errorf("failed to bind tenant Pod %s/%s to vNode %s: %w", ns, name, s.Spec.NodeName, err)
		}
		if justScheduled(s) {
			// Binding already set the tenant's PodScheduled condition; the super Pod's next
			// status change (containers starting) brings the rest. One tenant write per Pod saved.
			return nil
		}
		// Read the bound Pod back so the status update below does not conflict.
		if t, err = c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
	}
	want := DesiredStatus(t, s)
	if equality.Semantic.DeepEqual(want, &t.Status) {
		return nil
	}
	if behind := olderStatus(s, t); behind != "" {
		// The super cache is behind what was already copied up (right after a resume from a
		// checkpoint, while the watch replays): copying it would flip the tenant Pod back,
		// e.g. Ready true → false. The replayed event re-enqueues the Pod.
		return fmt.Errorf("Pod %s/%s: %w (%s condition)", ns, name, ErrSuperCacheBehind, behind)
	}
	u := t.DeepCopy()
	u.Status = *want
	if _, err := c.Client.CoreV1().Pods(ns).UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: downward.FieldManager}); err != nil {
		return fmt.Errorf("failed to update tenant Pod %s/%s status: %w", ns, name, err)
	}
	return nil
}

// DesiredStatus returns the tenant Pod status for tenant Pod t given its super Pod s: the
// super status, except fields that describe the tenant object itself (QoS class, observed
// generations) and the tenant-owned conditions (TenantOwned): the super Pod's conditions of
// those types are left out and t's are kept, after the super cluster's conditions, in t's order.
func DesiredStatus(t, s *corev1.Pod) *corev1.PodStatus {
	want := s.Status.DeepCopy()
	want.QOSClass = t.Status.QOSClass
	want.ObservedGeneration = t.Status.ObservedGeneration
	want.NominatedNodeName = ""
	want.Conditions = desiredConditions(t, s)
	return want
}

// desiredConditions returns the conditions of DesiredStatus(t, s): s's conditions of the super
// cluster's types with t's observedGeneration, then t's tenant-owned conditions (nil when none).
func desiredConditions(t, s *corev1.Pod) []corev1.PodCondition {
	var out []corev1.PodCondition
	for _, sc := range s.Status.Conditions {
		if TenantOwned(sc.Type) {
			continue
		}
		sc.ObservedGeneration = 0
		if tc := findCondition(t.Status.Conditions, sc.Type); tc != nil {
			sc.ObservedGeneration = tc.ObservedGeneration
		}
		out = append(out, *sc.DeepCopy())
	}
	for _, tc := range t.Status.Conditions {
		if TenantOwned(tc.Type) {
			out = append(out, *tc.DeepCopy())
		}
	}
	return out
}

// justScheduled reports whether the super Pod has been scheduled and nothing else has happened
// to it yet: phase Pending, no container statuses, no condition but PodScheduled.
func justScheduled(s *corev1.Pod) bool {
	if s.Status.Phase != corev1.PodPending && s.Status.Phase != "" {
		return false
	}
	if len(s.Status.ContainerStatuses) > 0 || len(s.Status.InitContainerStatuses) > 0 || s.Status.PodIP != "" {
		return false
	}
	for _, c := range s.Status.Conditions {
		if c.Type != corev1.PodScheduled {
			return false
		}
	}
	return true
}

// ErrSuperCacheBehind is returned (and the request retried) when the cached super Pod is older
// than the status the tenant Pod already has.
var ErrSuperCacheBehind = errors.New("the cached super Pod is older than the tenant Pod's status; retrying")

// olderStatus returns the type of a super-cluster condition (one TenantOwned is false for)
// that the tenant Pod t has with a later lastTransitionTime than the same condition of the
// cached super Pod s ("" when there is none). Those tenant conditions other than PodScheduled
// are copied from the super Pod and a condition's lastTransitionTime only moves forward, so a
// later one in the tenant means the cache has not caught up with a status the syncer already
// copied up. PodScheduled (the tenant apiserver sets its own when the syncer binds the tenant
// Pod) and tenant-owned conditions (written in the tenant, never copied up) say nothing about
// the cache.
func olderStatus(s, t *corev1.Pod) corev1.PodConditionType {
	for _, tc := range t.Status.Conditions {
		if tc.Type == corev1.PodScheduled || TenantOwned(tc.Type) {
			continue
		}
		for _, sc := range s.Status.Conditions {
			if sc.Type == tc.Type && sc.LastTransitionTime.Before(&tc.LastTransitionTime) {
				return tc.Type
			}
		}
	}
	return ""
}
