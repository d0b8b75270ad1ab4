package syncer

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// ClusterStarting implements tenant.Hooks: it registers every kind's tenant informer and a
// handler that enqueues downward requests once the tenant's caches have synced.
func (s *Syncer) ClusterStarting(c *tenant.Cluster) {
	for kind, r := range s.resources {
		// An error means the informer has stopped, i.e. the Cluster is stopping already.
		_, _ = r.TenantInformer(c).AddEventHandler(s.tenantHandler(c, kind))
	}
	s.vnodes.ClusterStarting(c)
	s.trackPods(c) // Pod-creation phase metrics
	// Objects that wait for another (Endpoints for their Service) are re-enqueued when it changes.
	for _, r := range s.resources {
		if d, ok := r.(resources.DependentMapper); ok {
			if dep, ok := s.resources[d.DependsOn()]; ok {
				_, _ = dep.TenantInformer(c).AddEventHandler(s.dependentHandler(c, d))
			}
		}
	}
}

// ClusterSynced implements tenant.Hooks: it enqueues every cached tenant object (downward) and,
// for kinds with an upward path, the same objects upward, so a tenant added with thousands of
// objects syncs them all and statuses of already-running super objects come back.
func (s *Syncer) ClusterSynced(c *tenant.Cluster) {
	for kind, r := range s.resources {
		for _, obj := range r.TenantInformer(c).GetStore().List() {
			m, ok := obj.(metav1.Object)
			if !ok {
				continue
			}
			req := resources.Request{Tenant: c.Name, Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName()}
			s.enqueue(s.down, req, false)
			if s.upwardKind(kind) {
				s.enqueue(s.up, req, false)
			}
		}
	}
	s.enqueuePublicFor(c.Name) // public StorageClasses the tenant does not have yet
	// Super objects whose tenant object no longer exists (deleted while the tenant was not
	// synced) are found through the super caches.
	for kind, r := range s.resources {
		if m, ok := r.(resources.SuperMapper); ok {
			// Super objects shared by tenants (public PriorityClasses, Events) reach the new tenant.
			for _, obj := range r.SuperInformer(s.env).GetStore().List() {
				if o, ok := obj.(metav1.Object); ok {
					for _, req := range m.MapSuper(s.env, o, []*tenant.Cluster{c}) {
						s.enqueue(s.up, req, false)
					}
				}
			}
			continue
		}
		for _, obj := range r.SuperInformer(s.env).GetStore().List() {
			if m, ok := obj.(metav1.Object); ok {
				if o, owned := conversion.OwnerOf(m); owned && o.TenantUID == c.UID {
					s.enqueue(s.down, requestFor(o, kind), false)
				}
			}
		}
	}
	s.vnodes.ClusterSynced(c)
}

// ClusterStopped implements tenant.Hooks. The stopped Cluster's informers are already shut
// down; pending requests for it are dropped by the workers (the registry no longer has it).
func (s *Syncer) ClusterStopped(c *tenant.Cluster) {
	s.vnodes.ClusterStopped(c)
	if _, running := s.registry.Get(c.Name); !running {
		s.forgetTenantMetrics(c.Name)
		for _, r := range s.resources {
			if f, ok := r.(interface{ Forget(tenant string) }); ok {
				f.Forget(c.Name) // per-tenant state such as the Event rate limiter
			}
		}
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

func (s *Syncer) tenantHandler(c *tenant.Cluster, kind resources.Kind) cache.ResourceEventHandler {
	enqueue := func(obj any, down bool) {
		if !c.Synced() {
			return // the initial list is enqueued by ClusterSynced
		}
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			return
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
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { enqueue(o, true) },
		// A tenant Pod's status changes (mostly the syncer's own upward writes) never change
		// what the downward reconciler does with it.
		UpdateFunc: func(o, n any) { enqueue(n, !podStatusOnly(o, n)) },
		DeleteFunc: func(o any) { enqueue(o, true) },
	}
}

func (s *Syncer) superHandler(kind resources.Kind) cache.ResourceEventHandler {
	enqueue := func(obj any, down bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			return
		}
		o, owned := conversion.OwnerOf(m)
		if !owned || s.registry == nil {
			return
		}
		c, ok := s.registry.Get(o.Tenant)
		if !ok || c.UID != o.TenantUID || !c.Synced() {
			return
		}
		req := requestFor(o, kind)
		if down {
			s.enqueue(s.down, req, true) // repair a super copy changed or deleted by someone else
		}
		if s.upwardKind(kind) {
			s.enqueue(s.up, req, true)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			enqueue(o, true)
			s.enqueuePodsWaitingFor(kind, o)
		},
		// Status-only changes of a super Pod (scheduling, kubelet) matter upward only.
		UpdateFunc: func(o, n any) { enqueue(n, !podStatusOnly(o, n)) },
		DeleteFunc: func(o any) { enqueue(o, true) },
	}
}

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

// dependentHandler enqueues, downward, the objects of kind d that depend on a changed tenant
// object of d.DependsOn() (Endpoints and EndpointSlices applied before their Service).
func (s *Syncer) dependentHandler(c *tenant.Cluster, d resources.DependentMapper) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if !c.Synced() {
			return // the initial list is enqueued by ClusterSynced
		}
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if m, ok := obj.(metav1.Object); ok {
			for _, req := range d.Dependents(c, m) {
				s.enqueue(s.down, req, true)
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, n any) { enqueue(n) },
		DeleteFunc: enqueue,
	}
}

// mappedSuperHandler enqueues upward the requests m maps a super object's change to, over the
// synced tenants (kinds whose super objects carry no ownership stamps). Events are
// best-effort: they go in at low priority, behind Pod statuses.
func (s *Syncer) mappedSuperHandler(kind resources.Kind, m resources.SuperMapper) cache.ResourceEventHandler {
	live := kind != resources.KindEvent
	enqueue := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		o, ok := obj.(metav1.Object)
		if !ok || s.registry == nil {
			return
		}
		var clusters []*tenant.Cluster
		for _, name := range s.registry.Names() {
			if c, ok := s.registry.Get(name); ok && c.Synced() {
				clusters = append(clusters, c)
			}
		}
		for _, req := range m.MapSuper(s.env, o, clusters) {
			s.enqueue(s.up, req, live)
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
	o, ok1 := oldObj.(*corev1.Pod)
	n, ok2 := newObj.(*corev1.Pod)
	if !ok1 || !ok2 {
		return false
	}
	return o.UID == n.UID && o.Generation == n.Generation &&
		equality.Semantic.DeepEqual(o.DeletionTimestamp, n.DeletionTimestamp) &&
		equality.Semantic.DeepEqual(o.Labels, n.Labels) &&
		equality.Semantic.DeepEqual(o.Annotations, n.Annotations) &&
		equality.Semantic.DeepEqual(o.Spec, n.Spec)
}

// podDependencies are the kinds a super Pod may need before the super cluster accepts or runs
// it: the super apiserver refuses a Pod whose ServiceAccount does not exist yet, and a kubelet
// waits for the ConfigMaps and Secrets it mounts.
var podDependencies = map[resources.Kind]bool{
	resources.KindServiceAccount: true, resources.KindConfigMap: true, resources.KindSecret: true,
}

// enqueuePodsWaitingFor enqueues, when the super copy of a Pod dependency (podDependencies)
// appears, the tenant Pods of the same tenant namespace that have no super copy yet, so a Pod
// applied before its ServiceAccount converges as soon as the ServiceAccount is synced instead
// of after its retry backoff.
func (s *Syncer) enqueuePodsWaitingFor(kind resources.Kind, obj any) {
	if !podDependencies[kind] || s.registry == nil {
		return
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	o, owned := conversion.OwnerOf(m)
	if !owned {
		return
	}
	c, ok := s.registry.Get(o.Tenant)
	if !ok || c.UID != o.TenantUID || !c.Synced() {
		return
	}
	pods, err := c.Informers.Core().V1().Pods().Lister().Pods(o.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	superPods := s.env.SuperInformers.Core().V1().Pods().Lister().Pods(m.GetNamespace())
	for _, p := range pods {
		if _, err := superPods.Get(p.Name); err == nil || !p.DeletionTimestamp.IsZero() {
			continue
		}
		s.enqueue(s.down, resources.Request{Tenant: c.Name, Kind: resources.KindPod, Namespace: p.Namespace, Name: p.Name}, true)
	}
}
