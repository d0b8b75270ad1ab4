package priorityclass

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func class(name string, value int32, lbl map[string]string) *schedulingv1.PriorityClass {
	never := corev1.PreemptNever
	return &schedulingv1.PriorityClass{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbl, UID: "s-uid", ResourceVersion: "9"},
		Value:      value, GlobalDefault: true, Description: "d", PreemptionPolicy: &never,
	}
}

func TestDesired(t *testing.T) {
	s := class("gold", 1000, map[string]string{conversion.LabelPublic: "true", "tier": "gold"})
	got := Desired(s)
	never := corev1.PreemptNever
	want := &schedulingv1.PriorityClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gold", Labels: map[string]string{
			conversion.LabelManagedBy: conversion.ManagedByValue, conversion.LabelPublic: "true"}},
		Value: 1000, Description: "d", PreemptionPolicy: &never, GlobalDefault: false,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if !IsCopy(got) {
		t.Error("IsCopy(Desired) = false")
	}
}

func TestEqual(t *testing.T) {
	want := Desired(class("gold", 1000, map[string]string{conversion.LabelPublic: "true"}))
	restest.RunEqualCases(t, want, (*schedulingv1.PriorityClass).DeepCopy, Equal, map[string]restest.EqualCase[*schedulingv1.PriorityClass]{
		"same":           {Mutate: func(*schedulingv1.PriorityClass) {}, Equal: true},
		"value":          {Mutate: func(p *schedulingv1.PriorityClass) { p.Value = 1 }, Equal: false},
		"description":    {Mutate: func(p *schedulingv1.PriorityClass) { p.Description = "x" }, Equal: false},
		"global default": {Mutate: func(p *schedulingv1.PriorityClass) { p.GlobalDefault = true }, Equal: false},
		"preemption": {Mutate: func(p *schedulingv1.PriorityClass) {
			l := corev1.PreemptLowerPriority
			p.PreemptionPolicy = &l
		}, Equal: false},
		"label removed": {Mutate: func(p *schedulingv1.PriorityClass) { p.Labels = nil }, Equal: false},
	})
}

func TestIsPublicAndMapSuper(t *testing.T) {
	cs := fake.NewClientset(
		class("gold", 1000, map[string]string{conversion.LabelPublic: "true"}),
		class("hidden", 5, map[string]string{conversion.LabelPublic: "false"}),
	)
	env := &resources.Env{SuperPublic: informers.NewSharedInformerFactory(cs, 0)}
	inf := Resource.SuperInformer(env)
	stop := make(chan struct{})
	defer close(stop)
	env.SuperPublic.Start(stop)
	env.SuperPublic.WaitForCacheSync(stop)
	if len(inf.GetStore().List()) != 2 {
		t.Fatalf("cache holds %d classes", len(inf.GetStore().List()))
	}
	for name, want := range map[string]bool{"gold": true, "hidden": false, "absent": false} {
		if got := IsPublic(env, name); got != want {
			t.Errorf("IsPublic(%s) = %v, want %v", name, got, want)
		}
	}
	clusters := []*tenant.Cluster{{Name: "a"}, {Name: "b"}}
	got := Resource.MapSuper(env, &metav1.ObjectMeta{Name: "gold"}, clusters)
	want := []resources.Request{{Tenant: "a", Kind: resources.KindPriorityClass, Name: "gold"}, {Tenant: "b", Kind: resources.KindPriorityClass, Name: "gold"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("MapSuper (-want +got):\n%s", d)
	}
}

// TestUpward follows a tenant's copy of a public class: created, updated in place for a new
// description, recreated for a new value (immutable), deleted when the class stops being
// public; the tenant's own class of a public name is never touched.
func TestUpward(t *testing.T) {
	h := restest.New(t, "blue")
	h.Env.SuperPublic = informers.NewSharedInformerFactory(h.SuperCS, 0)
	superInf, tenantInf := Resource.SuperInformer(h.Env), Resource.TenantInformer(h.C)
	public := map[string]string{conversion.LabelPublic: conversion.PublicValue}
	copyOf := func(name string) *schedulingv1.PriorityClass {
		t.Helper()
		pc, err := h.TenantCS.SchedulingV1().PriorityClasses().Get(h.Ctx(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return pc
	}
	upward := func(name string) {
		t.Helper()
		if err := Resource.Upward(h.Ctx(), h.Env, h.C, "", name); err != nil {
			t.Fatal(err)
		}
		// The informer would deliver the write; the test puts it into the cache.
		if pc := copyOf(name); pc != nil {
			if err := tenantInf.GetIndexer().Update(pc); err != nil {
				t.Fatal(err)
			}
		} else if obj, ok, _ := tenantInf.GetIndexer().GetByKey(name); ok {
			_ = tenantInf.GetIndexer().Delete(obj)
		}
	}

	h.Super(superInf, class("gold", 1000, public))
	upward("gold")
	pc := copyOf("gold")
	if pc == nil || pc.Value != 1000 || pc.GlobalDefault || !IsCopy(pc) {
		t.Fatalf("copy of a public class = %+v", pc)
	}
	uid := pc.UID

	described := class("gold", 1000, public)
	described.Description = "new"
	h.Super(superInf, described)
	upward("gold")
	if pc := copyOf("gold"); pc == nil || pc.Description != "new" || pc.UID != uid {
		t.Fatalf("copy after a description change = %+v (want updated in place)", pc)
	}

	h.Super(superInf, class("gold", 2000, public))
	upward("gold")
	if pc := copyOf("gold"); pc != nil {
		t.Fatalf("a copy with a stale value was kept: %+v", pc)
	}
	upward("gold")
	if pc := copyOf("gold"); pc == nil || pc.Value != 2000 {
		t.Fatalf("copy after a value change = %+v", pc)
	}

	h.Super(superInf, class("gold", 2000, map[string]string{conversion.LabelPublic: "false"}))
	upward("gold")
	if pc := copyOf("gold"); pc != nil {
		t.Fatalf("the copy outlived the class's public label: %+v", pc)
	}

	h.Super(superInf, class("own", 7, public))
	h.Tenant(tenantInf, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "own", UID: "t-own"}, Value: 3})
	upward("own")
	if pc := copyOf("own"); pc == nil || pc.Value != 3 || IsCopy(pc) {
		t.Fatalf("the tenant's own class was changed: %+v", pc)
	}
}

// TestUpwardLeavesACopyTheTenantsAdmissionAltered: a tenant's mutating webhook that changes
// every write of a copy does not keep the syncer rewriting it. The syncer writes once, reports
// it with one Warning Event, and writes again only when the super class changes.
func TestUpwardLeavesACopyTheTenantsAdmissionAltered(t *testing.T) {
	h := restest.New(t, "blue")
	h.Env.SuperPublic = informers.NewSharedInformerFactory(h.SuperCS, 0)
	superInf, tenantInf := Resource.SuperInformer(h.Env), Resource.TenantInformer(h.C)
	public := map[string]string{conversion.LabelPublic: conversion.PublicValue}
	writes := 0
	mutate := func(a k8stesting.Action) (bool, runtime.Object, error) {
		writes++
		if o, ok := a.(interface{ GetObject() runtime.Object }); ok {
			o.GetObject().(*schedulingv1.PriorityClass).Description = "changed by the tenant's webhook"
		}
		return false, nil, nil // the tracker stores the mutated object
	}
	h.TenantCS.PrependReactor("create", "priorityclasses", mutate)
	h.TenantCS.PrependReactor("update", "priorityclasses", mutate)
	upward := func() {
		t.Helper()
		if err := Resource.Upward(h.Ctx(), h.Env, h.C, "", "gold"); err != nil {
			t.Fatal(err)
		}
		pc, err := h.TenantCS.SchedulingV1().PriorityClasses().Get(h.Ctx(), "gold", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tenantInf.GetIndexer().Update(pc); err != nil {
			t.Fatal(err)
		}
	}

	h.Super(superInf, class("gold", 1000, public))
	for range 3 {
		upward()
	}
	if writes != 1 {
		t.Errorf("%d writes of a copy the tenant's admission alters, want 1 (the syncer fights the webhook)", writes)
	}
	if ev := h.Events(); len(ev) != 1 || !strings.Contains(ev[0], reconcile.ReasonCopyAltered) {
		t.Errorf("Events %q, want one %s", ev, reconcile.ReasonCopyAltered)
	}

	changed := class("gold", 1000, public)
	changed.ResourceVersion = "10"
	changed.Description = "new"
	h.Super(superInf, changed)
	for range 3 {
		upward()
	}
	if writes != 2 {
		t.Errorf("%d writes after the super class changed, want 2 (one more)", writes)
	}
}
