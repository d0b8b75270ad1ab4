package syncer

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
	"github.com/vcsyncer/syncer/pkg/resume"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// enqueue adds req to q at high (live event) or low (initial list) priority and counts it.
func (s *Syncer) enqueue(q *pipelineQueue, req resources.Request, live bool) {
	dir := directionUpward
	if q == s.down {
		dir = directionDownward
	}
	metrics.QueueAdd(req.Tenant, dir)
	s.track.Arrival(dir, req, live, time.Now())
	if live {
		q.retries.Changed(req) // a change of its object: a request in the long backoff is retried at once and then briefly again
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
	prefetch := kind == resources.KindPod && s.podTokens != nil
	// enqueue queues obj (downward when down); added is a new object (the informer's Add).
	enqueue := func(obj any, down, deleted, added bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj, deleted = d.Obj, true
		}
		if deleted {
			s.gate.ReleaseHeld(c, kind, obj) // its bytes held (Secrets, ConfigMaps), synced or not
		}
		if !c.Synced() {
			return // the initial list is enqueued by ClusterSynced
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			return
		}
		if deleted {
			s.gate.Release(c, kind, source.Key(m)) // a refused object may take its slot
		} else if !s.gate.Admit(c, kind, m, false) {
			return // over limits.maxObjects: reported once, not enqueued, not acked
		}
		req := resources.Request{Tenant: c.Name, Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName()}
		if added && prefetch {
			// A new Pod's service-account tokens are requested while it waits in the queue,
			// so its worker does not wait for the tenant apiserver (pod.TokenPrefetcher);
			// before the enqueue, so its worker finds the round started.
			s.podTokens.Added(c, obj)
		}
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
		AddFunc: func(o any) { enqueue(o, true, false, true) },
		// A tenant Pod's status changes (mostly the syncer's own upward writes) change what
		// the downward reconciler does with it only when they change its tenant-owned
		// conditions (readiness gates), which go down into the super Pod's status. An update
		// with an unchanged resourceVersion is a relist replaying the cache, not a change
		// (checkpointing.md finding 5: client-go delivers those to handlers without a resync
		// period).
		// The tenant Pod's binding to the vNode of its super Pod's node is the upward
		// reconciler's own write (the super scheduler's binding, copied up): it changes nothing
		// the downward reconciler writes either.
		UpdateFunc: func(o, n any) {
			if !sameVersion(o, n) {
				enqueue(n, s.tenantUpdateGoesDown(c, o, n), false, false)
			}
		},
		DeleteFunc: func(o any) {
			enqueue(o, true, true, false)
			if prefetch {
				s.podTokens.Deleted(c.Name, o)
			}
		},
	}
}

// podEcho reports whether the Add of super Pod m (owned by tenant c's Pod o) is the Pod
// reconciler's own create coming back (podEchoes) while the tenant Pod is still as created
// (tenantPodAsCreated): then it is not queued downward.
func (s *Syncer) podEcho(c *tenant.Cluster, m metav1.Object, o conversion.Owner) bool {
	if s.echoes == nil {
		return false
	}
	echo, d := s.echoes.take(m.GetNamespace(), m.GetName(), o.UID)
	if !echo {
		return false
	}
	metrics.PodCreationCall(c.Name, metrics.CallSuperWatch, d.watch)
	metrics.PodCreationCall(c.Name, metrics.CallSuperInformer, d.informer)
	return s.tenantPodAsCreated(c, o)
}

// tenantPodAsCreated reports whether tenant c's cached Pod o.Namespace/o.Name is the one whose
// super Pod was just created (UID o.UID), not being deleted, and without readiness gates: then
// the super Pod's Add leaves the downward reconciler nothing to do. Otherwise the Add is queued:
// a tenant Pod deleted while its super Pod was being created (the reconcile the deletion ran
// may have read a super cache without the new Pod) is deleted by it, and tenant gate
// conditions set before the create are copied into the new super Pod's status.
func (s *Syncer) tenantPodAsCreated(c *tenant.Cluster, o conversion.Owner) bool {
	obj, ok, err := c.Informers.Core().V1().Pods().Informer().GetIndexer().GetByKey(o.Namespace + "/" + o.Name)
	if err != nil || !ok {
		return false
	}
	t, ok := podcache.From(obj)
	return ok && string(t.UID) == o.UID && t.DeletionTimestamp.IsZero() && len(t.Spec.ReadinessGates) == 0
}

// tenantUpdateGoesDown reports whether an update of tenant c's object (oldObj → newObj) is
// enqueued downward: always for kinds other than Pod; for a Pod, when it changed more than its
// status, unless that is its binding to the node its cached super Pod (this tenant Pod's copy,
// by its UID stamp) is bound to (pod.TenantBindingOnly: the upward reconciler copying the super
// scheduler's binding up), or when it changed the tenant-owned conditions copied down
// (pod.TenantConditionsChanged). The Pods are decoded once for both.
func (s *Syncer) tenantUpdateGoesDown(c *tenant.Cluster, oldObj, newObj any) bool {
	statusOnly := podcache.StatusOnly(oldObj, newObj)
	o, ok1 := podcache.From(oldObj)
	n, ok2 := podcache.From(newObj)
	if !ok1 || !ok2 {
		return !statusOnly
	}
	if pod.TenantConditionsChanged(o, n) {
		return true
	}
	return !statusOnly && !s.boundAsSuper(c, o, n)
}

// boundAsSuper reports whether the update of tenant c's Pod o → n is its binding only to the
// node its cached super Pod, this tenant Pod's copy, is bound to. A Pod with readiness gates is
// left out: the downward reconcile copies its gate conditions into the super Pod's status, and
// conditions set before its super Pod existed are copied by the next reconcile.
func (s *Syncer) boundAsSuper(c *tenant.Cluster, o, n *corev1.Pod) bool {
	if o.Spec.NodeName != "" || n.Spec.NodeName == "" || len(n.Spec.ReadinessGates) > 0 || s.env.SuperObject == nil {
		return false
	}
	sp, ok := s.env.SuperObject(resources.KindPod, resources.SuperNamespace(c, n.Namespace), n.Name)
	if !ok || sp.GetAnnotations()[conversion.AnnotationUID] != string(n.UID) {
		return false
	}
	node, ok := podcache.NodeNameOf(sp)
	return ok && node == n.Spec.NodeName && pod.TenantBindingOnly(o, n)
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
		if added && kind == resources.KindPod && s.podEcho(c, m, o) {
			down = false // the Pod reconciler's own create coming back: nothing to repair
		}
		req := requestFor(o, kind)
		if down {
			s.enqueue(s.down, req, true) // repair a super copy changed or deleted by someone else
		}
		if deleted && kind == resources.KindNamespace {
			s.gate.SuperNamespaceGone(c, m) // the name is free for a namespace refused while it was held
		}
		if s.upwardKind(kind) {
			s.enqueue(s.up, req, true)
		}
		if src != nil { // after the enqueue; see tenantHandler
			if deleted {
				src.Unack(source.Key(m))
			} else {
				src.Ack(source.Key(m), resume.OwnerVersion(m, o))
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			enqueue(o, true, false, true)
			s.enqueuePodsWaitingFor(kind, o)
		},
		// A super Pod's binding (the super scheduler's) and its status changes (the kubelet's)
		// matter upward only: what the downward reconciler writes into an existing super Pod
		// (its labels, annotations and the tenant's readiness-gate conditions) does not depend
		// on either, and a Binding leaves them alone. Such an update neither enqueues the Pod
		// downward nor resets a failed downward request's backoff. An unchanged
		// resourceVersion is a relist, not a change (see tenantHandler).
		UpdateFunc: func(o, n any) {
			if !sameVersion(o, n) {
				enqueue(n, !podcache.StatusOrBindingOnly(o, n), false, false)
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
// initial list); see admit.Gate.EnqueueWaitingIn.
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
