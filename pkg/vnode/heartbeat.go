package vnode

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/reconcile"
)

var vnodeSelector = labels.SelectorFromSet(labels.Set{LabelVNode: "true"})

// run is one tenant's heartbeat loop: every Tick, and at once when a vNode or its super Node
// changed, it reconciles the tenant's vNodes (see syncNode).
func (m *Manager) run(ctx context.Context, l *tenantLoop) {
	t := time.NewTicker(m.opts.Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-l.wake:
		}
		if !m.superSynced() {
			continue
		}
		dirty := l.takeDirty()
		now := time.Now()
		for _, name := range m.bindings.Nodes(l.c.Name) {
			if ctx.Err() != nil {
				return
			}
			if err := m.syncNode(ctx, l, name, dirty[name], now); err != nil {
				ctrl.LoggerFrom(ctx).V(1).Info("Retrying vNode sync", "Node", name, "reason", err.Error())
				l.mu.Lock()
				l.dirty[name] = true // retried on the next tick
				l.mu.Unlock()
			}
		}
	}
}

// syncNode reconciles one vNode of the loop's tenant at now. full forces a comparison of the
// vNode with its super Node (something changed); otherwise only due heartbeats are written.
//
//   - super Node gone: the vNode and its Lease are deleted at once; the tenant's Pods on it are
//     then orphaned and the tenant's pod garbage collector deletes them (as for any deleted Node),
//     while the super cluster deletes the super Pods;
//   - no tenant Pod bound for GCGrace: the vNode and its Lease are deleted;
//   - vNode missing while Pods are bound to it (deleted by someone): it is created again, as a
//     kubelet re-registers its Node;
//   - otherwise labels, taints, cordon and status are brought in line (status at least every
//     StatusReportFrequency) and the Lease is renewed every LeaseRenewInterval.
func (m *Manager) syncNode(ctx context.Context, l *tenantLoop, name string, full bool, now time.Time) error {
	c := l.c
	pods, lastActive, known, ok := m.bindings.Get(c.Name, name)
	if !ok {
		return nil
	}
	super, err := m.superNodes.Get(name)
	superGone := apierrors.IsNotFound(err)
	if err != nil && !superGone {
		return err
	}
	vn, err := c.Informers.Core().V1().Nodes().Lister().Get(name)
	switch {
	case apierrors.IsNotFound(err):
		vn = nil
	case err != nil:
		return err
	case !IsVNode(vn):
		return nil // a Node the syncer did not create: never touched
	}
	switch {
	case superGone:
		if vn != nil {
			return m.remove(ctx, l, vn, "super Node deleted")
		}
		m.bindings.ForgetIdle(c.Name, name, now)
		return nil
	case pods == 0 && now.Sub(lastActive) >= m.opts.GCGrace:
		return m.gc(ctx, l, name, now)
	case vn == nil:
		if pods == 0 || !known {
			// Just created (the cache catches up), already removed, or only named by a Pod's
			// preset spec.nodeName: the syncer never exposes a super Node for that alone.
			return nil
		}
		l.nodeMu.Lock()
		defer l.nodeMu.Unlock()
		return m.createLocked(ctx, l, super)
	}
	if full || HeartbeatDue(&vn.Status, now, m.opts.StatusReportFrequency) {
		if vn, err = m.update(ctx, l, super, vn, now); err != nil {
			return err
		}
	}
	return m.renewLease(ctx, l, vn, now)
}

// createLocked creates the vNode of super Node super with its status; the caller holds
// l.nodeMu. A vNode that exists already (the cache lags) is left to the loop.
func (m *Manager) createLocked(ctx context.Context, l *tenantLoop, super *corev1.Node) error {
	nodes := l.c.Client.CoreV1().Nodes()
	created, err := nodes.Create(ctx, DesiredNode(super, nil), metav1.CreateOptions{FieldManager: reconcile.FieldManager})
	if apierrors.IsAlreadyExists(err) {
		l.markDirty(super.Name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to create vNode %s in tenant: %w", super.Name, err)
	}
	delete(l.deleted, super.Name)
	created.Status, _ = DesiredStatusFor(super, m.opts.Kubelet, nil, time.Now(), m.opts.StatusReportFrequency)
	if _, err := nodes.UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: reconcile.FieldManager}); err != nil {
		l.markDirty(super.Name) // the loop writes the status from the cache
		if apierrors.IsConflict(err) {
			return nil // a tenant controller (ttl, node-lifecycle) wrote the new Node first
		}
		return fmt.Errorf("failed to set vNode %s status: %w", super.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Created vNode", "Node", super.Name)
	l.markDirty(super.Name) // the loop writes the Lease
	return nil
}

// update writes the vNode's labels, taints and cordon, then its status, each only when it
// differs from the super Node (status also when its heartbeat is due). It returns the
// latest vNode.
func (m *Manager) update(ctx context.Context, l *tenantLoop, super, vn *corev1.Node, now time.Time) (*corev1.Node, error) {
	nodes := l.c.Client.CoreV1().Nodes()
	if want := DesiredNode(super, vn); NodeChanged(want, vn) {
		updated, err := nodes.Update(ctx, want, metav1.UpdateOptions{FieldManager: reconcile.FieldManager})
		if err != nil {
			return vn, fmt.Errorf("failed to update vNode %s: %w", vn.Name, err)
		}
		vn = updated
	}
	status, write := DesiredStatusFor(super, m.opts.Kubelet, &vn.Status, now, m.opts.StatusReportFrequency)
	if !write {
		return vn, nil
	}
	u := vn.DeepCopy()
	u.Status.Conditions, u.Status.Addresses = status.Conditions, status.Addresses
	u.Status.Capacity, u.Status.Allocatable, u.Status.NodeInfo = status.Capacity, status.Allocatable, status.NodeInfo
	u.Status.DaemonEndpoints = status.DaemonEndpoints
	updated, err := nodes.UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: reconcile.FieldManager})
	if err != nil {
		return vn, fmt.Errorf("failed to update vNode %s status: %w", vn.Name, err)
	}
	return updated, nil
}

// renewLease creates or renews the vNode's Lease when the last renewal is LeaseRenewInterval
// or more old. The last written Lease is kept in memory, as the
// kubelet does, so a renewal is one Update and no read.
func (m *Manager) renewLease(ctx context.Context, l *tenantLoop, vn *corev1.Node, now time.Time) error {
	last := l.leases[vn.Name]
	if last != nil && last.Spec.RenewTime != nil && now.Sub(last.Spec.RenewTime.Time) < m.opts.LeaseRenewInterval &&
		len(last.OwnerReferences) == 1 && last.OwnerReferences[0].UID == vn.UID {
		return nil
	}
	leases := l.c.Client.CoordinationV1().Leases(NodeLeaseNamespace)
	if last == nil {
		got, err := leases.Get(ctx, vn.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			created, err := leases.Create(ctx, DesiredLease(vn, nil, m.opts.LeaseDuration, now), metav1.CreateOptions{FieldManager: reconcile.FieldManager})
			if err != nil {
				return fmt.Errorf("failed to create Lease of vNode %s: %w", vn.Name, err)
			}
			l.leases[vn.Name] = created
			return nil
		}
		if err != nil {
			return fmt.Errorf("failed to read Lease of vNode %s: %w", vn.Name, err)
		}
		last = got
	}
	updated, err := leases.Update(ctx, DesiredLease(vn, last, m.opts.LeaseDuration, now), metav1.UpdateOptions{FieldManager: reconcile.FieldManager})
	if err != nil {
		delete(l.leases, vn.Name) // read it again next time
		return fmt.Errorf("failed to renew Lease of vNode %s: %w", vn.Name, err)
	}
	l.leases[vn.Name] = updated
	return nil
}

// gc removes an idle vNode (no Pod bound for GCGrace) and forgets it. A Pod bound to it in
// the meantime keeps the record, and the loop then creates the vNode again.
func (m *Manager) gc(ctx context.Context, l *tenantLoop, name string, now time.Time) error {
	l.nodeMu.Lock()
	defer l.nodeMu.Unlock()
	notAfter := now.Add(-m.opts.GCGrace)
	if pods, lastActive, _, ok := m.bindings.Get(l.c.Name, name); !ok || pods > 0 || lastActive.After(notAfter) {
		return nil // touched by Ensure meanwhile
	}
	vn, err := l.c.Informers.Core().V1().Nodes().Lister().Get(name)
	if err == nil && IsVNode(vn) && vn.UID != l.deleted[name] {
		if err := m.removeLocked(ctx, l, vn, "no tenant Pod for "+m.opts.GCGrace.String()); err != nil {
			return err
		}
	} else if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	m.bindings.ForgetIdle(l.c.Name, name, notAfter)
	return nil
}

// remove deletes a vNode and its Lease.
func (m *Manager) remove(ctx context.Context, l *tenantLoop, vn *corev1.Node, why string) error {
	l.nodeMu.Lock()
	defer l.nodeMu.Unlock()
	if vn.UID == l.deleted[vn.Name] {
		return nil
	}
	return m.removeLocked(ctx, l, vn, why)
}

func (m *Manager) removeLocked(ctx context.Context, l *tenantLoop, vn *corev1.Node, why string) error {
	uid := vn.UID
	err := l.c.Client.CoreV1().Nodes().Delete(ctx, vn.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("failed to delete vNode %s: %w", vn.Name, err)
	}
	l.deleted[vn.Name] = uid
	delete(l.leases, vn.Name)
	err = l.c.Client.CoordinationV1().Leases(NodeLeaseNamespace).Delete(ctx, vn.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to delete Lease of vNode %s: %w", vn.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Removed vNode", "Node", vn.Name, "reason", why)
	return nil
}
