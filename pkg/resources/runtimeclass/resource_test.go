package runtimeclass

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func superClass(name, handler string) *nodev1.RuntimeClass {
	return &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: "s-" + types.UID(name), ResourceVersion: "3",
			Labels: map[string]string{"tier": "sandbox"}, Annotations: map[string]string{"a": "b"}},
		Handler:  handler,
		Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}},
		Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"sandbox": "true"},
			Tolerations: []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists}}},
	}
}

func TestDesired(t *testing.T) {
	got := Desired(superClass("gvisor", "runsc"))
	want := &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gvisor", Labels: map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue}},
		Handler:    "runsc",
		Overhead:   &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if !IsCopy(got) {
		t.Error("IsCopy(Desired) = false")
	}
}

func TestEqual(t *testing.T) {
	want := Desired(superClass("gvisor", "runsc"))
	restest.RunEqualCases(t, want, (*nodev1.RuntimeClass).DeepCopy, Equal, map[string]restest.EqualCase[*nodev1.RuntimeClass]{
		"same":          {Mutate: func(*nodev1.RuntimeClass) {}, Equal: true},
		"same quantity": {Mutate: func(r *nodev1.RuntimeClass) { r.Overhead.PodFixed[corev1.ResourceCPU] = resource.MustParse("0.25") }, Equal: true},
		"handler":       {Mutate: func(r *nodev1.RuntimeClass) { r.Handler = "runc" }, Equal: false},
		"overhead":      {Mutate: func(r *nodev1.RuntimeClass) { r.Overhead = nil }, Equal: false},
		"scheduling":    {Mutate: func(r *nodev1.RuntimeClass) { r.Scheduling = &nodev1.Scheduling{} }, Equal: false},
		"label removed": {Mutate: func(r *nodev1.RuntimeClass) { r.Labels = nil }, Equal: false},
	})
}

// TestReconcileUpward follows one tenant through the policy's allowlist: a class is copied
// only while the policy allows it, a changed overhead is updated, a changed handler recreates
// the copy, and the tenant's own class of an allowed name is never touched.
func TestReconcileUpward(t *testing.T) {
	h := restest.New(t, "blue")
	superInf := Resource.SuperInformer(h.Env)
	tenantInf := Resource.TenantInformer(h.C)
	h.Super(superInf, superClass("gvisor", "runsc"))
	h.Super(superInf, superClass("kata", "kata"))
	copyOf := func(name string) (*nodev1.RuntimeClass, bool) {
		t.Helper()
		rc, err := h.TenantCS.NodeV1().RuntimeClasses().Get(h.Ctx(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, false
		}
		if err != nil {
			t.Fatal(err)
		}
		return rc, true
	}
	reconcile := func(name string) {
		t.Helper()
		if err := Resource.Upward(h.Ctx(), h.Env, h.C, "", name); err != nil {
			t.Fatal(err)
		}
		// The informer would deliver the write; the test puts it into the cache.
		if rc, ok := copyOf(name); ok {
			if err := tenantInf.GetIndexer().Update(rc); err != nil {
				t.Fatal(err)
			}
		} else if obj, ok, _ := tenantInf.GetIndexer().GetByKey(name); ok {
			_ = tenantInf.GetIndexer().Delete(obj)
		}
	}

	// The built-in policy allows no RuntimeClass: nothing is copied.
	reconcile("gvisor")
	if _, ok := copyOf("gvisor"); ok {
		t.Fatal("a class the policy does not allow was copied")
	}

	h.SetPolicy(&tenancyv1alpha1.TenantPolicySpec{Pods: &tenancyv1alpha1.PodPolicy{AllowedRuntimeClassNames: []string{"gvisor", "own"}}})
	reconcile("gvisor")
	reconcile("kata")
	rc, ok := copyOf("gvisor")
	if !ok || rc.Handler != "runsc" || rc.Scheduling != nil || !IsCopy(rc) {
		t.Fatalf("copy of an allowed class = %+v, %v", rc, ok)
	}
	if _, ok := copyOf("kata"); ok {
		t.Fatal("kata is not allowed but was copied")
	}

	// The super class's overhead changes: the copy follows.
	changed := superClass("gvisor", "runsc")
	changed.Overhead.PodFixed[corev1.ResourceMemory] = resource.MustParse("64Mi")
	h.Super(superInf, changed)
	reconcile("gvisor")
	if rc, _ := copyOf("gvisor"); rc.Overhead.PodFixed.Memory().String() != "64Mi" {
		t.Fatalf("overhead not updated: %v", rc.Overhead)
	}

	// Recreated with another handler (immutable): the copy is deleted, then created again.
	h.Super(superInf, superClass("gvisor", "runsc-v2"))
	reconcile("gvisor")
	if _, ok := copyOf("gvisor"); ok {
		t.Fatal("a copy with a stale handler was kept")
	}
	reconcile("gvisor")
	if rc, ok := copyOf("gvisor"); !ok || rc.Handler != "runsc-v2" {
		t.Fatalf("copy after handler change = %+v, %v", rc, ok)
	}

	// The policy stops allowing it: the copy goes.
	h.SetPolicy(&tenancyv1alpha1.TenantPolicySpec{Pods: &tenancyv1alpha1.PodPolicy{AllowedRuntimeClassNames: []string{"own"}}})
	reconcile("gvisor")
	if _, ok := copyOf("gvisor"); ok {
		t.Fatal("the copy outlived the policy's allowance")
	}

	// The tenant's own class of an allowed name that the super cluster also has.
	h.Super(superInf, superClass("own", "runc"))
	own := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "own", UID: "t-own"}, Handler: "tenant-handler"}
	h.Tenant(tenantInf, own)
	reconcile("own")
	if rc, _ := copyOf("own"); rc.Handler != "tenant-handler" || IsCopy(rc) {
		t.Fatalf("the tenant's own class was changed: %+v", rc)
	}
}

func TestMapSuper(t *testing.T) {
	got := Resource.MapSuper(nil, &metav1.ObjectMeta{Name: "gvisor"}, []*tenant.Cluster{{Name: "a"}, {Name: "b"}})
	want := []resources.Request{{Tenant: "a", Kind: resources.KindRuntimeClass, Name: "gvisor"}, {Tenant: "b", Kind: resources.KindRuntimeClass, Name: "gvisor"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
