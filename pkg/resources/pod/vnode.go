package pod

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/syncer/downward"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// LabelVNode marks the virtual Nodes the syncer creates in a tenant.
const LabelVNode = "tenancy.vcsyncer.io/vnode"

// EnsureVNode makes sure the tenant has a virtual Node named after super Node nodeName, with
// the super Node's labels, addresses, capacity and a Ready condition, and without the
// node.kubernetes.io/not-ready and /unreachable taints. The tenant apiserver's NodeTaint
// admission puts not-ready on every new Node and, in a cluster with kubelets, the
// node-lifecycle controller removes it; tenants run without that controller (vNodes have no
// kubelet), so the syncer removes it — otherwise DaemonSet Pods, which do not tolerate it,
// are never created. It is a minimal vNode: heartbeats, Leases and garbage collection come
// with the virtual-node manager.
func EnsureVNode(ctx context.Context, env *resources.Env, c *tenant.Cluster, nodeName string) error {
	nodes := c.Client.CoreV1().Nodes()
	if existing, err := c.Informers.Core().V1().Nodes().Lister().Get(nodeName); err == nil {
		if !hasLifecycleTaint(existing) {
			return nil
		}
		return removeLifecycleTaints(ctx, c, existing.DeepCopy())
	}
	var super *corev1.Node
	if sn, err := env.SuperNodes.Core().V1().Nodes().Lister().Get(nodeName); err == nil {
		super = sn
	}
	n := DesiredVNode(nodeName, super)
	created, err := nodes.Create(ctx, n, metav1.CreateOptions{FieldManager: downward.FieldManager})
	if apierrors.IsAlreadyExists(err) {
		return nil // created concurrently; the next reconcile checks its taints through the cache
	}
	if err != nil {
		return fmt.Errorf("failed to create vNode %s in tenant: %w", nodeName, err)
	}
	created.Status = n.Status
	updated, err := nodes.UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: downward.FieldManager})
	if err != nil {
		return fmt.Errorf("failed to set vNode %s status: %w", nodeName, err)
	}
	return removeLifecycleTaints(ctx, c, updated)
}

// lifecycleTaints are the taints the node-lifecycle controller manages from Node conditions.
var lifecycleTaints = map[string]bool{corev1.TaintNodeNotReady: true, corev1.TaintNodeUnreachable: true}

func hasLifecycleTaint(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if lifecycleTaints[t.Key] {
			return true
		}
	}
	return false
}

func removeLifecycleTaints(ctx context.Context, c *tenant.Cluster, n *corev1.Node) error {
	if !hasLifecycleTaint(n) {
		return nil
	}
	kept := n.Spec.Taints[:0]
	for _, t := range n.Spec.Taints {
		if !lifecycleTaints[t.Key] {
			kept = append(kept, t)
		}
	}
	// A merge patch of the taint list with a resourceVersion precondition: it changes nothing
	// else on the Node (the cached copy is trimmed) and fails instead of racing another writer.
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": n.ResourceVersion},
		"spec":     map[string]any{"taints": kept},
	})
	if err != nil {
		return err
	}
	if _, err := c.Client.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: downward.FieldManager}); err != nil {
		return fmt.Errorf("failed to remove lifecycle taints from vNode %s: %w", n.Name, err)
	}
	return nil
}

// DesiredVNode returns the tenant vNode for super Node super (nil when the super Node is not
// cached: a bare Ready Node is returned).
func DesiredVNode(nodeName string, super *corev1.Node) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:   nodeName,
		Labels: map[string]string{LabelVNode: "true", corev1.LabelHostname: nodeName},
	}}
	now := metav1.Now()
	n.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "SuperNodeReady",
		Message: "virtual node of a super-cluster node", LastHeartbeatTime: now, LastTransitionTime: now,
	}}
	if super == nil {
		return n
	}
	for k, v := range super.Labels {
		if _, ok := n.Labels[k]; !ok {
			n.Labels[k] = v
		}
	}
	n.Status.Addresses = super.Status.Addresses
	n.Status.Capacity = super.Status.Capacity
	n.Status.Allocatable = super.Status.Allocatable
	n.Status.NodeInfo = super.Status.NodeInfo
	for _, cond := range super.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			n.Status.Conditions[0].Status = cond.Status
		}
	}
	return n
}
