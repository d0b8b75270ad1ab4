package remediation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// fingerprint identifies the state of the objects behind a mismatch, so that a mismatch is
// confirmed only when nothing changed between two scans.
type fingerprint struct {
	tenantRV string // the tenant object's resourceVersion ("" for an orphan)
	superRV  string // the super object's resourceVersion ("" when missing, or for an orphan)
	superUID string // the super object's UID ("" when missing)
}

// finding is one mismatch seen by one scan.
type finding struct {
	key    key
	reason resources.Mismatch
	fp     fingerprint
}

// ownedObject is a super object with its parsed ownership record.
type ownedObject struct {
	obj   metav1.Object
	owner conversion.Owner
}

// bucketByTenant groups the super objects the syncer owns by owning tenant UID (the
// authoritative owner identity; tenant names in annotations are not trusted for this).
func bucketByTenant(objs []any) map[string][]ownedObject {
	out := map[string][]ownedObject{}
	for _, o := range objs {
		m, ok := o.(metav1.Object)
		if !ok {
			continue
		}
		if own, ok := conversion.OwnerOf(m); ok {
			out[own.TenantUID] = append(out[own.TenantUID], ownedObject{obj: m, owner: own})
		}
	}
	return out
}

// kindInput is what compareKind reads for one tenant and one kind.
type kindInput struct {
	env    *resources.Env
	c      *tenant.Cluster
	kind   resources.Kind
	check  resources.Checker
	tenant cache.Store   // the tenant informer's store
	super  cache.Store   // the super informer's store
	owned  []ownedObject // super objects owned by c (by tenant UID)
	nsMemo map[string]string
	// refusedMemo memoises namespaceRefused.
	refusedMemo map[string]bool
}

// superNamespace returns the (memoised) super namespace of tenant namespace ns.
func (in *kindInput) superNamespace(ns string) string {
	if s, ok := in.nsMemo[ns]; ok {
		return s
	}
	s := resources.SuperNamespace(in.c, ns)
	in.nsMemo[ns] = s
	return s
}

// namespaceRefused reports (memoised) whether tenant namespace ns is refused at its current
// version (resources.NamespaceRefused).
func (in *kindInput) namespaceRefused(ns string) bool {
	if in.refusedMemo == nil {
		in.refusedMemo = map[string]bool{}
	}
	r, ok := in.refusedMemo[ns]
	if !ok {
		r = in.c.Informers != nil && resources.NamespaceRefused(in.c, ns)
		in.refusedMemo[ns] = r
	}
	return r
}

// compareKind compares one tenant's objects of one kind with the super cache. Tenant objects
// are looked up at their mapped super name and given to the kind's Check; a super object at
// its mapped name that the tenant does not own is skipped (the reconciler refuses it and
// reports a SyncConflict). Owned super objects at their mapped name whose tenant object is not
// in the tenant cache, and that are not being deleted, are orphans. Cluster-scoped objects
// are Namespaces (the super namespace is the mapped name). Tenant objects refused by the
// tenant's policy at their current version (resources.IsRefused), and the objects of a
// refused tenant namespace (resources.NamespaceRefused), are skipped. It returns the findings and the
// number of objects compared.
func compareKind(in kindInput) ([]finding, int) {
	var found []finding
	checked := 0
	for _, obj := range in.tenant.List() {
		t, ok := obj.(metav1.Object)
		if !ok {
			continue
		}
		checked++
		if resources.IsRefused(in.c, in.kind, t) {
			continue // refused by the tenant's policy at this version: the reconciler would refuse it again
		}
		if ns := t.GetNamespace(); ns != "" && in.namespaceRefused(ns) {
			continue // in a refused namespace (namespaceCollision): nothing in it is synced
		}
		var superKey string
		if t.GetNamespace() == "" {
			superKey = in.superNamespace(t.GetName())
		} else {
			superKey = in.superNamespace(t.GetNamespace()) + "/" + t.GetName()
		}
		var s metav1.Object
		if sObj, exists, err := in.super.GetByKey(superKey); err == nil && exists {
			s, _ = sObj.(metav1.Object)
		}
		if s != nil && !conversion.OwnedByTenant(s, in.c.UID) {
			continue
		}
		m := in.check.Check(in.env, in.c, t, s)
		if m == resources.InSync {
			continue
		}
		fp := fingerprint{tenantRV: t.GetResourceVersion()}
		if s != nil {
			fp.superRV, fp.superUID = s.GetResourceVersion(), string(s.GetUID())
		}
		found = append(found, finding{key: key{t.GetNamespace(), t.GetName()}, reason: m, fp: fp})
	}
	for _, o := range in.owned {
		checked++
		if o.obj.GetDeletionTimestamp() != nil {
			continue // already going
		}
		var k key
		var tenantKey string
		if o.obj.GetNamespace() == "" {
			if o.obj.GetName() != in.superNamespace(o.owner.Namespace) {
				continue // not at its mapped name: no reconcile of this tenant would find it
			}
			k, tenantKey = key{name: o.owner.Namespace}, o.owner.Namespace
		} else {
			if o.obj.GetNamespace() != in.superNamespace(o.owner.Namespace) || o.obj.GetName() != o.owner.Name {
				continue
			}
			k, tenantKey = key{o.owner.Namespace, o.owner.Name}, o.owner.Namespace+"/"+o.owner.Name
		}
		if _, exists, err := in.tenant.GetByKey(tenantKey); err != nil || exists {
			continue // present (a different UID is a stale copy, found from the tenant side)
		}
		found = append(found, finding{key: k, reason: resources.MismatchOrphanInSuper, fp: fingerprint{superUID: string(o.obj.GetUID())}})
	}
	return found, checked
}
