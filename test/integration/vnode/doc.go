// Package vnode runs the syncer in-process against real local control planes (a super
// cluster with kwok Nodes and one tenant whose kube-controller-manager runs the default
// node-lifecycle controller) and checks the tenant's virtual Nodes: heartbeats and Leases keep
// them Ready past the node-monitor grace period, super Node changes propagate, idle vNodes are
// collected, and a deleted super Node makes its vNode and Pods go.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package vnode
