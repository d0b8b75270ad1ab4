package admit

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// EnqueueNamespaceColliders is called when super namespace superNS of tenant c, which held
// tenant namespace holder (with tenant UID holderUID, "" when unknown), is deleted. When the
// holder is gone from the tenant cache, terminating or recreated, the name is free: the other
// tenant namespaces of c that map to superNS (refused with rule namespaceCollision while it was
// held) are enqueued downward with every tenant object in them, whose refusals were not
// retried. When the holder still exists it takes the name back (its own request is enqueued by
// the deletion) and nothing else is enqueued, so a super namespace deleted by hand does not
// change hands. Cost: one SuperNamespace per tenant namespace of c, on super namespace
// deletions only.
func (g *Gate) EnqueueNamespaceColliders(c *tenant.Cluster, superNS, holder, holderUID string) {
	nsl := c.Informers.Core().V1().Namespaces().Lister()
	if h, err := nsl.Get(holder); err == nil && h.DeletionTimestamp.IsZero() && (holderUID == "" || string(h.UID) == holderUID) {
		return
	}
	all, err := nsl.List(labels.Everything())
	if err != nil {
		return
	}
	for _, n := range all {
		if n.Name == holder || !n.DeletionTimestamp.IsZero() || resources.SuperNamespace(c, n.Name) != superNS {
			continue
		}
		g.p.Down(resources.Request{Tenant: c.Name, Kind: resources.KindNamespace, Name: n.Name})
		for _, kind := range g.p.DownwardKinds() {
			inf, ok := g.p.TenantInformer(c, kind)
			if kind == resources.KindNamespace || !ok {
				continue
			}
			for _, m := range objectsIn(inf.GetIndexer(), n.Name) {
				g.p.Down(resources.Request{Tenant: c.Name, Kind: kind, Namespace: n.Name, Name: m.GetName()})
			}
		}
	}
}

// objectsIn returns the objects of an informer's store in namespace ns (by its namespace
// index, or by a scan when it has none).
func objectsIn(idx cache.Indexer, ns string) []metav1.Object {
	objs, err := idx.ByIndex(cache.NamespaceIndex, ns)
	if err != nil {
		objs = idx.List()
	}
	var out []metav1.Object
	for _, o := range objs {
		if m, ok := o.(metav1.Object); ok && m.GetNamespace() == ns {
			out = append(out, m)
		}
	}
	return out
}

// SuperNamespaceGone calls EnqueueNamespaceColliders for a deleted super Namespace obj owned by
// tenant c.
func (g *Gate) SuperNamespaceGone(c *tenant.Cluster, obj metav1.Object) {
	if _, holder, ok := conversion.HeldNamespace(obj); ok {
		o, _ := conversion.OwnerOf(obj)
		g.EnqueueNamespaceColliders(c, obj.GetName(), holder, o.UID)
	}
}
