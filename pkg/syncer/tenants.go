package syncer

import (
	"context"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
	"github.com/vcsyncer/syncer/pkg/resume"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// ClusterStarting implements tenant.Hooks: it registers every kind's tenant informer and a
// handler that enqueues downward requests (and those of dependent objects, such as Endpoints
// waiting for their Service) once the tenant's caches have synced.
func (s *Syncer) ClusterStarting(c *tenant.Cluster) {
	s.resume.AwaitRestore() // its informers resume from the checkpoint's state, not before it is read
	s.gate.Forget(c)        // admission starts over with the new informers
	for kind, r := range s.resources {
		inf := r.TenantInformer(c)
		if !hasDownward(kind) {
			// The syncer's own copies (Events): cached to compare, nothing to enqueue; their
			// bytes are held (tenant.HeldKinds) and released on deletion.
			_, _ = inf.AddEventHandler(s.gate.ReleaseEventsHandler(c))
			continue
		}
		// An error means the informer has stopped, i.e. the Cluster is stopping already.
		_ = c.AddEventHandler(inf, s.tenantHandler(c, kind))
	}
	if _, ok := s.resources[resources.KindPod]; ok {
		// The Pod kind caches the tenant's Nodes (vNodes are looked up there); their bytes are
		// held like a synced kind's (tenant.HeldKinds) and released on deletion here.
		_, _ = c.Informers.Core().V1().Nodes().Informer().AddEventHandler(s.gate.ReleaseNodesHandler(c))
	}
	s.vnodes.ClusterStarting(c)
	s.trackPods(c) // Pod-creation phase metrics
	// Last, when every informer of the tenant exists (they start after this hook): the
	// identity is the control plane's (kube-system UID) and the Tenant object's UID: a
	// Tenant re-created under the same name has new super namespaces, so its old ack maps say
	// nothing about them.
	if n := s.sources.CheckIdentity(tenantSourcePrefix+c.Name+"/", c.Identity()+"/"+c.UID); n > 0 {
		ctrl.Log.WithName("checkpoint").Info("Checkpointed state of another control plane discarded; the tenant starts cold",
			"tenant", c.Name, "sources", n)
	}
	// Sharding: the super caches take in the tenant's objects before its informers start, so
	// they are there before the tenant is Synced (the super handlers take what arrives after
	// that for live changes, and the super diff of ClusterSynced must see them).
	s.resume.ScopeWaitFor(c)
	if s.scope != nil && s.tenantBudgets != nil {
		// Its budget counts the super objects the scope just listed before any of its Pods
		// is admitted (the budget's handlers get them later).
		admit.CountTenant(s.env, s.resources, s.tenantBudgets, c.Name)
	}
}

// ClusterSynced implements tenant.Hooks. It enqueues the tenant objects whose version differs
// from what was last enqueued for them (the Source ack maps, restored from a checkpoint after
// a restart; empty on a cold start, so then every object), downward and, for kinds with an
// upward path, upward; the same for the tenant's super objects (so a super Pod whose status
// changed while the syncer was away goes up, and a super object whose tenant object is gone is
// cleaned up); and the requests parked or checkpointed for the tenant. A tenant added with
// thousands of objects so syncs them all, and a resumed tenant only what changed.
//
// A tenant the resumed checkpoint left out (over its --checkpoint-max-items budget: its
// queued requests are not in the checkpoint) has every object enqueued, tenant and super,
// whatever the ack maps say, so none of its unfinished work is lost.
//
// It runs once the super caches have synced (afterReady): a tenant that syncs first, such as
// one a new shard takes at start-up, waits for them.
func (s *Syncer) ClusterSynced(c *tenant.Cluster) {
	s.afterReady(func() { s.clusterSynced(c) })
}

func (s *Syncer) clusterSynced(c *tenant.Cluster) {
	if cur, ok := s.registry.Get(c.Name); ok && cur != c {
		return // replaced while waiting for the super caches
	}
	cold := s.resume.TakeCold(c.Name)
	for kind, r := range s.resources {
		if !hasDownward(kind) {
			continue
		}
		objs := r.TenantInformer(c).GetStore().List()
		s.gate.AdmitInitial(c, kind, objs) // limits.maxObjects, over every cached object
		src := s.tenantSource(c, kind)
		if src == nil { // not resumable: everything
			for _, obj := range objs {
				if m, ok := obj.(metav1.Object); ok && !s.gate.CountRefused(c, kind, m.GetNamespace(), m.GetName()) {
					s.enqueueTenantObject(c, kind, m.GetNamespace(), m.GetName())
				}
			}
			continue
		}
		changed, vanished := resume.DiffTenant(ctrl.Log.WithName("checkpoint"), c.Name, kind, src, objs, cold)
		for _, m := range changed {
			if s.gate.CountRefused(c, kind, m.GetNamespace(), m.GetName()) {
				continue // not enqueued, so not acked: admission runs again after a restart
			}
			s.enqueueTenantObject(c, kind, m.GetNamespace(), m.GetName())
			s.enqueueDependents(c, kind, m)
			src.Ack(source.Key(m), source.VersionOf(m))
		}
		for key := range vanished {
			ns, name := source.SplitKey(key)
			s.enqueueTenantObject(c, kind, ns, name)
			src.Unack(key)
		}
	}
	s.enqueuePublicFor(c) // public StorageClasses the tenant does not have yet
	// Super objects whose tenant object no longer exists (deleted while the tenant was not
	// synced) are found through the super caches.
	s.queueTenantEvents(c) // super Events about its objects (their own pipeline, events.go)
	for kind, r := range s.resources {
		if kind == resources.KindEvent {
			continue
		}
		if m, ok := r.(resources.SuperMapper); ok {
			// Super objects shared by tenants (public PriorityClasses) reach the new tenant.
			for _, obj := range r.SuperInformer(s.env).GetStore().List() {
				if o, ok := obj.(metav1.Object); ok {
					for _, req := range m.MapSuper(s.env, o, []*tenant.Cluster{c}) {
						s.enqueue(s.up, req, false)
					}
				}
			}
			continue
		}
		objs := r.SuperInformer(s.env).GetStore().List()
		src := s.superSource(kind)
		if src == nil {
			for _, obj := range objs {
				if m, ok := obj.(metav1.Object); ok {
					if o, owned := conversion.OwnerOf(m); owned && o.TenantUID == c.UID {
						s.enqueue(s.down, requestFor(o, kind), false)
					}
				}
			}
			continue
		}
		changed, vanished := resume.DiffSuper(ctrl.Log.WithName("checkpoint"), c, kind, src, objs, cold)
		for _, m := range changed {
			o, _ := conversion.OwnerOf(m)
			req := requestFor(o, kind)
			s.enqueue(s.down, req, false)
			if s.upwardKind(kind) {
				s.enqueue(s.up, req, false)
			}
			src.Ack(source.Key(m), resume.OwnerVersion(m, o))
		}
		for key, v := range vanished {
			o := conversion.Owner{Tenant: c.Name, TenantUID: c.UID, Namespace: v.Owner.Namespace, Name: v.Owner.Name}
			s.enqueue(s.down, requestFor(o, kind), false)
			if kind == resources.KindNamespace {
				// Deleted while the syncer was away: the name may be free for another namespace.
				s.gate.EnqueueNamespaceColliders(c, key, v.Owner.Namespace, "")
			}
			src.Unack(key)
		}
	}
	s.resume.DrainParked(c.Name)
	s.vnodes.ClusterSynced(c)
	s.gate.ReadmitHeld(c) // stubs restored from a checkpoint that fit now
	if s.resume.PolicyChangedSince(c, cold) {
		// Changed while the syncer was down or while this Cluster synced: what changed since
		// the acks is not enough.
		s.PolicyChanged(c)
	}
	s.resume.Marks.MarkApplied(c)
}

// enqueueTenantObject enqueues a tenant object's requests as the initial list does: downward,
// and upward for kinds with an upward path, at low priority.
func (s *Syncer) enqueueTenantObject(c *tenant.Cluster, kind resources.Kind, namespace, name string) {
	req := resources.Request{Tenant: c.Name, Kind: kind, Namespace: namespace, Name: name}
	s.enqueue(s.down, req, false)
	if s.upwardKind(kind) {
		s.enqueue(s.up, req, false)
	}
}

// enqueueDependents enqueues, downward, the tenant objects that depend on m of kind (Endpoints
// and EndpointSlices applied before their Service).
func (s *Syncer) enqueueDependents(c *tenant.Cluster, kind resources.Kind, m metav1.Object) {
	for _, d := range s.dependents[kind] {
		for _, req := range d.Dependents(c, m) {
			s.enqueue(s.down, req, true)
		}
	}
}

// ClusterStopped implements tenant.Hooks. The stopped Cluster's informers are already shut
// down; pending requests for it are dropped by the workers (the registry no longer has it).
func (s *Syncer) ClusterStopped(c *tenant.Cluster) {
	s.vnodes.ClusterStopped(c)
	s.gate.Forget(c)
	if s.podTokens != nil {
		s.podTokens.Forget(c) // its informers are gone: a new Cluster starts over
	}
	if _, running := s.registry.Get(c.Name); !running {
		s.forgetTenantMetrics(c.Name)
		// Removed: its resumable state goes too (its super objects are deleted by the
		// Tenant's finalizer path, not by a checkpoint).
		s.resume.DropParked(c.Name)
		if s.admission != nil {
			s.admission.Forget(c.Name)
		}
		if s.tenantBudgets != nil {
			s.tenantBudgets.Stopped(c.Name) // counts kept: its super objects may stay
		}
		s.resume.ForgetTenantSources(c, slices.Collect(maps.Keys(s.resources)))
		for _, r := range s.resources {
			if f, ok := r.(interface{ Forget(tenant string) }); ok {
				f.Forget(c.Name) // per-tenant state of a kind
			}
		}
		s.forgetEvents(c.Name) // waiting Event copies and the tenant's Event token bucket
		s.resume.Marks.Forget(c.Name)
		s.resume.ScopeRemove(c) // sharding: its super objects leave this shard's caches
	}
}

// PolicyChanged implements tenant.Hooks: every cached object of the tenant is enqueued
// downward at low priority, so objects refused before are synced if now allowed and synced
// objects that the new policy refuses lose the refused parts (or their super copies). The
// shared super objects (resources.SuperMapper kinds: public classes, RuntimeClasses) and the
// tenant's copies of them are enqueued upward, so copies follow what the policy allows.
func (s *Syncer) PolicyChanged(c *tenant.Cluster) {
	s.enqueueSharedUpward(c)
	s.gate.ReadmitHeld(c) // raised limits.maxCachedBytes or maxObjectBytes: objects held out may fit
	// A raised limits.maxObjects admits refused objects (enqueued below with the others).
	s.gate.Raise(c)
	for kind, r := range s.resources {
		if !hasDownward(kind) {
			continue
		}
		for _, obj := range r.TenantInformer(c).GetStore().List() {
			if m, ok := obj.(metav1.Object); ok && !s.gate.CountRefused(c, kind, m.GetNamespace(), m.GetName()) {
				s.enqueue(s.down, resources.Request{Tenant: c.Name, Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName()}, false)
			}
		}
	}
	s.resume.Marks.MarkApplied(c) // checkpointed: a resume under another policy runs this again
}

// enqueueSharedUpward enqueues upward, at low priority, for tenant c: every super object of
// the resources.SuperMapper kinds mapped to c, and every tenant object of those kinds that a
// tenant change enqueues upward too (the tenant's copies, whose super object may be gone).
func (s *Syncer) enqueueSharedUpward(c *tenant.Cluster) {
	for kind, r := range s.resources {
		m, ok := r.(resources.SuperMapper)
		if !ok || kind == resources.KindEvent {
			continue
		}
		for _, obj := range r.SuperInformer(s.env).GetStore().List() {
			if o, ok := obj.(metav1.Object); ok {
				for _, req := range m.MapSuper(s.env, o, []*tenant.Cluster{c}) {
					s.enqueue(s.up, req, false)
				}
			}
		}
		if !s.upwardOnTenantChange(kind) {
			continue
		}
		for _, obj := range r.TenantInformer(c).GetStore().List() {
			if o, ok := obj.(metav1.Object); ok {
				s.enqueue(s.up, resources.Request{Tenant: c.Name, Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}, false)
			}
		}
	}
}

// tokenRefreshInterval is how often the super Pod cache is scanned for tenant service-account
// tokens due for refresh. Tokens are refreshed at 80% of a lifetime of at least 10 minutes
// (the API minimum), so 30 s is well inside the remaining 2 minutes.
const tokenRefreshInterval = 30 * time.Second

// refreshTokens enqueues, every tokenRefreshInterval until ctx is done, the Pods whose tenant
// tokens are due (pod.TokenRefreshesDue), at low priority.
func (s *Syncer) refreshTokens(ctx context.Context) {
	t := time.NewTicker(tokenRefreshInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, req := range pod.TokenRefreshesDue(s.env, now) {
				if c, ok := s.registry.Get(req.Tenant); ok && c.Synced() {
					s.enqueue(s.down, req, false)
				}
			}
		}
	}
}

// syncedClusters returns the registered tenant Clusters whose caches have synced, in the
// registry's order (none before SetRegistry).
func (s *Syncer) syncedClusters() []*tenant.Cluster {
	if s.registry == nil {
		return nil
	}
	var out []*tenant.Cluster
	for _, name := range s.registry.Names() {
		if c, ok := s.registry.Get(name); ok && c.Synced() {
			out = append(out, c)
		}
	}
	return out
}
