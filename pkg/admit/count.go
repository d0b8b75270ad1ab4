package admit

import (
	"context"
	"errors"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Wiring of limits.maxObjects (objectLimits, counts.go) into the pipelines. What it bounds, per tenant
// and kind: the objects enqueued and reconciled, the super objects created, and the queue
// items and ack-map entries in checkpoints. What it does not: the tenant informers' caches
// (and the checkpointed copies of them) hold an entry for every object the tenant creates,
// because an informer cannot leave objects out without breaking its own bookkeeping of
// updates and deletes. The bytes of those entries are bounded for every synced kind
// (limits.maxObjectBytes, limits.maxCachedBytes: objects beyond are cached as metadata-only
// stubs, held.go and tenant.HeldBytes); the number of entries takes a quota in the
// tenant control plane itself.

// capped reports whether tenant objects of kind count against limits.maxObjects: the kinds a
// tenant creates. The syncer writes the tenant's PersistentVolumes, StorageClasses,
// PriorityClasses, RuntimeClasses and Events itself (upward), so those are not counted.
func capped(kind resources.Kind) bool {
	switch kind {
	case resources.KindPersistentVolume, resources.KindStorageClass, resources.KindPriorityClass, resources.KindRuntimeClass, resources.KindEvent:
		return false
	}
	return true
}

// maxObjects returns tenant c's limits.maxObjects (-1: no cap).
func maxObjects(c *tenant.Cluster) int {
	if l := c.Policy().Limits(); l.MaxObjects != nil {
		return int(*l.MaxObjects)
	}
	return -1
}

// Admit decides whether tenant object m of kind is synced (objectLimits.admit). The first
// time it is refused it is reported (Deny, rule objectCount: a PolicyDenied Event and
// a count, once per object); later it is only kept refused for periodic remediation
// (KeepRefused). force admits it whatever the count (it has a super copy).
// A newly refused Pod is enqueued once, for process to set its PodScheduled=False condition
// (SkipRefused): an event handler makes no API calls.
func (g *Gate) Admit(c *tenant.Cluster, kind resources.Kind, m metav1.Object, force bool) bool {
	if !capped(kind) {
		return true
	}
	ok, newly := g.counts.admit(c, kind, source.Key(m), maxObjects(c), force)
	switch {
	case ok:
		return true
	case newly:
		Deny(c, kind, m, countDenial(c, kind, source.Key(m)))
		if kind == resources.KindPod {
			g.p.Down(resources.Request{Tenant: c.Name, Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName()})
		}
	default:
		KeepRefused(c, kind, m, policy.RuleObjectCount)
	}
	return false
}

// countDenial is the objectCount denial of tenant object key of kind.
func countDenial(c *tenant.Cluster, kind resources.Kind, key string) *policy.Denial {
	return ObjectCountDenial(c.Policy().Limits(), string(kind), fmt.Sprintf("%s %s", kind, key))
}

// CountRefused reports whether tenant object namespace/name of kind is refused by
// limits.maxObjects.
func (g *Gate) CountRefused(c *tenant.Cluster, kind resources.Kind, namespace, name string) bool {
	if !capped(kind) {
		return false
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	return g.counts.isRefused(c, kind, key)
}

// Release forgets deleted tenant object key of kind and syncs the refused objects
// promoted into its slot.
func (g *Gate) Release(c *tenant.Cluster, kind resources.Kind, key string) {
	if !capped(kind) {
		return
	}
	for _, k := range g.counts.release(c, kind, key, maxObjects(c)) {
		g.promoted(c, kind, k)
	}
}

// promoted enqueues a formerly refused tenant object that is now admitted (a slot freed up or
// the cap was raised), forgetting its refusal; for a Namespace also the objects in it, which
// were not synced while it was refused (ErrNamespaceRefused).
func (g *Gate) promoted(c *tenant.Cluster, kind resources.Kind, key string) {
	ns, name := source.SplitKey(key)
	Admitted(c, kind, ns, name)
	g.p.Down(resources.Request{Tenant: c.Name, Kind: kind, Namespace: ns, Name: name})
	if kind == resources.KindNamespace {
		g.EnqueueWaitingIn(c, name, resources.SuperNamespace(c, name))
	}
}

// AdmitInitial runs admission over the initial list of tenant c's objects of kind (every
// cached object, also those a resumed source will not enqueue): first, whatever the count,
// the objects that already have a super copy (so a restart or a lowered cap never leaves a
// synced object unmaintained), then the others, oldest first (so the same objects win after
// every restart).
func (g *Gate) AdmitInitial(c *tenant.Cluster, kind resources.Kind, objs []any) {
	if !capped(kind) {
		return
	}
	var rest []metav1.Object
	for _, obj := range objs {
		m, ok := obj.(metav1.Object)
		if !ok {
			continue
		}
		if g.hasSuperCopy(c, kind, m) {
			g.Admit(c, kind, m, true)
			continue
		}
		rest = append(rest, m)
	}
	sort.Slice(rest, func(i, j int) bool {
		ti, tj := rest[i].GetCreationTimestamp(), rest[j].GetCreationTimestamp()
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return source.Key(rest[i]) < source.Key(rest[j])
	})
	for _, m := range rest {
		g.Admit(c, kind, m, false)
	}
}

// hasSuperCopy reports whether tenant object m of kind has a super copy owned by c in the
// super cache.
func (g *Gate) hasSuperCopy(c *tenant.Cluster, kind resources.Kind, m metav1.Object) bool {
	var so metav1.Object
	var ok bool
	if kind == resources.KindNamespace {
		so, ok = g.p.SuperObject(kind, "", resources.SuperNamespace(c, m.GetName()))
	} else {
		so, ok = g.p.SuperObject(kind, resources.SuperNamespace(c, m.GetNamespace()), m.GetName())
	}
	return ok && conversion.OwnedByTenant(so, c.UID)
}

// SkipRefused is the workers' check (pkg/syncer: process): a downward request of a tenant object refused by
// limits.maxObjects is dropped (skip; not retried: it is enqueued again when promoted), keeping
// it marked refused at its current version for remediation; a refused Pod gets condition
// PodScheduled=False (PolicyDenied) if it has not yet (err, to retry, when that write fails).
// r is the kind's Resource.
func (g *Gate) SkipRefused(ctx context.Context, c *tenant.Cluster, r resources.Resource, req resources.Request) (skip bool, err error) {
	if !g.CountRefused(c, req.Kind, req.Namespace, req.Name) {
		return false, nil
	}
	key := req.Name
	if req.Namespace != "" {
		key = req.Namespace + "/" + req.Name
	}
	obj, exists, gerr := r.TenantInformer(c).GetIndexer().GetByKey(key)
	if gerr != nil || !exists {
		return true, nil
	}
	if m, ok := obj.(metav1.Object); ok {
		KeepRefused(c, req.Kind, m, policy.RuleObjectCount)
	}
	if p, ok := podcache.From(obj); ok && p.DeletionTimestamp.IsZero() && !tenant.IsHeldOut(obj) {
		// (A stub has no status to compare the condition with: its patch would make a new
		// version, and so another request, each time.)
		return true, g.markPod(ctx, c, p, countDenial(c, req.Kind, key))
	}
	return true, nil
}

// IgnoreNamespaceRefused maps ErrNamespaceRefused to nil: an object of a refused
// tenant namespace is not retried; the namespace's promotion enqueues it.
func IgnoreNamespaceRefused(err error) error {
	if errors.Is(err, ErrNamespaceRefused) {
		return nil
	}
	return err
}
