// Package vnode keeps the tenants' virtual Nodes (vNodes): for every super Node that hosts at
// least one of a tenant's Pods, a Node of the same name in the tenant control plane that
// mirrors the super Node and is kept alive by a node Lease, so that the tenant's
// kube-controller-manager runs its node-lifecycle controller with default settings and never
// marks the tenant's Pods NotReady or evicts them while the super Node is healthy.
//
// # Usage
//
// New builds a Manager on the syncer's resources.Env (it watches env.SuperNodes). The syncer
// sets env.VNodes to it, calls its ClusterStarting, ClusterSynced and ClusterStopped from its
// tenant.Hooks, and runs Start. The Pod upward path calls Ensure before binding a tenant Pod to
// a super Node's name (pod.EnsureVNode).
//
// # Implementation details
//
// A vNode (label tenancy.vcsyncer.io/vnode=true) carries the super Node's labels (with
// kubernetes.io/hostname taken from the super Node, or from its name only when that is a valid
// label value, so names longer than 63 characters never produce an invalid label), taints,
// spec.unschedulable, conditions, addresses, capacity, allocatable and nodeInfo (DesiredNode,
// DesiredStatus). With Options.Kubelet set (the syncer's kubelet API, pkg/kubeletproxy), a
// vNode advertises that address instead of the super Node's (one InternalIP, or Hostname and
// InternalDNS for a name) and its port as daemonEndpoints.kubeletEndpoint.Port, so the tenant
// apiserver sends kubectl logs, exec, attach and port-forward there (DesiredStatusFor).
// The lifecycle taints (node.kubernetes.io/not-ready, unreachable,
// unschedulable, *-pressure, network-unavailable) are left to the tenant's own node-lifecycle
// controller, which derives them from the vNode's conditions and cordon as it does for any Node.
//
// Heartbeats follow the kubelet (KEP-589 node Leases): each tenant has one loop goroutine that
// renews a Lease per vNode in kube-node-lease every LeaseRenewInterval (20 s by default, half
// the kubelet's rate: Lease writes grow as tenants × super Nodes, and the tenant's
// node-lifecycle controller needs one within its 50 s grace period), with
// holder and name the Node's name and the Node as owner. The vNode's status is written when
// the super Node's status changed (heartbeat times aside), and otherwise only every
// StatusReportFrequency (5 min by default) to refresh lastHeartbeatTime. Labels, taints and
// cordon are written only when they differ. Changes of a super Node (informer events) wake the
// loops of the tenants that have its vNode, so a cordon or a condition change reaches them
// within a second.
//
// Bindings (one struct, Snapshot/Restore) records per tenant which super Nodes host which
// tenant Pods (from the tenant Pod informer; DaemonSet Pods do not count, or every vNode would
// keep itself alive) and when each vNode was last needed. A vNode with no Pod for GCGrace
// (30 s by default) is deleted with its Lease. A vNode deleted by someone else while Pods are
// bound to it is created again, as a kubelet re-registers its Node, but only if the syncer had
// created or adopted it: a tenant Pod whose preset spec.nodeName names a super Node never
// makes the syncer expose that Node. Existing vNodes are adopted when a tenant's
// caches sync, so they are kept current and collected after a syncer restart too.
//
// When a super Node disappears, its vNodes and Leases are deleted at once. The tenant Pods
// bound to it are then orphaned, and the tenant's pod garbage collector deletes them after its
// 40 s quarantine, as for any deleted Node; their controllers create replacements, which the
// super scheduler places on the remaining Nodes. Meanwhile the super cluster's own garbage
// collector deletes the super Pods. No syncer restart is involved.
//
// # Implementation considerations
//
// Each tenant's loop is its own goroutine with its own client, so a slow or unreachable tenant
// delays only its own heartbeats. The last written Lease is kept in memory (as the kubelet
// does), so a renewal is a single Update. Ensure (called by upward workers) and garbage
// collection take a per-tenant lock, and collection re-checks the bookkeeping under it, so a
// Pod being bound never loses its vNode to a concurrent collection. A Node in the tenant that
// the syncer did not create (no vNode label) is never updated or deleted.
//
// It sits on floor 5 of the package map in docs/architecture.md and may import packages on floors
// 0–5 only (today: pkg/podcache, pkg/reconcile, pkg/resources, pkg/tenant); test/layering checks
// it.
package vnode
