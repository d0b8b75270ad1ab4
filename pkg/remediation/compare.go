package remediation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/admit"
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
	// verdicts, for a kind with stable verdicts (resources.StableChecker), remembers the pairs
	// found InSync by this or an earlier scan; nil for other kinds.
	verdicts map[key]inSyncVerdict
	// scan numbers this scan, to tell the verdicts it used from those left behind.
	scan uint64
}

// inSyncVerdict is a remembered InSync verdict: the state of the pair it was given for.
type inSyncVerdict struct {
	fp fingerprint
	// policy is the Generation of the tenant's policy (a hash of its rules: the tenant
	// controller installs a new policy object on every Tenant reconcile, equal rules or not).
	policy string
	scan   uint64 // the last scan that found or used it
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
// version (admit.NamespaceRefused).
func (in *kindInput) namespaceRefused(ns string) bool {
	if in.refusedMemo == nil {
		in.refusedMemo = map[string]bool{}
	}
	r, ok := in.refusedMemo[ns]
	if !ok {
		r = in.c.Informers != nil && admit.NamespaceRefused(in.c, ns)
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
// tenant's policy at their current version (admit.IsRefused), and the objects of a
// refused tenant namespace (admit.NamespaceRefused), are skipped. A pair whose InSync
// verdict in.verdicts remembers, unchanged since, is not checked again; in.verdicts is left
// holding exactly the pairs found InSync by this scan. It returns the findings, the number of
// objects compared and how many of them had a remembered verdict.
func compareKind(in kindInput) (found []finding, checked, remembered int) {
	var pol string
	if in.verdicts != nil {
		pol = in.c.Policy().Generation
	}
	for _, obj := range in.tenant.List() {
		t, ok := obj.(metav1.Object)
		if !ok {
			continue
		}
		checked++
		if admit.IsRefused(in.c, in.kind, t) {
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
		k := key{t.GetNamespace(), t.GetName()}
		fp := fingerprint{tenantRV: t.GetResourceVersion()}
		if s != nil {
			fp.superRV, fp.superUID = s.GetResourceVersion(), string(s.GetUID())
			if v, ok := in.verdicts[k]; ok && v.fp == fp && v.policy == pol {
				v.scan = in.scan
				in.verdicts[k] = v
				remembered++
				continue
			}
		}
		m := in.check.Check(in.env, in.c, t, s)
		if m == resources.InSync {
			if s != nil && in.verdicts != nil {
				in.verdicts[k] = inSyncVerdict{fp: fp, policy: pol, scan: in.scan}
			}
			continue
		}
		found = append(found, finding{key: k, reason: m, fp: fp})
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
	for k, v := range in.verdicts {
		if v.scan != in.scan {
			delete(in.verdicts, k) // gone, changed or out of sync since
		}
	}
	return found, checked, remembered
}
