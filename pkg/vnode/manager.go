package vnode

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Options configures a Manager. Zero values take the defaults.
type Options struct {
	// GCGrace is how long a vNode with no tenant Pod bound to it is kept before it is removed
	// (--vnode-gc-grace). Defaults to 30s.
	GCGrace time.Duration
	// LeaseDuration is the node Lease's spec.leaseDurationSeconds, as the kubelet's
	// nodeLeaseDurationSeconds=40 (KEP-589) (--vnode-lease-duration). Defaults to 40s.
	LeaseDuration time.Duration
	// LeaseRenewInterval is how often each vNode's Lease is renewed
	// (--vnode-lease-renew-interval). Defaults to half of LeaseDuration (20s), and is capped at
	// it. A kubelet renews every quarter (nodeLeaseRenewIntervalFraction 0.25, 10s); the
	// tenant's node-lifecycle controller only needs a renewal within its
	// --node-monitor-grace-period (50s by default; 40s before Kubernetes 1.32) and checks every
	// --node-monitor-period (5s), so 20s keeps a missed renewal (retried the next Tick) well
	// inside it while each tenant's Lease writes, tenants × super Nodes in all, are halved.
	LeaseRenewInterval time.Duration
	// StatusReportFrequency is how often a vNode's status is written when nothing in it
	// changed, refreshing its conditions' lastHeartbeatTime (the kubelet's
	// nodeStatusReportFrequency) (--vnode-status-report-frequency). Defaults to 5m.
	StatusReportFrequency time.Duration
	// Kubelet is the kubelet API the vNodes advertise (the syncer's, pkg/kubeletproxy;
	// --kubelet-advertise-address, --kubelet-advertise-port). Zero: the vNodes copy the super
	// Node's addresses and advertise no kubelet port (kubectl logs and exec then fail).
	Kubelet KubeletEndpoint
	// Tick is how often each tenant's vNodes are checked for due heartbeats and garbage
	// collection. Defaults to 1s.
	Tick time.Duration
}

func (o *Options) defaults() {
	if o.GCGrace <= 0 {
		o.GCGrace = 30 * time.Second
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = 40 * time.Second
	}
	if o.LeaseRenewInterval <= 0 || o.LeaseRenewInterval > o.LeaseDuration {
		o.LeaseRenewInterval = o.LeaseDuration / 2
	}
	if o.StatusReportFrequency <= 0 {
		o.StatusReportFrequency = 5 * time.Minute
	}
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
}

// ErrSuperNodeNotFound is returned by Ensure when the super Node is not in the super cache
// (deleted, or not yet seen): no vNode is created for it.
var ErrSuperNodeNotFound = errors.New("super Node not found")

// Manager keeps the tenants' virtual Nodes: one per super Node that hosts a tenant's Pods,
// mirroring it, with a node Lease renewed in the tenant, removed when no longer needed.
// Create it with New; wire ClusterStarting, ClusterSynced and ClusterStopped into the
// tenant.Hooks of the syncer, and run Start.
type Manager struct {
	env         *resources.Env
	opts        Options
	bindings    *Bindings
	superNodes  corelisters.NodeLister
	superSynced cache.InformerSynced
	log         logr.Logger

	mu    sync.Mutex
	ctx   context.Context // set by Start
	loops map[string]*tenantLoop
}

var (
	_ resources.VNodes = (*Manager)(nil)
	_ manager.Runnable = (*Manager)(nil)
)

// New returns a Manager reading super Nodes from env.SuperNodes (it registers an event
// handler there, so call it before the informers start). It fails when env has no super Node
// informer factory or the handler cannot be registered.
func New(env *resources.Env, o Options) (*Manager, error) {
	if env == nil || env.SuperNodes == nil {
		return nil, errors.New("vnode: Env.SuperNodes is required")
	}
	o.defaults()
	inf := env.SuperNodes.Core().V1().Nodes()
	m := &Manager{
		env: env, opts: o, bindings: NewBindings(),
		superNodes: inf.Lister(), superSynced: inf.Informer().HasSynced,
		log:   ctrl.Log.WithName("vnode"),
		loops: map[string]*tenantLoop{},
	}
	_, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    m.superNodeChanged,
		UpdateFunc: func(_, n any) { m.superNodeChanged(n) },
		DeleteFunc: m.superNodeChanged,
	})
	if err != nil {
		return nil, fmt.Errorf("vnode: failed to watch super Nodes: %w", err)
	}
	return m, nil
}

// Bindings returns the Manager's bookkeeping (for checkpoints and tests).
func (m *Manager) Bindings() *Bindings { return m.bindings }

// Start runs the per-tenant heartbeat loops until ctx is done, then stops them. It implements
// manager.Runnable.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	m.ctx = ctx
	for _, l := range m.loops {
		if l.synced {
			m.startLoopLocked(l)
		}
	}
	m.mu.Unlock()
	<-ctx.Done()
	m.mu.Lock()
	loops := m.loops
	m.loops = map[string]*tenantLoop{}
	m.mu.Unlock()
	for _, l := range loops {
		l.stop()
	}
	return nil
}

// Ensure makes sure tenant c has the vNode of super Node name, creating it (with the super
// Node's labels, taints, cordon and status) when missing, and records that the tenant needs
// it. The Lease and later changes follow from the tenant's heartbeat loop. It returns
// ErrSuperNodeNotFound (wrapped) when the super Node is not cached, resources.ErrNotOwned
// (wrapped) when the tenant has a Node of that name that the syncer did not create, and API
// errors from the tenant apiserver.
func (m *Manager) Ensure(ctx context.Context, c *tenant.Cluster, name string) error {
	super, err := m.superNodes.Get(name)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("vNode %s: %w", name, ErrSuperNodeNotFound)
	}
	if err != nil {
		return err
	}
	l := m.loop(c)
	if l == nil {
		return fmt.Errorf("vNode %s: tenant %s is not started", name, c.Name)
	}
	m.bindings.Touch(c.Name, name, time.Now())
	l.nodeMu.Lock()
	defer l.nodeMu.Unlock()
	vn, err := c.Informers.Core().V1().Nodes().Lister().Get(name)
	if err == nil && vn.UID != l.deleted[name] {
		if tenant.IsHeldOut(vn) {
			// Held out of the syncer's memory (the tenant is over its limits): the Pod waits.
			return fmt.Errorf("tenant Node %s is held out of the syncer's memory (the tenant's limits.maxObjectBytes or limits.maxCachedBytes)", name)
		}
		if !IsVNode(vn) {
			return fmt.Errorf("tenant Node %s: %w", name, resources.ErrNotOwned)
		}
		return nil
	}
	return m.createLocked(ctx, l, super)
}

// ClusterStarting registers the Manager's handlers on the tenant's Pod and Node informers.
// Call it from tenant.Hooks.ClusterStarting.
func (m *Manager) ClusterStarting(c *tenant.Cluster) {
	l := newTenantLoop(c)
	m.mu.Lock()
	if old := m.loops[c.Name]; old != nil && old.c != c {
		go old.stop()
	}
	m.loops[c.Name] = l
	m.mu.Unlock()
	// An error means the informer has stopped, i.e. the Cluster is stopping already.
	_, _ = c.Informers.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { m.podChanged(c, nil, o) },
		UpdateFunc: func(o, n any) { m.podChanged(c, o, n) },
		DeleteFunc: func(o any) { m.podDeleted(c, o) },
	})
	vnodeChanged := func(o any) {
		if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = d.Obj
		}
		if n, ok := o.(*corev1.Node); ok && IsVNode(n) {
			l.markDirty(n.Name)
		}
	}
	_, _ = c.Informers.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    vnodeChanged,
		UpdateFunc: func(_, n any) { vnodeChanged(n) },
		DeleteFunc: vnodeChanged,
	})
}

// ClusterSynced adopts the tenant's existing vNodes (so that they get heartbeats, and are
// removed when no Pod needs them) and starts the tenant's heartbeat loop. Call it from
// tenant.Hooks.ClusterSynced.
func (m *Manager) ClusterSynced(c *tenant.Cluster) {
	nodes, err := c.Informers.Core().V1().Nodes().Lister().List(vnodeSelector)
	if err == nil {
		now := time.Now()
		for _, n := range nodes {
			m.bindings.Touch(c.Name, n.Name, now)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if l := m.loops[c.Name]; l != nil && l.c == c {
		l.synced = true
		if m.ctx != nil {
			m.startLoopLocked(l)
		}
	}
}

// ClusterStopped stops the tenant's heartbeat loop and forgets its bookkeeping. The tenant's
// vNodes are left as they are (objects inside a tenant control plane are never deleted
// because the syncer stops serving it). Call it from tenant.Hooks.ClusterStopped.
func (m *Manager) ClusterStopped(c *tenant.Cluster) {
	m.mu.Lock()
	l := m.loops[c.Name]
	if l == nil || l.c != c {
		m.mu.Unlock()
		return
	}
	delete(m.loops, c.Name)
	m.mu.Unlock()
	l.stop()
	m.bindings.ForgetTenant(c.Name)
}

func (m *Manager) loop(c *tenant.Cluster) *tenantLoop {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l := m.loops[c.Name]; l != nil && l.c == c {
		return l
	}
	return nil
}

func (m *Manager) startLoopLocked(l *tenantLoop) {
	if l.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(m.ctx)
	ctx = ctrl.LoggerInto(ctx, m.log.WithValues("tenant", l.c.Name))
	l.cancel = cancel
	go func() {
		defer close(l.done)
		m.run(ctx, l)
	}()
}

// superNodeChanged wakes the loops of the tenants that have a vNode of the super Node.
func (m *Manager) superNodeChanged(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	n, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	for _, t := range m.bindings.TenantsOf(n.Name) {
		m.mu.Lock()
		l := m.loops[t]
		m.mu.Unlock()
		if l != nil {
			l.markDirty(n.Name)
		}
	}
}

func podKey(p metav1.Object) string { return p.GetNamespace() + "/" + p.GetName() }

// daemonSetPod reports whether a DaemonSet controls the Pod. Such Pods do not keep a vNode:
// the DaemonSet controller puts one on every vNode, so counting them would keep every vNode
// forever. When the vNode goes, the tenant's garbage collection removes them with it.
func daemonSetPod(p metav1.Object) bool {
	ref := metav1.GetControllerOfNoCopy(p)
	return ref != nil && ref.Kind == "DaemonSet"
}

// podChanged and podDeleted read a Pod's metadata and spec.nodeName only (podcache.NodeNameOf):
// they run for every tenant Pod event, and decoding a cached Pod's whole spec and status there
// was a measurable share of the syncer's CPU.
func (m *Manager) podChanged(c *tenant.Cluster, oldObj, newObj any) {
	p, ok1 := podcache.MetaOf(newObj)
	node, ok2 := podcache.NodeNameOf(newObj)
	if !ok1 || !ok2 {
		return
	}
	now := time.Now()
	if o, ok := podcache.MetaOf(oldObj); ok {
		if oldNode, _ := podcache.NodeNameOf(oldObj); oldNode != "" && oldNode != node {
			m.bindings.RemovePod(c.Name, oldNode, podKey(o), now)
		}
	}
	if node != "" && !daemonSetPod(p) {
		m.bindings.AddPod(c.Name, node, podKey(p), now)
	}
}

func (m *Manager) podDeleted(c *tenant.Cluster, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := podcache.MetaOf(obj)
	if node, _ := podcache.NodeNameOf(obj); ok && node != "" && !daemonSetPod(p) {
		m.bindings.RemovePod(c.Name, node, podKey(p), time.Now())
	}
}

// tenantLoop is one tenant's heartbeat loop and the state only it uses.
type tenantLoop struct {
	c      *tenant.Cluster
	wake   chan struct{}
	synced bool // guarded by Manager.mu
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	dirty map[string]bool

	// leases holds the last Lease written per vNode; only the loop goroutine uses it.
	leases map[string]*coordinationv1.Lease

	// nodeMu serialises creating (Ensure) and removing (GC) vNodes.
	nodeMu sync.Mutex
	// deleted maps a vNode name to the UID the loop last deleted, so that a stale cache entry
	// is not taken for a live vNode. Guarded by nodeMu.
	deleted map[string]types.UID
}

func newTenantLoop(c *tenant.Cluster) *tenantLoop {
	return &tenantLoop{
		c: c, wake: make(chan struct{}, 1), done: make(chan struct{}),
		dirty: map[string]bool{}, leases: map[string]*coordinationv1.Lease{}, deleted: map[string]types.UID{},
	}
}

func (l *tenantLoop) markDirty(name string) {
	l.mu.Lock()
	l.dirty[name] = true
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *tenantLoop) takeDirty() map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.dirty
	l.dirty = map[string]bool{}
	return d
}

// stop cancels the loop and waits for it (a loop that never started returns at once).
func (l *tenantLoop) stop() {
	if l.cancel == nil {
		return
	}
	l.cancel()
	<-l.done
}
