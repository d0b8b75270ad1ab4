package admit

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// WatchBounds registers the super caches of the syncer's ResourceQuotas and LimitRanges (one
// of each per super namespace: EnsureBounds) and their handler (call once, before the super informers start).
// An owned bound that is added, deleted, or changed other than in its status enqueues its
// tenant namespace downward, whose reconcile resets it to the policy. A quota whose status
// becomes computed for its spec (QuotaReady) enqueues the tenant objects of that
// namespace that have no super copy: they waited for it (ErrBoundsPending).
func (g *Gate) WatchBounds(env *resources.Env) error {
	quotas, limitRanges := BoundsInformers(env)
	h := cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { g.boundChanged(nil, o) },
		UpdateFunc: func(o, n any) {
			if !sameVersion(o, n) {
				g.boundChanged(o, n)
			}
		},
		DeleteFunc: func(o any) { g.boundChanged(nil, o) },
	}
	if _, err := quotas.AddEventHandler(h); err != nil {
		return err
	}
	_, err := limitRanges.AddEventHandler(h)
	return err
}

// boundChanged handles an event of a super ResourceQuota or LimitRange (oldObj is nil for an
// add or a delete).
func (g *Gate) boundChanged(oldObj, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	c, o, ok := g.p.SyncedOwner(m)
	if !ok {
		return
	}
	if oldObj == nil || !boundStatusOnly(oldObj, obj) {
		g.p.Down(resources.Request{Tenant: c.Name, Kind: resources.KindNamespace, Name: o.Namespace})
	}
	if rq, ok := obj.(*corev1.ResourceQuota); ok && QuotaReady(rq) {
		if old, ok := oldObj.(*corev1.ResourceQuota); !ok || !QuotaReady(old) {
			g.EnqueueWaitingIn(c, o.Namespace, rq.Namespace)
		}
	}
}

// boundStatusOnly reports whether an update of a bound changed nothing but its status (a
// quota's usage changes with every object created or deleted in its namespace).
func boundStatusOnly(oldObj, newObj any) bool {
	o, ok1 := oldObj.(*corev1.ResourceQuota)
	n, ok2 := newObj.(*corev1.ResourceQuota)
	if !ok1 || !ok2 {
		return false
	}
	return o.UID == n.UID && equality.Semantic.DeepEqual(o.Spec, n.Spec) &&
		equality.Semantic.DeepEqual(o.Labels, n.Labels) && equality.Semantic.DeepEqual(o.Annotations, n.Annotations) &&
		equality.Semantic.DeepEqual(o.DeletionTimestamp, n.DeletionTimestamp)
}

// EnqueueWaitingIn enqueues downward, at high priority, every tenant object of tenant namespace
// ns (super namespace superNS) of the namespaced kinds that has no super copy yet.
//
// It looks the super copies up in the super caches, so it runs once they have synced
// (Pipelines.AfterReadyOnce: one run per namespace for all the calls before). Before, on a resume, the
// super ResourceQuotas' initial adds came while the other super caches were still taking in
// the checkpoint's objects: every object of a tenant that had synced already looked unsynced
// and was enqueued, so whole tenants were reconciled after a restart or an upgrade.
func (g *Gate) EnqueueWaitingIn(c *tenant.Cluster, ns, superNS string) {
	g.p.AfterReadyOnce(wakeKey{c: c, kind: "*", namespace: ns}, func() { g.enqueueWaitingInNow(c, ns, superNS) })
}

// wakeKey identifies the wakes deferred until the super caches have synced: those of tenant
// Cluster c for objects of kind ("*": every namespaced kind) in tenant namespace namespace.
type wakeKey struct {
	c         *tenant.Cluster
	kind      resources.Kind
	namespace string
}

func (g *Gate) enqueueWaitingInNow(c *tenant.Cluster, ns, superNS string) {
	for _, kind := range g.p.DownwardKinds() {
		inf, ok := g.p.TenantInformer(c, kind)
		if kind == resources.KindNamespace || !ok {
			continue
		}
		objs, err := inf.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
		if err != nil {
			continue // no namespace index: a cluster-scoped kind
		}
		for _, obj := range objs {
			m, ok := obj.(metav1.Object)
			if !ok || !m.GetDeletionTimestamp().IsZero() {
				continue
			}
			if _, synced := g.p.SuperObject(kind, superNS, m.GetName()); synced {
				continue
			}
			g.p.Down(resources.Request{Tenant: c.Name, Kind: kind, Namespace: ns, Name: m.GetName()})
		}
	}
}

// sameVersion reports whether two versions of an object have the same UID and resourceVersion.
func sameVersion(oldObj, newObj any) bool {
	o, ok1 := oldObj.(metav1.Object)
	n, ok2 := newObj.(metav1.Object)
	return ok1 && ok2 && o.GetUID() == n.GetUID() && o.GetResourceVersion() == n.GetResourceVersion()
}
