package chaos

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
)

// Obj is what the invariants read of one object.
type Obj struct {
	Kind, Namespace, Name, UID string
	Labels, Annotations        map[string]string
	// Content is the part the syncer copies (data, spec) rendered as a string.
	Content  string
	Deleting bool
	// Created is the object's creationTimestamp (whole seconds).
	Created time.Time
	// Pods only: the phase, the Ready condition's status ("" when absent) and spec.nodeName.
	Phase, Ready, NodeName string
}

// Key is "Kind/namespace/name".
func (o Obj) Key() string { return o.Kind + "/" + o.Namespace + "/" + o.Name }

func (o Obj) meta() metav1.Object {
	return &metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: o.Labels, Annotations: o.Annotations}
}

// TenantSnap is one tenant's load objects (those labelled LabelLoad) and its Namespaces whose
// names start with NamespacePrefix.
type TenantSnap struct {
	Name, UID string
	Objects   []Obj
}

// Snapshot is what the invariants check: the tenants' objects and the super cluster's objects
// managed by the syncer (Namespaces included).
type Snapshot struct {
	Tenants []TenantSnap
	Super   []Obj
	// Refused are the refusals a fault held all through the snapshot (Refusals.Ongoing before
	// and after it, StableRefusals): RefusalKey(tenant UID, kind) → since when the tenant's
	// policy refuses every load object of that kind.
	Refused map[string]time.Time
	// At is when the listing of the super objects began: a super object listed was present at
	// At or later (refused-copy-removed). Zero: not known, that check is skipped.
	At time.Time
}

// RefusalGrace is how long after a refusal begins the syncer may still create a super copy it
// refuses (a reconcile that read the old policy, the policy's watch event on its way).
const RefusalGrace = 5 * time.Second

// RefusedCopyBound is how long after a refusal begins a super copy the refusal covers may
// still be present (refused-copy-removed): a copy synced under the earlier policy is deleted
// when its object is reconciled again, and the policy change enqueues every object of the
// tenant (syncer.PolicyChanged; on a resume, the policy mark in the checkpoint). The bound
// covers the worst the previous fault can leave (faults run one after the other, at least
// 1 s apart): a replica SIGKILLed just before is started again, may wait for its shard Lease
// (LeaseDuration, 6 s) and syncs its caches (a few seconds) before it reconciles; the rest
// is the tenant's objects reconciled again (well under a second for the load's size).
const RefusedCopyBound = 15 * time.Second

// RefusalKey is the key of Snapshot.Refused and Refusals.
func RefusalKey(tenantUID, kind string) string { return tenantUID + "/" + kind }

// Refusals records the refusals the faults hold (PolicyFlip): which tenant's policy refuses
// which kind of load object, since when. A fault begins one after the refusing policy is
// written and ends it before the policy is restored. The zero value is ready; a nil
// *Refusals holds none.
type Refusals struct {
	mu sync.Mutex
	m  map[string]time.Time
}

// Begin records that tenantUID's policy refuses kind since at.
func (r *Refusals) Begin(tenantUID, kind string, at time.Time) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]time.Time{}
	}
	r.m[RefusalKey(tenantUID, kind)] = at
}

// End records that the refusal of kind by tenantUID's policy is over.
func (r *Refusals) End(tenantUID, kind string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, RefusalKey(tenantUID, kind))
}

// Ongoing returns a copy of the refusals held now.
func (r *Refusals) Ongoing() map[string]time.Time {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]time.Time, len(r.m))
	for k, v := range r.m {
		out[k] = v
	}
	return out
}

// StableRefusals returns the refusals held both before and after a snapshot was listed (same
// begin time): only those held all through it say what the listed objects may not be.
func StableRefusals(before, after map[string]time.Time) map[string]time.Time {
	out := map[string]time.Time{}
	for k, v := range before {
		if w, ok := after[k]; ok && w.Equal(v) {
			out[k] = v
		}
	}
	return out
}

// Violation is one broken invariant.
type Violation struct {
	Invariant string `json:"invariant"`
	Message   string `json:"message"`
	// Key names the tenant object ("<tenant>/Kind/ns/name") or, for a super object no tenant
	// object explains, the super object ("super/Kind/ns/name").
	Key string `json:"key"`
	// Objects are the objects involved, as "cluster Kind ns/name uid".
	Objects []string `json:"objects,omitempty"`
	// Evidence is, for a violation left when the settle bound passed, what the replicas knew
	// of the object then (Harness.withEvidence): their status rows and log lines naming it.
	Evidence []string `json:"evidence,omitempty"`
}

func (v Violation) String() string {
	s := v.Invariant + ": " + v.Message
	if len(v.Objects) > 0 {
		s += " [" + strings.Join(v.Objects, "; ") + "]"
	}
	for _, e := range v.Evidence {
		s += "\n    " + e
	}
	return s
}

// The invariants' names.
const (
	InvNoDuplicate   = "no-duplicate-super-copy"
	InvRightTenantNS = "super-object-in-its-tenants-namespace"
	InvOneCopy       = "one-super-copy-with-the-tenant-content"
	InvPodStatus     = "super-pod-status-in-tenant-pod"
	InvNoOrphan      = "no-orphan-super-object"
	InvNotStuck      = "nothing-stuck-terminating"
	InvNoCrash       = "no-replica-crash"
	InvNoHotLoop     = "retries-flat-after-settle"
	InvNoRefused     = "nothing-refused-created"
	InvRefusedGone   = "refused-copy-removed"
)

func describe(cluster string, o Obj) string {
	return fmt.Sprintf("%s %s %s/%s uid %s", cluster, o.Kind, o.Namespace, o.Name, o.UID)
}

// Continuous checks the invariants that hold at every moment, whatever the faults: no two super
// objects are copies of one tenant object (same owner UID), every super object lies in the
// super Namespace of its own tenant (the namespace the ownership annotations name, and that
// Namespace carries the same tenant UID), and no super copy of a kind its tenant's policy
// refuses (s.Refused) was created more than RefusalGrace after the refusal began, and none
// (created before it or not) is still present, not terminating, when the snapshot was listed
// (s.At) more than RefusedCopyBound after the refusal began.
func Continuous(s Snapshot) []Violation {
	var out []Violation
	byOwner := map[string][]Obj{}
	superNS := map[string]Obj{}
	for _, o := range s.Super {
		if o.Kind == "Namespace" {
			superNS[o.Name] = o
		}
	}
	for _, o := range s.Super {
		own, ok := conversion.OwnerOf(o.meta())
		if !ok || own.UID == "" {
			continue
		}
		k := o.Kind + "/" + own.TenantUID + "/" + own.UID
		byOwner[k] = append(byOwner[k], o)
		if o.Kind == "Namespace" {
			continue
		}
		tkey := own.Tenant + "/" + o.Kind + "/" + own.Namespace + "/" + own.Name
		if since, ok := s.Refused[RefusalKey(own.TenantUID, o.Kind)]; ok && o.Created.After(since.Add(RefusalGrace)) {
			out = append(out, Violation{Invariant: InvNoRefused, Key: tkey, Objects: []string{describe("super", o)},
				Message: fmt.Sprintf("super %s %s/%s, the copy of tenant %s %s, was created at %s, %s after tenant %s's policy began refusing %ss",
					o.Kind, o.Namespace, o.Name, own.Tenant, own.Namespace+"/"+own.Name, o.Created.UTC().Format(time.RFC3339), o.Created.Sub(since).Round(time.Second), own.Tenant, o.Kind)})
		}
		if since, ok := s.Refused[RefusalKey(own.TenantUID, o.Kind)]; ok && !s.At.IsZero() && !o.Deleting && s.At.Sub(since) > RefusedCopyBound {
			out = append(out, Violation{Invariant: InvRefusedGone, Key: tkey, Objects: []string{describe("super", o)},
				Message: fmt.Sprintf("super %s %s/%s, the copy of tenant %s %s (created %s), is still present %s after tenant %s's policy began refusing %ss (bound %s)",
					o.Kind, o.Namespace, o.Name, own.Tenant, own.Namespace+"/"+own.Name, o.Created.UTC().Format(time.RFC3339), s.At.Sub(since).Round(time.Second), own.Tenant, o.Kind, RefusedCopyBound)})
		}
		if want := conversion.SuperNamespace(own.Tenant, own.TenantUID, own.Namespace); o.Namespace != want {
			out = append(out, Violation{Invariant: InvRightTenantNS, Key: tkey, Objects: []string{describe("super", o)},
				Message: fmt.Sprintf("super %s %s/%s, the copy of tenant %s %s, is in namespace %s, want %s", o.Kind, o.Namespace, o.Name, own.Tenant, own.Namespace+"/"+own.Name, o.Namespace, want)})
		}
		if ns, ok := superNS[o.Namespace]; ok && ns.Labels[conversion.LabelTenantUID] != own.TenantUID {
			out = append(out, Violation{Invariant: InvRightTenantNS, Key: tkey, Objects: []string{describe("super", o), describe("super", ns)},
				Message: fmt.Sprintf("super %s %s/%s of tenant %s (uid %s) is in a namespace of tenant uid %s", o.Kind, o.Namespace, o.Name, own.Tenant, own.TenantUID, ns.Labels[conversion.LabelTenantUID])})
		}
	}
	for _, k := range sortedKeys(byOwner) {
		objs := byOwner[k]
		if len(objs) < 2 {
			continue
		}
		own, _ := conversion.OwnerOf(objs[0].meta())
		v := Violation{Invariant: InvNoDuplicate, Key: own.Tenant + "/" + objs[0].Kind + "/" + own.Namespace + "/" + own.Name,
			Message: fmt.Sprintf("%d super copies of tenant %s %s %s/%s (uid %s)", len(objs), own.Tenant, objs[0].Kind, own.Namespace, own.Name, own.UID)}
		for _, o := range objs {
			v.Objects = append(v.Objects, describe("super", o))
		}
		out = append(out, v)
	}
	return out
}

// Settled checks the invariants that hold once the faults and the load have stopped and the
// syncer has caught up: every load object and load Namespace of each tenant has exactly one
// super copy, at the place its name maps to, with the tenant's labels, note annotation and
// content; every tenant Pod is Running, Ready and bound, as its super Pod is; no super copy of
// a tenant object that no longer exists (or has another UID), nor of a Tenant removed since
// (another Tenant UID under the tenant's name); nothing terminating. An object of
// a kind its tenant's policy refuses (s.Refused) needs no super copy; once the refusal is over
// it needs one again. It includes Continuous.
func Settled(s Snapshot) []Violation {
	out := Continuous(s)
	superByTenant := map[string][]Obj{}
	for _, o := range s.Super {
		own, ok := conversion.OwnerOf(o.meta())
		if !ok {
			continue
		}
		superByTenant[own.TenantUID] = append(superByTenant[own.TenantUID], o)
	}
	for _, tn := range s.Tenants {
		out = append(out, settledTenant(tn, superByTenant[tn.UID], s.Refused)...)
	}
	out = append(out, removedTenants(s)...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func settledTenant(tn TenantSnap, super []Obj, refused map[string]time.Time) []Violation {
	var out []Violation
	add := func(inv, key, msg string, objs ...string) {
		out = append(out, Violation{Invariant: inv, Key: key, Message: tn.Name + ": " + msg, Objects: objs})
	}
	tenant := map[string]Obj{} // "Kind/ns/name" (Namespaces: "Namespace//name")
	for _, o := range tn.Objects {
		tenant[o.Key()] = o
		key := tn.Name + "/" + o.Key()
		if o.Deleting {
			add(InvNotStuck, key, fmt.Sprintf("tenant %s %s still terminating", o.Kind, o.Namespace+"/"+o.Name), describe(tn.Name, o))
			continue
		}
		if o.Kind == "Pod" && !terminal(o) && (o.Phase != "Running" || o.Ready != "True" || o.NodeName == "") {
			add(InvPodStatus, key, fmt.Sprintf("tenant Pod %s/%s: phase %q, Ready %q, node %q", o.Namespace, o.Name, o.Phase, o.Ready, o.NodeName), describe(tn.Name, o))
		}
	}
	seen := map[string]Obj{}
	for _, s := range super {
		own, _ := conversion.OwnerOf(s.meta())
		if s.Kind == "Namespace" && !strings.HasPrefix(own.Namespace, NamespacePrefix) {
			continue
		}
		if s.Kind != "Namespace" && (!strings.HasPrefix(own.Namespace, NamespacePrefix) || s.Labels[LabelLoad] != ValueLoad) {
			continue
		}
		tk := s.Kind + "/" + own.Namespace + "/" + own.Name
		if s.Kind == "Namespace" {
			tk = "Namespace//" + own.Namespace
		}
		key := tn.Name + "/" + tk
		seen[tk] = s
		t, ok := tenant[tk]
		switch {
		case !ok:
			add(InvNoOrphan, "super/"+s.Key(), fmt.Sprintf("super %s %s/%s left for tenant %s that does not exist (deleting: %t)", s.Kind, s.Namespace, s.Name, tk, s.Deleting), describe("super", s))
			continue
		case string(t.UID) != own.UID:
			add(InvNoOrphan, key, fmt.Sprintf("super %s %s/%s is the copy of uid %s, the tenant's %s has uid %s", s.Kind, s.Namespace, s.Name, own.UID, tk, t.UID), describe("super", s), describe(tn.Name, t))
			continue
		case s.Deleting && !t.Deleting:
			add(InvNotStuck, key, fmt.Sprintf("super %s %s/%s terminating while tenant %s exists", s.Kind, s.Namespace, s.Name, tk), describe("super", s), describe(tn.Name, t))
			continue
		}
		if _, ok := refused[RefusalKey(tn.UID, s.Kind)]; s.Kind == "Namespace" || ok {
			continue // a refused object's copy is going (Continuous checks none is created)
		}
		var diffs []string
		for lk, lv := range t.Labels {
			if s.Labels[lk] != lv {
				diffs = append(diffs, fmt.Sprintf("label %s=%q, tenant has %q", lk, s.Labels[lk], lv))
			}
		}
		if s.Annotations[AnnotationNote] != t.Annotations[AnnotationNote] {
			diffs = append(diffs, fmt.Sprintf("annotation %s=%q, tenant has %q", AnnotationNote, s.Annotations[AnnotationNote], t.Annotations[AnnotationNote]))
		}
		if s.Content != t.Content {
			diffs = append(diffs, fmt.Sprintf("content %s, tenant has %s", s.Content, t.Content))
		}
		if len(diffs) > 0 {
			add(InvOneCopy, key, fmt.Sprintf("super %s %s/%s differs from tenant %s: %s", s.Kind, s.Namespace, s.Name, tk, strings.Join(diffs, "; ")), describe("super", s), describe(tn.Name, t))
		}
		if s.Kind == "Pod" && (s.Phase != t.Phase || s.Ready != t.Ready) {
			add(InvPodStatus, key, fmt.Sprintf("super Pod %s/%s phase %q Ready %q, tenant Pod %s phase %q Ready %q", s.Namespace, s.Name, s.Phase, s.Ready, tk, t.Phase, t.Ready), describe("super", s), describe(tn.Name, t))
		}
	}
	for _, tk := range sortedKeys(tenant) {
		if _, ok := refused[RefusalKey(tn.UID, tenant[tk].Kind)]; ok {
			continue // refused: no super copy expected while the refusal lasts
		}
		if t := tenant[tk]; !t.Deleting && !terminal(t) {
			if _, ok := seen[tk]; !ok {
				add(InvOneCopy, tn.Name+"/"+tk, fmt.Sprintf("tenant %s (uid %s) has no super copy", tk, t.UID), describe(tn.Name, t))
			}
		}
	}
	return out
}

// removedTenants returns a violation for each super object (Namespaces included) whose owner is
// a tenant of s by name but with another Tenant UID: a copy of a Tenant removed (and registered
// again, TenantRemoveReadd) that the removal left behind.
func removedTenants(s Snapshot) []Violation {
	uids := map[string]string{}
	for _, tn := range s.Tenants {
		uids[tn.Name] = tn.UID
	}
	var out []Violation
	for _, o := range s.Super {
		own, ok := conversion.OwnerOf(o.meta())
		if uid, known := uids[own.Tenant]; ok && known && own.TenantUID != uid {
			out = append(out, Violation{Invariant: InvNoOrphan, Key: "super/" + o.Key(), Objects: []string{describe("super", o)},
				Message: fmt.Sprintf("super %s %s/%s of Tenant %s uid %s left after that Tenant was removed (its uid now %s; deleting: %t)",
					o.Kind, o.Namespace, o.Name, own.Tenant, own.TenantUID, uid, o.Deleting)})
		}
	}
	return out
}

// terminal reports whether o is a Pod in phase Failed or Succeeded: it may have no super copy
// (a Pod whose super copy was deleted behind the syncer's back is marked Failed with reason
// SuperPodLost and is not run again, as a kubelet reports a Pod it lost) and is not expected
// to be Running.
func terminal(o Obj) bool { return o.Kind == "Pod" && (o.Phase == "Failed" || o.Phase == "Succeeded") }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
