package storageclass

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
)

func class(name, provisioner string, created time.Time, ann map[string]string) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created), Annotations: ann},
		Provisioner: provisioner}
}

func TestDefaultClass(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	def := map[string]string{AnnDefault: "true"}
	for name, tc := range map[string]struct {
		classes []*storagev1.StorageClass
		want    string
	}{
		"none":                  {classes: []*storagev1.StorageClass{class("a", "p", t0, nil)}},
		"annotated false":       {classes: []*storagev1.StorageClass{class("a", "p", t0, map[string]string{AnnDefault: "false"})}},
		"one":                   {classes: []*storagev1.StorageClass{class("a", "p", t0, nil), class("b", "p", t0, def)}, want: "b"},
		"beta annotation":       {classes: []*storagev1.StorageClass{class("b", "p", t0, map[string]string{AnnDefaultBeta: "true"})}, want: "b"},
		"newest wins":           {classes: []*storagev1.StorageClass{class("old", "p", t0, def), class("new", "p", t0.Add(time.Hour), def)}, want: "new"},
		"same time: first name": {classes: []*storagev1.StorageClass{class("zz", "p", t0, def), class("aa", "p", t0, def)}, want: "aa"},
	} {
		if got := DefaultClass(tc.classes); got != tc.want {
			t.Errorf("%s: DefaultClass = %q, want %q", name, got, tc.want)
		}
	}
}

func TestSuperClasses(t *testing.T) {
	t0 := time.Now()
	cs := fake.NewClientset(
		class("standard", "csi.example.com", t0, map[string]string{AnnDefault: "true"}),
		class("local", conversion.NoProvisioner, t0, nil),
		func() *storagev1.StorageClass {
			c := class("public", "csi.example.com", t0, nil)
			c.Labels = map[string]string{conversion.LabelPublic: conversion.PublicValue, "other": "x"}
			return c
		}(),
	)
	env := &resources.Env{SuperVolumes: informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(TrimSuper))}
	env.SuperVolumes.Storage().V1().StorageClasses().Informer()
	stop := make(chan struct{})
	defer close(stop)
	env.SuperVolumes.Start(stop)
	env.SuperVolumes.WaitForCacheSync(stop)
	got := SuperClasses(env)
	if got.Default != "standard" || !got.Provisions("standard") || got.Provisions("local") || got.Provisions("missing") {
		t.Errorf("SuperClasses: default %q, provisions standard %v local %v missing %v",
			got.Default, got.Provisions("standard"), got.Provisions("local"), got.Provisions("missing"))
	}
	if ex, pub := got.Lookup("local"); !ex || pub {
		t.Errorf("Lookup(local) = %v, %v; want exists, not public", ex, pub)
	}
	if ex, pub := got.Lookup("public"); !ex || !pub {
		t.Errorf("Lookup(public) = %v, %v; want exists and public (the label survives TrimSuper)", ex, pub)
	}
	if ex, _ := got.Lookup("missing"); ex {
		t.Errorf("Lookup(missing) says it exists")
	}
	claim := func(class *string) *corev1.PersistentVolumeClaimSpec {
		return &corev1.PersistentVolumeClaimSpec{StorageClassName: class}
	}
	str := func(s string) *string { return &s }
	builtin := policy.Default().Storage()
	for name, tc := range map[string]struct {
		ann    map[string]string
		class  *string
		p      *tenancyv1alpha1.StoragePolicy
		denied bool
	}{
		"no class":              {},
		"empty class":           {class: str("")},
		"public class":          {class: str("public")},
		"hidden class":          {class: str("local"), denied: true},
		"hidden class, allowed": {class: str("local"), p: &tenancyv1alpha1.StoragePolicy{AllowedStorageClassNames: []string{"local"}}},
		"hidden by annotation":  {ann: map[string]string{conversion.AnnotationBetaStorageClass: "local"}, class: str("public"), denied: true},
		"missing class":         {class: str("missing")},
	} {
		p := tc.p
		if p == nil {
			p = builtin
		}
		d := ClaimClassDenial(env, p, "storageClassName", tc.ann, claim(tc.class))
		if (d != nil) != tc.denied || d != nil && d.Rule != policy.RuleStorageClass {
			t.Errorf("%s: ClaimClassDenial = %v, want denied %v", name, d, tc.denied)
		}
	}
	pod := &corev1.PodSpec{Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: *claim(str("local"))}}}}}}
	if d := PodClaimClassDenial(env, builtin, pod); d == nil || !strings.Contains(d.Message, "ephemeral volume data") {
		t.Errorf("PodClaimClassDenial = %v, want a denial naming volume data", d)
	}
	if zero := SuperClasses(&resources.Env{}); zero.Default != "" || zero.Provisions != nil || zero.Lookup != nil {
		t.Errorf("SuperClasses without a cache = %+v, want the zero value", zero)
	}
}
