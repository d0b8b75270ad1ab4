package pod

import (
	"context"
	"encoding/json"
	"slices"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/vcsyncer/syncer/pkg/reconcile"
)

// superConditions are the Pod condition types that the super cluster's components set on a
// super Pod and that the upward copy brings to the tenant Pod: the kubelet's
// (k8s.io/kubernetes pkg/kubelet/types PodConditionsByKubelet: PodScheduled, Ready,
// Initialized, ContainersReady, PodResizeInProgress, PodResizePending, plus
// PodReadyToStartContainers and AllContainersRestarting behind their feature gates, and its
// pre-1.29 name PodHasNetwork), the scheduler's PodScheduled, and DisruptionTarget, which the
// kubelet shares with the control plane (preemption, eviction, taint manager, pod GC:
// PodConditionSharedByKubelet).
var superConditions = map[corev1.PodConditionType]bool{
	corev1.PodScheduled:              true,
	corev1.PodReady:                  true,
	corev1.PodInitialized:            true,
	corev1.ContainersReady:           true,
	corev1.PodReadyToStartContainers: true,
	corev1.PodResizePending:          true,
	corev1.PodResizeInProgress:       true,
	corev1.AllContainersRestarting:   true,
	corev1.DisruptionTarget:          true,
	"PodHasNetwork":                  true,
}

// TenantOwned reports whether a Pod condition of type typ belongs to the tenant: every type
// that is not one of the super cluster's kubelet, scheduler or control-plane types
// (superConditions). Readiness-gate conditions (spec.readinessGates) and any other condition a
// tenant-side controller writes are tenant-owned: copied down into the super Pod's status, so
// the super kubelet sees a gate satisfied (the kubelet keeps conditions it does not own when
// it writes a Pod status: mergePodStatus in pkg/kubelet/status), and never overwritten or
// removed by the upward copy. A readiness gate naming a kubelet type stays the kubelet's.
func TenantOwned(typ corev1.PodConditionType) bool { return !superConditions[typ] }

// Bounds of what a tenant writes into a super Pod's status: at most maxCopiedConditions
// conditions, reasons cut to maxConditionReason and messages to maxConditionMessage bytes.
const (
	maxCopiedConditions = 8
	maxConditionReason  = 128
	maxConditionMessage = 1024
)

// gateTypes returns the condition types copied down from tenant Pod t into its super Pod: the
// types of t's spec.readinessGates (which its super Pod has too) that are tenant-owned, at
// most maxCopiedConditions. Only a declared gate matters to the super kubelet, so a tenant
// cannot write other condition types, or more of them, into super Pod statuses.
func gateTypes(t *corev1.Pod) []corev1.PodConditionType {
	var out []corev1.PodConditionType
	for _, g := range t.Spec.ReadinessGates {
		if TenantOwned(g.ConditionType) && len(out) < maxCopiedConditions && !slices.Contains(out, g.ConditionType) {
			out = append(out, g.ConditionType)
		}
	}
	return out
}

// gateConditions returns the conditions of st whose types are in gates, in st's order; with
// bounded, their reasons and messages are cut as they are written into a super Pod.
func gateConditions(st *corev1.PodStatus, gates []corev1.PodConditionType, bounded bool) []corev1.PodCondition {
	var out []corev1.PodCondition
	for _, c := range st.Conditions {
		if !slices.Contains(gates, c.Type) {
			continue
		}
		if bounded {
			c.Reason, c.Message = truncateUTF8(c.Reason, maxConditionReason), truncateUTF8(c.Message, maxConditionMessage)
		}
		out = append(out, c)
	}
	return out
}

// truncateUTF8 returns s cut to at most n bytes, on a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// TenantConditionsChanged reports whether two versions of a tenant Pod differ in the
// conditions copied down into the super Pod's status (gateTypes: type, status, reason,
// message, lastTransitionTime), that is whether the change must be copied down.
func TenantConditionsChanged(oldPod, newPod *corev1.Pod) bool {
	gates := gateTypes(newPod)
	return !sameConditions(gateConditions(&oldPod.Status, gates, true), gateConditions(&newPod.Status, gates, true))
}

// tenantConditionsInSync reports whether super Pod s's status has tenant Pod t's copied-down
// conditions (TenantConditionsPatch would send nothing).
func tenantConditionsInSync(t, s *corev1.Pod) bool {
	gates := gateTypes(t)
	return sameConditions(gateConditions(&t.Status, gates, true), gateConditions(&s.Status, gates, false))
}

// sameConditions reports whether a and b hold the same conditions by type, whatever their
// order; observedGeneration and lastProbeTime are not compared (the super Pod's generation is
// not the tenant's, and probe times are not copied).
func sameConditions(a, b []corev1.PodCondition) bool {
	if len(a) != len(b) {
		return false
	}
	for _, ca := range a {
		cb := findCondition(b, ca.Type)
		if cb == nil || ca.Status != cb.Status || ca.Reason != cb.Reason || ca.Message != cb.Message ||
			!equality.Semantic.DeepEqual(ca.LastTransitionTime, cb.LastTransitionTime) {
			return false
		}
	}
	return true
}

// findCondition returns a pointer to the condition of type typ in cs (nil when there is none).
func findCondition(cs []corev1.PodCondition, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}

// TenantConditionsPatch returns the strategic-merge patch of the super Pod s's status that
// makes its readiness-gate conditions (gateTypes of tenant Pod t) those of t: each such
// condition of t that s lacks or has with another status, reason, message or
// lastTransitionTime is set, its reason and message bounded (conditions merge by type, so the
// kubelet's and any other controller's are untouched), and each one s has and t no longer has
// is deleted. Other tenant-owned types stay in the tenant. It returns nil when they agree.
func TenantConditionsPatch(t, s *corev1.Pod) ([]byte, error) {
	gates := gateTypes(t)
	want, have := gateConditions(&t.Status, gates, true), gateConditions(&s.Status, gates, false)
	var items []any
	for _, c := range want {
		if hc := findCondition(have, c.Type); hc != nil && sameConditions([]corev1.PodCondition{c}, []corev1.PodCondition{*hc}) {
			continue
		}
		c.ObservedGeneration = 0 // the tenant Pod's generation means nothing in the super cluster
		items = append(items, c)
	}
	for _, c := range have {
		if findCondition(want, c.Type) == nil {
			items = append(items, map[string]any{"type": c.Type, "$patch": "delete"})
		}
	}
	if len(items) == 0 {
		return nil, nil
	}
	return json.Marshal(map[string]any{"status": map[string]any{"conditions": items}})
}

// copyTenantConditions copies tenant Pod t's tenant-owned conditions into the status of its
// super Pod s (a strategic-merge patch of pods/status, TenantConditionsPatch), so that the
// super kubelet sees the tenant's readiness gates; nothing is sent when they agree or s is
// being deleted. The error is the patch's.
func copyTenantConditions(ctx context.Context, superPods typedcorev1.PodInterface, t, s *corev1.Pod) error {
	if !s.DeletionTimestamp.IsZero() {
		return nil
	}
	patch, err := TenantConditionsPatch(t, s)
	if err != nil || patch == nil {
		return err
	}
	_, err = superPods.Patch(ctx, s.Name, types.StrategicMergePatchType, patch,
		metav1.PatchOptions{FieldManager: reconcile.FieldManager}, "status")
	return err
}
