package pod

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
	"github.com/vcsyncer/syncer/pkg/vnode"
)

func reconcileUpward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	superNS := resources.SuperNamespace(c, ns)
	t, s, ok, err := upwardPair(ctx, env, c, ns, superNS, name)
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
			(!errors.Is(err, vnode.ErrSuperNodeNotFound) || t.Spec.NodeName == "") {
			return err
		}
	}
	if s.Spec.NodeName != "" && t.Spec.NodeName == "" {
		err := c.Client.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: t.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: s.Spec.NodeName},
		}, metav1.CreateOptions{FieldManager: reconcile.FieldManager})
		if err != nil {
			return fmt.Errorf("failed to bind tenant Pod %s/%s to vNode %s: %w", ns, name, s.Spec.NodeName, err)
		}
		if justScheduled(s) {
			// Binding already set the tenant's PodScheduled condition; the super Pod's next
			// status change (containers starting) brings the rest. One tenant write per Pod saved.
			// That change is an event of the super Pod, enqueued even while this request runs
			// (the queue runs it again after) and kept by checkpoints (acked after the
			// enqueue); its request finds the tenant Pod bound, or binds it again and fails
			// while the tenant cache has not seen this Binding (retried), or finds the Pod
			// missing from a tenant cache that lags after a resume (upwardPair: retried).
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
		// The super cache may be behind what was already copied up (right after a resume from
		// a checkpoint, while the watch replays): copying it would flip the tenant Pod back,
		// e.g. Ready true → false. The live super Pod is the current status: it is copied
		// instead. A tenant condition newer than even the live one was not copied from the
		// super Pod (something wrote it in the tenant) and is overwritten, so a Pod is never
		// retried forever on a comparison that no change of the super Pod can settle.
		live, err := env.Super.CoreV1().Pods(superNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("Pod %s/%s: %w (%s condition; live super Pod: %w)", ns, name, ErrSuperCacheBehind, behind, err)
		}
		if live.UID != s.UID {
			return fmt.Errorf("Pod %s/%s: %w (%s condition; the live super Pod has another UID)", ns, name, ErrSuperCacheBehind, behind)
		}
		if want = DesiredStatus(t, live); equality.Semantic.DeepEqual(want, &t.Status) {
			return nil
		}
	}
	u := t.DeepCopy()
	u.Status = *want
	if err := reconcile.UpdatePodStatus(ctx, c.Client, ns, u, metav1.UpdateOptions{FieldManager: reconcile.FieldManager}); err != nil {
		return fmt.Errorf("failed to update tenant Pod %s/%s status: %w", ns, name, err)
	}
	return nil
}

// upwardPair reads tenant Pod ns/name from the tenant cache and its super Pod superNS/name
// from the super cache. ok is false, with a nil error, when there is nothing to copy up: no
// super Pod, a super Pod that is not this tenant's copy, or no tenant Pod of the UID the super
// Pod was synced from. When the tenant cache lacks that Pod (or holds another UID) while the
// super Pod is not being deleted, the tenant apiserver is asked: a cache that lags behind it
// (right after a resume from a checkpoint, while the tenant watch replays) gives an error
// wrapping reconcile.ErrTenantCacheBehind, so the request is retried instead of dropped; the
// tenant Pod's arrival in the cache enqueues it downward only, and a super Pod that stays as
// it is would never bring its status up. Other errors are cache or read errors.
func upwardPair(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, superNS, name string) (t, s *corev1.Pod, ok bool, err error) {
	if s, err = podcache.ListerOf(env.SuperInformers.Core().V1().Pods().Informer()).Pods(superNS).Get(name); apierrors.IsNotFound(err) {
		return nil, nil, false, nil
	} else if err != nil {
		return nil, nil, false, err
	}
	o, owned := conversion.OwnerOf(s)
	if !owned || o.TenantUID != c.UID {
		return nil, nil, false, nil
	}
	t, err = podcache.ListerOf(c.Informers.Core().V1().Pods().Informer()).Pods(ns).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, nil, false, err
	}
	if err == nil && string(t.UID) == o.UID {
		if tenant.IsHeldOut(t) {
			return nil, nil, false, nil // a stub: no binding or status is written from it
		}
		return t, s, true, nil
	}
	if !s.DeletionTimestamp.IsZero() {
		return nil, nil, false, nil // going away: its tenant Pod, if any, is settled downward
	}
	live, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil, false, nil
	case err != nil:
		return nil, nil, false, fmt.Errorf("failed to read tenant Pod %s/%s: %w", ns, name, err)
	case string(live.UID) == o.UID:
		return nil, nil, false, fmt.Errorf("Pod %s/%s: %w", ns, name, reconcile.ErrTenantCacheBehind)
	}
	return nil, nil, false, nil
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
// than the status the tenant Pod already has and the live super Pod cannot be read (or is
// another Pod by now).
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
