package chaos

import (
	"maps"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
)

const tUID = "22222222-2222-2222-2222-222222222222"

func tenantObj(kind, ns, name, uid, gen string) Obj {
	return Obj{Kind: kind, Namespace: ns, Name: name, UID: uid, Labels: map[string]string{LabelLoad: ValueLoad, LabelGen: gen},
		Annotations: map[string]string{AnnotationNote: "generation " + gen}, Content: "data " + gen}
}

// superCopy returns the super copy of t as the syncer writes it, in super namespace sns.
func superCopy(t Obj, sns string) Obj {
	s := t
	s.Namespace = sns
	s.UID = "s-" + t.UID
	s.Labels = map[string]string{LabelLoad: ValueLoad, LabelGen: t.Labels[LabelGen]}
	s.Annotations = map[string]string{AnnotationNote: t.Annotations[AnnotationNote]}
	om := metaOf(&s)
	conversion.Stamp(om, conversion.Owner{Tenant: "tenant-1", TenantUID: tUID, Namespace: t.Namespace, Name: t.Name, UID: t.UID})
	s.Labels, s.Annotations = om.Labels, om.Annotations
	return s
}

func superNSFor(tenantNS, uid, owner string) Obj {
	ns := Obj{Kind: "Namespace", Name: conversion.SuperNamespace("tenant-1", owner, tenantNS), UID: "sns-" + uid}
	om := metaOf(&ns)
	conversion.Stamp(om, conversion.Owner{Tenant: "tenant-1", TenantUID: owner, Namespace: tenantNS, Name: tenantNS, UID: uid})
	ns.Labels, ns.Annotations = om.Labels, om.Annotations
	return ns
}

// healthy is a settled snapshot: one Namespace, a ConfigMap and a Running Pod, each with its copy.
func healthy() Snapshot {
	sns := conversion.SuperNamespace("tenant-1", tUID, "chaos-a")
	tns := Obj{Kind: "Namespace", Name: "chaos-a", UID: "ns-uid"}
	cm := tenantObj("ConfigMap", "chaos-a", "cm-1", "cm-uid", "3")
	pod := tenantObj("Pod", "chaos-a", "pod-1", "pod-uid", "4")
	pod.Phase, pod.Ready, pod.NodeName = "Running", "True", "vnode-1"
	return Snapshot{
		Tenants: []TenantSnap{{Name: "tenant-1", UID: tUID, Objects: []Obj{tns, cm, pod}}},
		Super:   []Obj{superNSFor("chaos-a", "ns-uid", tUID), superCopy(cm, sns), superCopy(pod, sns)},
	}
}

func TestSettledHealthy(t *testing.T) {
	if v := Settled(healthy()); len(v) != 0 {
		t.Fatalf("a settled snapshot has violations: %v", v)
	}
	// A tenant Pod marked Failed (SuperPodLost) after its super copy was deleted needs no copy.
	s := healthy()
	s.Tenants[0].Objects[2].Phase, s.Tenants[0].Objects[2].Ready = "Failed", "False"
	s.Super = s.Super[:2]
	if v := Settled(s); len(v) != 0 {
		t.Fatalf("a Failed tenant Pod without a super copy counts as a violation: %v", v)
	}
}

// TestInvariantsCatch breaks a settled snapshot in each way an invariant names and checks the
// invariant reports it.
func TestInvariantsCatch(t *testing.T) {
	cases := map[string]struct {
		breakIt func(s *Snapshot)
		wantInv string
		wantMsg string
	}{
		"duplicate copy": {func(s *Snapshot) {
			d := s.Super[1]
			d.Namespace = "elsewhere"
			s.Super = append(s.Super, d)
		}, InvNoDuplicate, "2 super copies"},
		"copy in another tenant's namespace": {func(s *Snapshot) {
			s.Super[0].Labels = map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue, conversion.LabelTenantUID: "other"}
		}, InvRightTenantNS, "in a namespace of tenant uid other"},
		"copy of a removed Tenant": {func(s *Snapshot) {
			s.Super = append(s.Super, removedTenantCopies(s)...)
		}, InvNoOrphan, "left after that Tenant was removed"},
		"copy at the wrong place": {func(s *Snapshot) { s.Super[1].Namespace = "x" }, InvRightTenantNS, "want"},
		"missing copy":            {func(s *Snapshot) { s.Super = s.Super[:2] }, InvOneCopy, "has no super copy"},
		"stale content":           {func(s *Snapshot) { s.Super[1].Content = "data 2" }, InvOneCopy, "content"},
		"stale label":             {func(s *Snapshot) { s.Super[1].Labels[LabelGen] = "tampered-1" }, InvOneCopy, "label chaos-gen"},
		"orphan":                  {func(s *Snapshot) { s.Tenants[0].Objects = s.Tenants[0].Objects[:2] }, InvNoOrphan, "left for tenant"},
		"tenant Pod pending":      {func(s *Snapshot) { s.Tenants[0].Objects[2].Phase = "Pending" }, InvPodStatus, "phase \"Pending\""},
		"status not up":           {func(s *Snapshot) { s.Super[2].Ready = "False" }, InvPodStatus, "Ready \"False\""},
		"stuck terminating":       {func(s *Snapshot) { s.Tenants[0].Objects[1].Deleting = true }, InvNotStuck, "still terminating"},
		"super namespace missing": {func(s *Snapshot) { s.Super = s.Super[1:] }, InvOneCopy, "Namespace//chaos-a"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := healthy()
			tc.breakIt(&s)
			var got []string
			for _, v := range Settled(s) {
				got = append(got, v.String())
				if v.Invariant == tc.wantInv && strings.Contains(v.Message, tc.wantMsg) {
					return
				}
			}
			t.Fatalf("no %s violation containing %q; got %v", tc.wantInv, tc.wantMsg, got)
		})
	}
}

func metaOf(o *Obj) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Labels: o.Labels, Annotations: o.Annotations}
}

// TestRefusedObjects: while its tenant's policy refuses ConfigMaps, a tenant ConfigMap needs
// no super copy (its stale copy is not compared either) and a copy created more than
// RefusalGrace after the refusal began is a violation; once the refusal is over the copy is
// required again.
func TestRefusedObjects(t *testing.T) {
	since := time.Date(2026, 12, 6, 22, 0, 0, 0, time.UTC)
	refused := map[string]time.Time{RefusalKey(tUID, "ConfigMap"): since}

	gone := healthy()
	gone.Super = []Obj{gone.Super[0], gone.Super[2]} // the ConfigMap's copy deleted
	gone.Refused = refused
	if v := Settled(gone); len(v) != 0 {
		t.Errorf("a refused ConfigMap without a copy: %v", v)
	}
	gone.Refused = nil
	if v := Settled(gone); len(v) != 1 || v[0].Invariant != InvOneCopy {
		t.Errorf("after the refusal, a ConfigMap without a copy: %v, want one %s", v, InvOneCopy)
	}

	for _, tc := range []struct {
		created time.Time
		want    int
	}{
		{since.Add(-time.Minute), 0},                 // synced before: going
		{since.Add(RefusalGrace), 0},                 // a reconcile that read the old policy
		{since.Add(RefusalGrace + 2*time.Second), 1}, // created while refused
	} {
		s := healthy()
		s.Super[1].Created = tc.created
		s.Super[1].Content = "stale"
		s.Refused = refused
		v := Continuous(s)
		if len(v) != tc.want || (tc.want == 1 && v[0].Invariant != InvNoRefused) {
			t.Errorf("super ConfigMap created %s after the refusal: %v, want %d %s", tc.created.Sub(since), v, tc.want, InvNoRefused)
		}
		if sv := Settled(s); len(sv) != tc.want {
			t.Errorf("settled, super ConfigMap created %s after the refusal: %v, want only Continuous's", tc.created.Sub(since), sv)
		}
	}
	if got := StableRefusals(refused, map[string]time.Time{RefusalKey(tUID, "ConfigMap"): since.Add(time.Second)}); len(got) != 0 {
		t.Errorf("a refusal that ended and began again during the listing counted as held: %v", got)
	}
}

// TestRefusedCopyRemoved: a super copy synced before its tenant's policy began refusing its
// kind may stay while the syncer catches up, up to RefusedCopyBound; still present after that
// (and not terminating) it is a refused-copy-removed violation, also in Settled.
func TestRefusedCopyRemoved(t *testing.T) {
	since := time.Date(2026, 12, 6, 22, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		at       time.Time
		deleting bool
		want     int
	}{
		{"listed at an unknown time", time.Time{}, false, 0},
		{"within the bound", since.Add(RefusedCopyBound), false, 0},
		{"past the bound", since.Add(RefusedCopyBound + time.Second), false, 1},
		{"past the bound, terminating", since.Add(RefusedCopyBound + time.Second), true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := healthy()
			s.Super[1].Created = since.Add(-time.Minute) // synced before the refusal
			s.Super[1].Deleting = tc.deleting
			s.Refused = map[string]time.Time{RefusalKey(tUID, "ConfigMap"): since}
			s.At = tc.at
			for name, vs := range map[string][]Violation{"Continuous": Continuous(s), "Settled": Settled(s)} {
				var n, refusedGone int
				for _, v := range vs {
					if v.Invariant == InvRefusedGone {
						refusedGone++
						if strings.Contains(v.Message, "is still present 16s after") && strings.Contains(v.Key, "ConfigMap/chaos-a/cm-1") {
							n++
						}
					}
				}
				if n != tc.want || refusedGone != tc.want || (name == "Continuous" && len(vs) != tc.want) {
					t.Errorf("%s: %v, want %d %s", name, vs, tc.want, InvRefusedGone)
				}
			}
		})
	}
	// Another tenant's refusal, or another kind's, says nothing of this copy.
	s := healthy()
	s.Refused = map[string]time.Time{RefusalKey("other", "ConfigMap"): since, RefusalKey(tUID, "Service"): since}
	s.At = since.Add(time.Hour)
	if v := Continuous(s); len(v) != 0 {
		t.Errorf("refusals of another tenant or kind: %v", v)
	}
}

// removedTenantCopies returns s's super objects as copies of the Tenant removed before s's
// tenant-1 was registered again (another Tenant UID, another super namespace), terminating.
func removedTenantCopies(s *Snapshot) []Obj {
	const oldUID = "33333333-3333-3333-3333-333333333333"
	var out []Obj
	for _, o := range s.Super {
		c := o
		c.UID, c.Deleting = "old-"+o.UID, true
		c.Labels, c.Annotations = maps.Clone(o.Labels), maps.Clone(o.Annotations)
		own, _ := conversion.OwnerOf(o.meta())
		own.TenantUID = oldUID
		if o.Kind == "Namespace" {
			c.Name = conversion.SuperNamespace(own.Tenant, oldUID, own.Namespace)
		} else {
			c.Namespace = conversion.SuperNamespace(own.Tenant, oldUID, own.Namespace)
		}
		conversion.Stamp(metaOf(&c), own)
		out = append(out, c)
	}
	return out
}

// TestRemovedTenantWindow: while a removed Tenant's super namespaces are being deleted, the
// copies of the Tenant registered again under the same name (TenantRemoveReadd) exist beside
// them: no continuous invariant counts them as duplicates or misplaced; once settled, a copy
// of the removed Tenant left is an orphan.
func TestRemovedTenantWindow(t *testing.T) {
	s := healthy()
	old := removedTenantCopies(&s)
	s.Super = append(s.Super, old...)
	if v := Continuous(s); len(v) != 0 {
		t.Fatalf("the removal window broke the continuous invariants: %v", v)
	}
	v := Settled(s)
	if len(v) != len(old) {
		t.Fatalf("settled with %d copies of the removed Tenant left: %v, want one %s each", len(old), v, InvNoOrphan)
	}
	for _, x := range v {
		if x.Invariant != InvNoOrphan {
			t.Errorf("%s, want %s", x, InvNoOrphan)
		}
	}
}
