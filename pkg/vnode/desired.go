package vnode

import (
	"net"
	"sort"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	// LabelVNode marks the virtual Nodes the syncer creates in a tenant (value "true"). Only
	// Nodes with this label are ever updated or deleted by the syncer.
	LabelVNode = "tenancy.vcsyncer.io/vnode"
	// AnnotationSuperLabels lists, comma-separated and sorted, the label keys the syncer copied
	// from the super Node. A key removed from the super Node is removed from the vNode; labels
	// the tenant puts on a vNode under other keys are kept.
	AnnotationSuperLabels = "tenancy.vcsyncer.io/super-labels"
	// NodeLeaseNamespace holds the tenant's node Leases (as kubelets write them, KEP-589).
	NodeLeaseNamespace = corev1.NamespaceNodeLease
)

// lifecycleTaints are the taint keys the tenant's own node-lifecycle controller manages from a
// Node's conditions and spec.unschedulable (TaintNodesByCondition, taint-based eviction). They
// are never copied from the super Node — the vNode's conditions and spec.unschedulable carry
// the same information and the tenant's controller derives its own — and the copies the
// tenant's controller put on the vNode are never removed by the syncer.
var lifecycleTaints = map[string]bool{
	corev1.TaintNodeNotReady:           true,
	corev1.TaintNodeUnreachable:        true,
	corev1.TaintNodeUnschedulable:      true,
	corev1.TaintNodeMemoryPressure:     true,
	corev1.TaintNodeDiskPressure:       true,
	corev1.TaintNodePIDPressure:        true,
	corev1.TaintNodeNetworkUnavailable: true,
}

// IsVNode reports whether tenant Node n was created by the syncer (label LabelVNode=true).
func IsVNode(n *corev1.Node) bool { return n != nil && n.Labels[LabelVNode] == "true" }

// DesiredNode returns the tenant vNode's metadata and spec for super Node super, starting from
// the tenant's current vNode (nil when it does not exist yet; the result is then a new Node to
// create). super must not be nil. The result:
//
//   - has the vNode's name (the super Node's name: tenant Pods are bound to it by that name);
//   - has the super Node's labels, LabelVNode=true, and kubernetes.io/hostname set to the super
//     Node's own hostname label or, when it has none, to its name if that is a valid label value
//     (at most 63 characters); a longer name never produces an invalid label, the label is then
//     left out. Labels the tenant set under other keys are kept (see AnnotationSuperLabels);
//   - has spec.unschedulable (cordon) of the super Node;
//   - has the super Node's taints except the lifecycle taints (node.kubernetes.io/not-ready,
//     unreachable, unschedulable, *-pressure, network-unavailable), plus the lifecycle taints the
//     tenant's node-lifecycle controller put on the current vNode.
//
// Other metadata of the current vNode (annotations written by tenant controllers, resource
// version) is kept, so the result can be written with Update.
func DesiredNode(super, current *corev1.Node) *corev1.Node {
	var n *corev1.Node
	if current != nil {
		n = current.DeepCopy()
	} else {
		n = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: super.Name}}
	}
	// Labels: drop what was copied before, then copy what the super Node has now.
	prev := strings.Split(n.Annotations[AnnotationSuperLabels], ",")
	labels := map[string]string{}
	for k, v := range n.Labels {
		labels[k] = v
	}
	for _, k := range prev {
		delete(labels, k)
	}
	copied := make([]string, 0, len(super.Labels)+1)
	for k, v := range super.Labels {
		labels[k] = v
		copied = append(copied, k)
	}
	if _, ok := super.Labels[corev1.LabelHostname]; !ok {
		delete(labels, corev1.LabelHostname)
		if len(validation.IsValidLabelValue(super.Name)) == 0 {
			labels[corev1.LabelHostname] = super.Name
			copied = append(copied, corev1.LabelHostname)
		}
	}
	labels[LabelVNode] = "true"
	n.Labels = labels
	sort.Strings(copied)
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[AnnotationSuperLabels] = strings.Join(copied, ",")

	n.Spec.Unschedulable = super.Spec.Unschedulable
	var taints []corev1.Taint
	for _, t := range super.Spec.Taints {
		if !lifecycleTaints[t.Key] {
			taints = append(taints, t)
		}
	}
	if current != nil {
		for _, t := range current.Spec.Taints {
			if lifecycleTaints[t.Key] {
				taints = append(taints, t)
			}
		}
	}
	n.Spec.Taints = taints
	return n
}

// NodeChanged reports whether want (from DesiredNode) differs from the current vNode in what
// the syncer owns: labels, annotations, spec.unschedulable and taints (compared as sets, so an
// order change alone never causes a write).
func NodeChanged(want, current *corev1.Node) bool {
	return !mapsEqual(want.Labels, current.Labels) || !mapsEqual(want.Annotations, current.Annotations) ||
		want.Spec.Unschedulable != current.Spec.Unschedulable || !taintsEqual(want.Spec.Taints, current.Spec.Taints)
}

// DesiredStatus returns the vNode status for super Node super given the vNode's current status
// (nil for a new vNode) at time now, and whether it must be written. The status has the super
// Node's conditions (type, status, reason, message, lastTransitionTime), addresses, capacity,
// allocatable and nodeInfo. Following the kubelet (nodeStatusReportFrequency), it is written
// when any of these changed, or when the vNode's last heartbeat (the Ready condition's
// lastHeartbeatTime) is reportEvery or more old; every condition's lastHeartbeatTime is then
// now. Otherwise the current heartbeat times are kept and write is false: heartbeats alone
// never cause a write more often than reportEvery (the Lease carries liveness, KEP-589).
func DesiredStatus(super *corev1.Node, current *corev1.NodeStatus, now time.Time, reportEvery time.Duration) (corev1.NodeStatus, bool) {
	return DesiredStatusFor(super, KubeletEndpoint{}, current, now, reportEvery)
}

// KubeletEndpoint is the kubelet API every vNode advertises: the syncer's (pkg/kubeletproxy).
type KubeletEndpoint struct {
	// Address is an IP address or a DNS name the tenant apiservers reach the syncer's kubelet
	// API at. Empty: the vNodes copy the super Node's addresses and advertise no kubelet port.
	Address string
	// Port is the kubelet API's port (daemonEndpoints.kubeletEndpoint.Port).
	Port int32
}

// addresses returns the vNode addresses for ep: one InternalIP for an IP address; for a name,
// Hostname and InternalDNS (a tenant apiserver dials the first of its
// --kubelet-preferred-address-types the Node has, Hostname first by default). No super Node
// address is kept, or the tenant apiserver would dial the super Node instead.
func (ep KubeletEndpoint) addresses() []corev1.NodeAddress {
	if net.ParseIP(ep.Address) != nil {
		return []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ep.Address}}
	}
	return []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: ep.Address}, {Type: corev1.NodeInternalDNS, Address: ep.Address}}
}

// DesiredStatusFor is DesiredStatus for vNodes that advertise kubelet endpoint ep (when
// ep.Address is set): their addresses are ep's and their daemonEndpoints.kubeletEndpoint.Port
// is ep.Port, instead of the super Node's addresses.
func DesiredStatusFor(super *corev1.Node, ep KubeletEndpoint, current *corev1.NodeStatus, now time.Time, reportEvery time.Duration) (corev1.NodeStatus, bool) {
	want := corev1.NodeStatus{
		Capacity:    super.Status.Capacity.DeepCopy(),
		Allocatable: super.Status.Allocatable.DeepCopy(),
		Addresses:   append([]corev1.NodeAddress(nil), super.Status.Addresses...),
		NodeInfo:    super.Status.NodeInfo,
		Conditions:  make([]corev1.NodeCondition, len(super.Status.Conditions)),
	}
	if ep.Address != "" {
		want.Addresses = ep.addresses()
		want.DaemonEndpoints.KubeletEndpoint.Port = ep.Port
	}
	for i, c := range super.Status.Conditions {
		c.LastHeartbeatTime = metav1.Time{}
		want.Conditions[i] = c
	}
	if current != nil && statusEqual(&want, current) {
		hb := lastHeartbeat(current)
		if !hb.IsZero() && now.Sub(hb) < reportEvery {
			for i := range want.Conditions {
				want.Conditions[i].LastHeartbeatTime = current.Conditions[i].LastHeartbeatTime
			}
			return want, false
		}
	}
	t := metav1.NewTime(now.Truncate(time.Second))
	for i := range want.Conditions {
		want.Conditions[i].LastHeartbeatTime = t
	}
	return want, true
}

// HeartbeatDue reports whether the vNode's status must be reported again at now because its
// last heartbeat is reportEvery or more old (see DesiredStatus).
func HeartbeatDue(current *corev1.NodeStatus, now time.Time, reportEvery time.Duration) bool {
	hb := lastHeartbeat(current)
	return hb.IsZero() || now.Sub(hb) >= reportEvery
}

// DesiredLease returns the node Lease of vNode node at now, as a kubelet writes it (KEP-589):
// name and holder are the Node's name, namespace kube-node-lease, duration leaseDuration in
// whole seconds, renewTime now, owned by the Node (so the tenant's garbage collector deletes it
// with the Node). current is the existing Lease (nil to create one); its metadata is kept.
func DesiredLease(node *corev1.Node, current *coordinationv1.Lease, leaseDuration time.Duration, now time.Time) *coordinationv1.Lease {
	var l *coordinationv1.Lease
	if current != nil {
		l = current.DeepCopy()
	} else {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node.Name, Namespace: NodeLeaseNamespace}}
	}
	l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}
	holder := node.Name
	secs := int32(leaseDuration / time.Second)
	renew := metav1.NewMicroTime(now)
	l.Spec.HolderIdentity = &holder
	l.Spec.LeaseDurationSeconds = &secs
	l.Spec.RenewTime = &renew
	return l
}

// statusEqual compares want (heartbeat times zero) with current ignoring heartbeat times.
func statusEqual(want, current *corev1.NodeStatus) bool {
	if len(want.Conditions) != len(current.Conditions) {
		return false
	}
	for i, c := range current.Conditions {
		c.LastHeartbeatTime = metav1.Time{}
		if !equality.Semantic.DeepEqual(want.Conditions[i], c) {
			return false
		}
	}
	return equality.Semantic.DeepEqual(want.Capacity, current.Capacity) &&
		equality.Semantic.DeepEqual(want.Allocatable, current.Allocatable) &&
		equality.Semantic.DeepEqual(want.Addresses, current.Addresses) &&
		want.DaemonEndpoints == current.DaemonEndpoints &&
		equality.Semantic.DeepEqual(want.NodeInfo, current.NodeInfo)
}

// lastHeartbeat returns the Ready condition's lastHeartbeatTime, or the latest of all
// conditions when there is no Ready condition (zero when there are none).
func lastHeartbeat(s *corev1.NodeStatus) time.Time {
	var latest time.Time
	for _, c := range s.Conditions {
		if c.Type == corev1.NodeReady {
			return c.LastHeartbeatTime.Time
		}
		if c.LastHeartbeatTime.After(latest) {
			latest = c.LastHeartbeatTime.Time
		}
	}
	return latest
}

func taintsEqual(a, b []corev1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(t corev1.Taint) string {
		ts := ""
		if t.TimeAdded != nil {
			ts = t.TimeAdded.UTC().Format(time.RFC3339)
		}
		return t.Key + "\x00" + t.Value + "\x00" + string(t.Effect) + "\x00" + ts
	}
	count := map[string]int{}
	for _, t := range a {
		count[key(t)]++
	}
	for _, t := range b {
		count[key(t)]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}
