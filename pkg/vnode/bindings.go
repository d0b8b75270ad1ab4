package vnode

import (
	"sort"
	"sync"
	"time"
)

// Bindings is the vNode manager's bookkeeping: per tenant, the super Nodes that host the
// tenant's Pods (or are about to), which tenant Pods are bound to each, and when each vNode
// was last in use. It is all the in-memory state the manager needs besides the informer
// caches, kept in one place so that it can be saved with a checkpoint (Snapshot) and seeded
// at start-up (Restore). It is safe for concurrent use.
type Bindings struct {
	mu      sync.Mutex
	tenants map[string]map[string]*binding // tenant name → super Node name → binding
}

type binding struct {
	pods       map[string]struct{} // "namespace/name" of tenant Pods with spec.nodeName = the node
	lastActive time.Time
	vnode      bool
}

// Snapshot is a copy of Bindings in a plain, serialisable shape (JSON tags).
type Snapshot struct {
	// Tenants maps a tenant name to its super Nodes by name.
	Tenants map[string]map[string]NodeBinding `json:"tenants,omitempty"`
}

// NodeBinding is one tenant's use of one super Node.
type NodeBinding struct {
	// Pods are the tenant Pods ("namespace/name", sorted) bound to the node.
	Pods []string `json:"pods,omitempty"`
	// LastActive is when the vNode was last needed (created or adopted, asked for by a Pod
	// binding, or left by a Pod). A vNode without Pods is removed once LastActive is older
	// than the GC grace period.
	LastActive time.Time `json:"lastActive"`
	// VNode is true once the syncer created or adopted the tenant's vNode for the super Node
	// (Touch). Only then is a missing vNode created again for Pods bound to it: a Pod whose
	// preset spec.nodeName names a super Node never makes the syncer expose that Node.
	VNode bool `json:"vnode,omitempty"`
}

// NewBindings returns empty Bindings.
func NewBindings() *Bindings {
	return &Bindings{tenants: map[string]map[string]*binding{}}
}

func (b *Bindings) getLocked(tenant, node string, create bool) *binding {
	nodes := b.tenants[tenant]
	if nodes == nil {
		if !create {
			return nil
		}
		nodes = map[string]*binding{}
		b.tenants[tenant] = nodes
	}
	r := nodes[node]
	if r == nil && create {
		r = &binding{pods: map[string]struct{}{}}
		nodes[node] = r
	}
	return r
}

// AddPod records tenant Pod pod ("namespace/name") as bound to super Node node at now. It is
// idempotent.
func (b *Bindings) AddPod(tenant, node, pod string, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.getLocked(tenant, node, true)
	if _, ok := r.pods[pod]; !ok {
		r.pods[pod] = struct{}{}
		r.lastActive = now
	}
}

// RemovePod records that tenant Pod pod left super Node node at now (deleted or rebound).
func (b *Bindings) RemovePod(tenant, node, pod string, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r := b.getLocked(tenant, node, false); r != nil {
		if _, ok := r.pods[pod]; ok {
			delete(r.pods, pod)
			r.lastActive = now
		}
	}
}

// Touch records that the tenant has, or is about to get, the vNode of super Node node, needed
// at now (a Pod is being bound to it, or the vNode was found in the tenant), creating the
// record if missing.
func (b *Bindings) Touch(tenant, node string, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.getLocked(tenant, node, true)
	r.lastActive, r.vnode = now, true
}

// Get returns the number of tenant Pods bound to node, when the vNode was last active, and
// whether the syncer created or adopted it (see NodeBinding.VNode); ok is false when the tenant
// has no record of node.
func (b *Bindings) Get(tenant, node string) (pods int, lastActive time.Time, vnode, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.getLocked(tenant, node, false)
	if r == nil {
		return 0, time.Time{}, false, false
	}
	return len(r.pods), r.lastActive, r.vnode, true
}

// ForgetIdle removes the tenant's record of node if no Pod is bound to it and it was last
// active before notAfter, and reports whether it did. Callers remove the vNode only then, so a
// Pod binding that arrives concurrently keeps it.
func (b *Bindings) ForgetIdle(tenant, node string, notAfter time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.getLocked(tenant, node, false)
	if r == nil || len(r.pods) > 0 || r.lastActive.After(notAfter) {
		return false
	}
	delete(b.tenants[tenant], node)
	return true
}

// Nodes returns the super Nodes the tenant has a record of, sorted.
func (b *Bindings) Nodes(tenant string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.tenants[tenant]))
	for n := range b.tenants[tenant] {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TenantsOf returns the tenants that have a record of super Node node, sorted.
func (b *Bindings) TenantsOf(node string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for t, nodes := range b.tenants {
		if _, ok := nodes[node]; ok {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// Counts returns, per tenant, the number of vNodes the syncer created or adopted and has not
// removed yet.
func (b *Bindings) Counts() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]int, len(b.tenants))
	for t, nodes := range b.tenants {
		n := 0
		for _, r := range nodes {
			if r.vnode {
				n++
			}
		}
		out[t] = n
	}
	return out
}

// ForgetTenant drops everything recorded for the tenant.
func (b *Bindings) ForgetTenant(tenant string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.tenants, tenant)
}

// Snapshot returns a deep copy of the bookkeeping.
func (b *Bindings) Snapshot() Snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Snapshot{Tenants: make(map[string]map[string]NodeBinding, len(b.tenants))}
	for t, nodes := range b.tenants {
		m := make(map[string]NodeBinding, len(nodes))
		for n, r := range nodes {
			var pods []string
			for p := range r.pods {
				pods = append(pods, p)
			}
			sort.Strings(pods)
			m[n] = NodeBinding{Pods: pods, LastActive: r.lastActive, VNode: r.vnode}
		}
		s.Tenants[t] = m
	}
	return s
}

// Restore replaces the bookkeeping with s (from Snapshot).
func (b *Bindings) Restore(s Snapshot) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tenants = make(map[string]map[string]*binding, len(s.Tenants))
	for t, nodes := range s.Tenants {
		m := make(map[string]*binding, len(nodes))
		for n, nb := range nodes {
			r := &binding{pods: make(map[string]struct{}, len(nb.Pods)), lastActive: nb.LastActive, vnode: nb.VNode}
			for _, p := range nb.Pods {
				r.pods[p] = struct{}{}
			}
			m[n] = r
		}
		b.tenants[t] = m
	}
}
