package pod

import (
	"context"
	"errors"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
	"github.com/vcsyncer/syncer/pkg/vnode"
)

// LabelVNode marks the virtual Nodes the syncer creates in a tenant (see vnode.LabelVNode).
const LabelVNode = vnode.LabelVNode

// EnsureVNode makes sure the tenant has the virtual Node of super Node nodeName before a tenant
// Pod is bound to it. The vNode manager (pkg/vnode, env.VNodes) creates it and keeps it
// current: conditions, addresses, capacity, labels, taints and cordon of the super Node, a
// node Lease renewed in the tenant, and removal once no tenant Pod is bound to it. It returns
// vnode.ErrSuperNodeNotFound (wrapped) when the super Node is gone.
func EnsureVNode(ctx context.Context, env *resources.Env, c *tenant.Cluster, nodeName string) error {
	if env.VNodes == nil {
		return errors.New("no vNode manager configured (resources.Env.VNodes)")
	}
	return env.VNodes.Ensure(ctx, c, nodeName)
}
