package syncer

import (
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// ClusterStarting implements tenant.Hooks: it registers every kind's tenant informer and a
// handler that enqueues downward requests (and those of dependent objects, such as Endpoints
// waiting for their Service) once the tenant's caches have synced.
func (s *Syncer) ClusterStarting(c *tenant.Cluster) {
	s.awaitRestore()   // its informers resume from the checkpoint's state, not before it is read
	s.limits.forget(c) // admission starts over with the new informers
	for kind, r := range s.resources {
		inf := r.TenantInformer(c)
		if !hasDownward(kind) {
			// The syncer's own copies (Events): cached to compare, nothing to enqueue; their
			// bytes are held (tenant.HeldKinds) and released on deletion.
			_, _ = inf.AddEventHandler(s.releaseEventsHandler(c))
			continue
		}
		// An error means the informer has stopped, i.e. the Cluster is stopping already.
		_ = c.AddEventHandler(inf, s.tenantHandler(c, kind))
	}
	if _, ok := s.resources[resources.KindPod]; ok {
		// The Pod kind caches the tenant's Nodes (vNodes are looked up there); their bytes are
		// held like a synced kind's (tenant.HeldKinds) and released on deletion here.
		_, _ = c.Informers.Core().V1().Nodes().Informer().AddEventHandler(s.releaseNodesHandler(c))
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
	s.scopeWaitFor(c)
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
	cold := s.takeCold(c.Name)
	for kind, r := range s.resources {
		if !hasDownward(kind) {
			continue
		}
		objs := r.TenantInformer(c).GetStore().List()
		s.admitInitial(c, kind, objs) // limits.maxObjects, over every cached object
		src := s.tenantSource(c, kind)
		if src == nil { // not resumable: everything
			for _, obj := range objs {
				if m, ok := obj.(metav1.Object); ok && !s.countRefused(c, kind, m.GetNamespace(), m.GetName()) {
					s.enqueueTenantObject(c, kind, m.GetNamespace(), m.GetName())
				}
			}
			continue
		}
		changed, vanished := src.Diff(objs, nil, nil)
		if cold {
			changed = metaObjects(objs, nil)
		} else {
			logResumeDiff(ctrl.Log.WithName("checkpoint"), c.Name, kind, "tenant", src, changed, vanished)
		}
		for _, m := range changed {
			if s.countRefused(c, kind, m.GetNamespace(), m.GetName()) {
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
		ownedByC := func(m metav1.Object) bool { o, owned := conversion.OwnerOf(m); return owned && o.TenantUID == c.UID }
		changed, vanished := src.Diff(objs, ownedByC,
			func(_ string, v source.ObjectVersion) bool { return v.Owner != nil && v.Owner.TenantUID == c.UID })
		if cold {
			changed = metaObjects(objs, ownedByC)
		} else {
			logResumeDiff(ctrl.Log.WithName("checkpoint"), c.Name, kind, "super", src, changed, vanished)
		}
		for _, m := range changed {
			o, _ := conversion.OwnerOf(m)
			req := requestFor(o, kind)
			s.enqueue(s.down, req, false)
			if s.upwardKind(kind) {
				s.enqueue(s.up, req, false)
			}
			src.Ack(source.Key(m), ownerVersion(m, o))
		}
		for key, v := range vanished {
			o := conversion.Owner{Tenant: c.Name, TenantUID: c.UID, Namespace: v.Owner.Namespace, Name: v.Owner.Name}
			s.enqueue(s.down, requestFor(o, kind), false)
			if kind == resources.KindNamespace {
				// Deleted while the syncer was away: the name may be free for another namespace.
				s.enqueueNamespaceColliders(c, key, v.Owner.Namespace, "")
			}
			src.Unack(key)
		}
	}
	s.drainParked(c.Name)
	s.vnodes.ClusterSynced(c)
	s.readmitHeld(c) // stubs restored from a checkpoint that fit now
	if s.resumedPolicyChanged(c) {
		s.PolicyChanged(c) // changed while the syncer was down: what changed since the acks is not enough
	}
	s.policyMarks.markApplied(c)
}

// logResumeDiff logs, for a tenant whose Sources held ack entries (a restart or a shard
// hand-over), which objects of one kind on one side ("tenant" or "super") changed or vanished
// since they were acked: those are the reconciles the resume costs. At most three keys are
// named, each with its acked and current resourceVersion ("" when it had no ack entry), cut to
// maxResumeSample bytes: names and resourceVersions come from the tenant's apiserver, which
// may send strings of any length. mode is the Source's informer's resume mode (for the super
// side, the shared super informer's).
func logResumeDiff(log logr.Logger, tenantName string, kind resources.Kind, side string, src *source.Source, changed []metav1.Object, vanished map[string]source.ObjectVersion) {
	if (len(changed) == 0 && len(vanished) == 0) || src.Mode() == source.ModeCold {
		return // nothing changed, or nothing was known (a first sync: everything is new)
	}
	var sample []string
	for _, m := range changed {
		if len(sample) == 3 {
			break
		}
		key := source.Key(m)
		was, _ := src.Acked(key)
		sample = append(sample, truncate(key+" "+was.ResourceVersion+"→"+m.GetResourceVersion(), maxResumeSample))
	}
	for key, v := range vanished {
		if len(sample) == 3 {
			break
		}
		sample = append(sample, truncate(key+" "+v.ResourceVersion+"→gone", maxResumeSample))
	}
	log.Info("Objects changed since they were last enqueued", "tenant", tenantName, "side", side,
		"kind", string(kind), "mode", src.Mode(), "changed", len(changed), "vanished", len(vanished), "sample", sample)
}

// maxResumeSample bounds each key logged by logResumeDiff, in bytes.
const maxResumeSample = 300

// metaObjects returns the objects of objs that keep accepts (all when keep is nil).
func metaObjects(objs []any, keep func(metav1.Object) bool) []metav1.Object {
	var out []metav1.Object
	for _, obj := range objs {
		if m, ok := obj.(metav1.Object); ok && (keep == nil || keep(m)) {
			out = append(out, m)
		}
	}
	return out
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
	s.limits.forget(c)
	if _, running := s.registry.Get(c.Name); !running {
		s.forgetTenantMetrics(c.Name)
		// Removed: its resumable state goes too (its super objects are deleted by the
		// Tenant's finalizer path, not by a checkpoint).
		s.dropParked(c.Name)
		if s.admission != nil {
			s.admission.Forget(c.Name)
		}
		if s.tenantBudgets != nil {
			s.tenantBudgets.Forget(c.Name)
		}
		s.sources.Forget(tenantSourcePrefix + c.Name + "/")
		for _, r := range s.resources {
			if src := s.superSource(r.Kind()); src != nil {
				src.UnackWhere(func(_ string, v source.ObjectVersion) bool {
					return v.Owner != nil && v.Owner.TenantUID == c.UID
				})
			}
		}
		for _, r := range s.resources {
			if f, ok := r.(interface{ Forget(tenant string) }); ok {
				f.Forget(c.Name) // per-tenant state of a kind
			}
		}
		s.forgetEvents(c.Name) // waiting Event copies and the tenant's Event token bucket
		s.scopeRemove(c)       // sharding: its super objects leave this shard's caches
	}
}

// enqueue adds req to q at high (live event) or low (initial list) priority and counts it.
func (s *Syncer) enqueue(q *pipelineQueue, req resources.Request, live bool) {
	dir := directionUpward
	if q == s.down {
		dir = directionDownward
	}
	metrics.QueueAdd(req.Tenant, dir)
	s.track.arrival(dir, req, live, time.Now())
	if live {
		q.retries.changed(req) // a change of its object: a request in the long backoff is retried at once and then briefly again
		q.addHigh(req)
	} else {
		q.addLow(req)
	}
}

func requestFor(o conversion.Owner, kind resources.Kind) resources.Request {
	if kind == resources.KindNamespace {
		return resources.Request{Tenant: o.Tenant, Kind: kind, Name: o.Namespace}
	}
	return resources.Request{Tenant: o.Tenant, Kind: kind, Namespace: o.Namespace, Name: o.Name}
}

// tenantHandler enqueues a tenant object's changes, then acks them in its Source (after the
// enqueue, so a checkpoint never records as handled a change that is not in the queue).
func (s *Syncer) tenantHandler(c *tenant.Cluster, kind resources.Kind) cache.ResourceEventHandler {
	src := s.tenantSource(c, kind)
	enqueue := func(obj any, down, deleted bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj, deleted = d.Obj, true
		}
		if deleted {
			s.releaseHeld(c, kind, obj) // its bytes held (Secrets, ConfigMaps), synced or not
		}
		if !c.Synced() {
			return // the initial list is enqueued by ClusterSynced
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			return
		}
		if deleted {
			s.releaseObject(c, kind, source.Key(m)) // a refused object may take its slot
		} else if !s.admitObject(c, kind, m, false) {
			return // over limits.maxObjects: reported once, not enqueued, not acked
		}
		req := resources.Request{Tenant: c.Name, Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName()}
		if down {
			s.enqueue(s.down, req, true)
		}
		if kind == resources.KindService || s.upwardOnTenantChange(kind) {
			s.enqueue(s.up, req, true) // the tenant Service may need its load-balancer status back
		}
		if kind == resources.KindPersistentVolumeClaim || kind == resources.KindPersistentVolume || kind == resources.KindStorageClass {
			s.enqueue(s.up, req, true) // binding, status, or a synced storage object changed in the tenant
		}
		s.enqueueDependents(c, kind, m)
		if src != nil {
			if deleted {
				src.Unack(source.Key(m))
			} else {
				src.Ack(source.Key(m), source.VersionOf(m))
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { enqueue(o, true, false) },
		// A tenant Pod's status changes (mostly the syncer's own upward writes) change what
		// the downward reconciler does with it only when they change its tenant-owned
		// conditions (readiness gates), which go down into the super Pod's status. An update
		// with an unchanged resourceVersion is a relist replaying the cache, not a change
		// (checkpointing.md finding 5: client-go delivers those to handlers without a resync
		// period).
		UpdateFunc: func(o, n any) {
			if !sameVersion(o, n) {
				enqueue(n, !podStatusOnly(o, n) || tenantPodConditionsChanged(o, n), false)
			}
		},
		DeleteFunc: func(o any) { enqueue(o, true, true) },
	}
}

// sameVersion reports whether two versions of an object have the same UID and resourceVersion.
func sameVersion(oldObj, newObj any) bool {
	o, ok1 := oldObj.(metav1.Object)
	n, ok2 := newObj.(metav1.Object)
	return ok1 && ok2 && o.GetUID() == n.GetUID() && o.GetResourceVersion() == n.GetResourceVersion()
}

func (s *Syncer) superHandler(kind resources.Kind) cache.ResourceEventHandler {
	src := s.superSource(kind)
	enqueue := func(obj any, down, deleted, added bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj, deleted = d.Obj, true
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			return
		}
		c, o, ok := s.syncedOwner(m)
		if !ok {
			return
		}
		if !s.ready.ready.Load() {
			// The super caches' initial list: ClusterSynced, which waits for it (afterReady),
			// diffs it against the ack map and enqueues only what changed.
			return
		}
		if added && src != nil && src.IsAcked(source.Key(m), source.VersionOf(m)) {
			// An add of a version already handled: the informer's initial list still reaching
			// this handler after the tenant synced (and was diffed by ClusterSynced), e.g. on a
			// shard that has just taken the tenant with its ack map.
			return
		}
		req := requestFor(o, kind)
		if down {
			s.enqueue(s.down, req, true) // repair a super copy changed or deleted by someone else
		}
		if deleted && kind == resources.KindNamespace {
			s.superNamespaceGone(c, m) // the name is free for a namespace refused while it was held
		}
		if s.upwardKind(kind) {
			s.enqueue(s.up, req, true)
		}
		if src != nil { // after the enqueue; see tenantHandler
			if deleted {
				src.Unack(source.Key(m))
			} else {
				src.Ack(source.Key(m), ownerVersion(m, o))
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			enqueue(o, true, false, true)
			s.enqueuePodsWaitingFor(kind, o)
		},
		// Status-only changes of a super Pod (scheduling, kubelet) matter upward only; an
		// unchanged resourceVersion is a relist, not a change (see tenantHandler).
		UpdateFunc: func(o, n any) {
			if !sameVersion(o, n) {
				enqueue(n, !podStatusOnly(o, n), false, false)
				if kind == resources.KindPod {
					s.superPodIPsChanged(o, n)
				}
			}
		},
		DeleteFunc: func(o any) {
			if kind == resources.KindPod {
				s.superPodDeleted(o) // before the enqueue: the Pod reconciler reads it
			}
			enqueue(o, true, true, false)
			if kind == resources.KindPod {
				s.superPodIPsChanged(o, nil)
			}
		},
	}
}

// superPodDeleted records why a deleted super Pod went away (its DisruptionTarget condition,
// resources.Disruptions) from its last state: the deletion event's object, or the cache's last
// version when the deletion was only seen by a relist (a DeletedFinalStateUnknown, which may
// lack a condition written just before the deletion).
func (s *Syncer) superPodDeleted(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	if st, ok := podcache.StatusOf(obj); ok {
		s.env.Disruptions.SuperPodDeleted(m, st)
	}
}

// hasDownward reports whether a kind has a downward (tenant → super) path: every kind but
// Event, whose tenant objects are the syncer's own copies.
func hasDownward(kind resources.Kind) bool { return kind != resources.KindEvent }

// hasUpward reports whether a kind of the skeleton has an upward (super → tenant) path; see
// upwardKind for all kinds.
func hasUpward(kind resources.Kind) bool {
	return kind == resources.KindPod || kind == resources.KindService ||
		kind == resources.KindPersistentVolumeClaim || kind == resources.KindPersistentVolume || kind == resources.KindStorageClass
}

// upwardKind reports whether a kind has an upward (super → tenant) path: the skeleton's (hasUpward)
// and those implementing resources.Upwarder.
func (s *Syncer) upwardKind(kind resources.Kind) bool {
	if _, ok := s.resources[kind].(resources.Upwarder); ok {
		return true
	}
	return hasUpward(kind)
}

// upwardOnTenantChange reports whether a tenant change of a kind enqueues it upward too.
func (s *Syncer) upwardOnTenantChange(kind resources.Kind) bool {
	u, ok := s.resources[kind].(resources.Upwarder)
	return ok && u.UpwardOnTenantChange()
}

// mappedSuperHandler enqueues upward the requests m maps a super object's change to, over the
// synced tenants (kinds whose super objects carry no ownership stamps; Events have their own
// pipeline, eventHandler).
func (s *Syncer) mappedSuperHandler(m resources.SuperMapper) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		o, ok := obj.(metav1.Object)
		if !ok || s.registry == nil {
			return
		}
		clusters := s.syncedClusters()
		for _, req := range m.MapSuper(s.env, o, clusters) {
			s.enqueue(s.up, req, true)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, n any) { enqueue(n) },
		DeleteFunc: enqueue,
	}
}

// podStatusOnly reports whether an update event of a Pod changed nothing but its status (and
// resourceVersion). For other kinds it returns false.
func podStatusOnly(oldObj, newObj any) bool {
	if o, ok := oldObj.(*podcache.Pod); ok {
		if n, ok := newObj.(*podcache.Pod); ok { // cached Pods: their specs compare encoded
			return podMetaOnlyStatus(&o.ObjectMeta, &n.ObjectMeta) && o.SpecEqual(n)
		}
	}
	o, ok1 := podcache.From(oldObj)
	n, ok2 := podcache.From(newObj)
	if !ok1 || !ok2 {
		return false
	}
	return podMetaOnlyStatus(&o.ObjectMeta, &n.ObjectMeta) && equality.Semantic.DeepEqual(o.Spec, n.Spec)
}

// podMetaOnlyStatus reports whether two versions of a Pod's metadata are equal in what
// podStatusOnly compares: UID, generation, deletion timestamp, labels and annotations.
func podMetaOnlyStatus(o, n *metav1.ObjectMeta) bool {
	return o.UID == n.UID && o.Generation == n.Generation &&
		equality.Semantic.DeepEqual(o.DeletionTimestamp, n.DeletionTimestamp) &&
		equality.Semantic.DeepEqual(o.Labels, n.Labels) &&
		equality.Semantic.DeepEqual(o.Annotations, n.Annotations)
}

// tenantPodConditionsChanged reports whether an update event of a tenant Pod changed its
// tenant-owned conditions (pod.TenantConditionsChanged). For other kinds it returns false.
func tenantPodConditionsChanged(oldObj, newObj any) bool {
	o, ok1 := podcache.From(oldObj)
	n, ok2 := podcache.From(newObj)
	return ok1 && ok2 && pod.TenantConditionsChanged(o, n)
}

// podDependencies are the kinds a super Pod may need before the super cluster accepts or runs
// it: the super apiserver refuses a Pod whose ServiceAccount does not exist yet, and a kubelet
// waits for the ConfigMaps and Secrets it mounts. The tenant's DNS Service (a Service) is one
// too, for every namespace: see isTenantDNS.
var podDependencies = map[resources.Kind]bool{
	resources.KindServiceAccount: true, resources.KindConfigMap: true, resources.KindSecret: true,
	resources.KindService: true,
}

// isTenantDNS reports whether owner o names the tenant's cluster DNS Service
// (kube-system/kube-dns), whose super ClusterIP every Pod using the cluster DNS waits for
// (pod.setTenantDNS).
func isTenantDNS(kind resources.Kind, o conversion.Owner) bool {
	return kind == resources.KindService && o.Namespace == pod.TenantDNSNamespace && o.Name == pod.TenantDNSService
}

// enqueuePodsWaitingFor enqueues, when the super copy of a Pod dependency (podDependencies)
// appears, the tenant Pods of the same tenant namespace that have no super copy yet (of every
// namespace for the tenant's DNS Service), so a Pod applied before its ServiceAccount converges
// as soon as the ServiceAccount is synced instead of after its retry backoff.
func (s *Syncer) enqueuePodsWaitingFor(kind resources.Kind, obj any) {
	if !podDependencies[kind] {
		return
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	if c, o, ok := s.syncedOwner(m); ok {
		s.enqueueWaitingPods(c, kind, o)
	}
}

// syncedOwner returns the registered tenant whose ownership stamps super object m carries, and
// the stamps, when that tenant (same UID: not a deleted tenant's namesake) has synced its
// caches; ok is false for an object no tenant owns, a tenant not registered or not synced,
// and a syncer without a tenant registry.
func (s *Syncer) syncedOwner(m metav1.Object) (c *tenant.Cluster, o conversion.Owner, ok bool) {
	if s.registry == nil {
		return nil, conversion.Owner{}, false
	}
	o, owned := conversion.OwnerOf(m)
	if !owned {
		return nil, o, false
	}
	c, ok = s.registry.Get(o.Tenant)
	if !ok || c.UID != o.TenantUID || !c.Synced() {
		return nil, o, false
	}
	return c, o, true
}

// enqueueWaitingPods enqueues downward the tenant Pods of c without a super copy that wait for
// the super copy of o, a kind object: the Pods of o's namespace, or of every namespace when o
// is the tenant's DNS Service (and tenant DNS is on). Service copies other than that one
// enqueue nothing.
//
// The super Pods are looked up in the super cache, so the lookup runs once the super caches
// have synced (afterReadyOnce: one run per namespace for every add of the super caches'
// initial list); see enqueueWaitingIn.
func (s *Syncer) enqueueWaitingPods(c *tenant.Cluster, kind resources.Kind, o conversion.Owner) {
	ns := o.Namespace
	if kind == resources.KindService {
		if !s.env.TenantDNS || !isTenantDNS(kind, o) {
			return
		}
		ns = metav1.NamespaceAll
	}
	s.afterReadyOnce(wakeKey{c: c, kind: resources.KindPod, namespace: ns}, func() { s.enqueueWaitingPodsIn(c, ns) })
}

// enqueueWaitingPodsIn enqueues downward the tenant Pods of c in namespace ns (every namespace
// for metav1.NamespaceAll) that have no super copy and are not being deleted.
func (s *Syncer) enqueueWaitingPodsIn(c *tenant.Cluster, ns string) {
	pods, err := podcache.ListerOf(c.Informers.Core().V1().Pods().Informer()).Pods(ns).List(labels.Everything())
	if err != nil {
		return
	}
	for _, p := range pods {
		superPods := podcache.ListerOf(s.env.SuperInformers.Core().V1().Pods().Informer()).Pods(resources.SuperNamespace(c, p.Namespace))
		if _, err := superPods.Get(p.Name); err == nil || !p.DeletionTimestamp.IsZero() {
			continue
		}
		s.enqueue(s.down, resources.Request{Tenant: c.Name, Kind: resources.KindPod, Namespace: p.Namespace, Name: p.Name}, true)
	}
}

// PolicyChanged implements tenant.Hooks: every cached object of the tenant is enqueued
// downward at low priority, so objects refused before are synced if now allowed and synced
// objects that the new policy refuses lose the refused parts (or their super copies). The
// shared super objects (resources.SuperMapper kinds: public classes, RuntimeClasses) and the
// tenant's copies of them are enqueued upward, so copies follow what the policy allows.
func (s *Syncer) PolicyChanged(c *tenant.Cluster) {
	s.enqueueSharedUpward(c)
	s.readmitHeld(c) // raised limits.maxCachedBytes or maxObjectBytes: objects held out may fit
	// A raised limits.maxObjects admits refused objects (enqueued below with the others).
	for kind, keys := range s.limits.raise(c, maxObjects(c)) {
		for _, key := range keys {
			ns, name := source.SplitKey(key)
			resources.Admitted(c, kind, ns, name)
		}
	}
	for kind, r := range s.resources {
		if !hasDownward(kind) {
			continue
		}
		for _, obj := range r.TenantInformer(c).GetStore().List() {
			if m, ok := obj.(metav1.Object); ok && !s.countRefused(c, kind, m.GetNamespace(), m.GetName()) {
				s.enqueue(s.down, resources.Request{Tenant: c.Name, Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName()}, false)
			}
		}
	}
	s.policyMarks.markApplied(c) // checkpointed: a resume under another policy runs this again
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
