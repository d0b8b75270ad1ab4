package persistentvolumeclaim

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// The super claim asks for the class the PV controller reads from the tenant claim
// (volume.beta.kubernetes.io/storage-class before spec.storageClassName), in
// spec.storageClassName only, and a static claim binds only PVs labelled for its tenant.
func TestDesiredEffectiveClass(t *testing.T) {
	c := &tenant.Cluster{Name: tenantName, UID: tenantUID}
	str := func(s string) *string { return &s }
	for name, tc := range map[string]struct {
		ann       map[string]string
		field     *string
		classes   conversion.SuperClasses
		wantClass string
		confined  bool
	}{
		"annotation \"\" only: static, confined": {
			ann: map[string]string{corev1.BetaStorageClassAnnotation: ""}, wantClass: "", confined: true},
		"annotation \"\" wins over the field": {
			ann: map[string]string{corev1.BetaStorageClassAnnotation: ""}, field: str("standard"), wantClass: "", confined: true},
		"annotation class wins over field \"\"": {
			ann: map[string]string{corev1.BetaStorageClassAnnotation: "standard"}, field: str(""), classes: testClasses, wantClass: "standard"},
		"field \"\": static, confined":                      {field: str(""), wantClass: "", confined: true},
		"field class: provisioned":                          {field: str("standard"), classes: testClasses, wantClass: "standard"},
		"no class, super default: the default, provisioned": {classes: testClasses, wantClass: "standard"},
		"no class, no super default: static, confined": {
			classes: conversion.SuperClasses{Provisions: testClasses.Provisions}, wantClass: "", confined: true},
	} {
		t.Run(name, func(t *testing.T) {
			o := &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "data", UID: "claim-uid", Annotations: tc.ann},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
					StorageClassName: tc.field,
				},
			}
			got := Desired(c, o, superNS, nil, "", tc.classes)
			if got.Spec.StorageClassName == nil || *got.Spec.StorageClassName != tc.wantClass {
				t.Errorf("storageClassName %v, want %q", got.Spec.StorageClassName, tc.wantClass)
			}
			if v, ok := got.Annotations[corev1.BetaStorageClassAnnotation]; ok {
				t.Errorf("super claim keeps the beta class annotation %q (the class is in spec.storageClassName only)", v)
			}
			confined := got.Spec.Selector != nil && got.Spec.Selector.MatchLabels[conversion.LabelTenantUID] == tenantUID
			if confined != tc.confined {
				t.Errorf("confined to the tenant's PVs = %v, want %v (selector %v)", confined, tc.confined, got.Spec.Selector)
			}
		})
	}
}

// A super claim made with the beta class annotation (before the class moved to the field)
// keeps it on update: removing it would change the class of a claim that is still pending.
func TestDesiredKeepsExistingBetaClass(t *testing.T) {
	c := &tenant.Cluster{Name: tenantName, UID: tenantUID}
	o := tenantClaim("")
	existing := Desired(c, o, superNS, nil, "", testClasses)
	existing.Annotations[corev1.BetaStorageClassAnnotation] = ""
	got := Desired(c, o, superNS, existing, "", testClasses)
	if v, ok := got.Annotations[corev1.BetaStorageClassAnnotation]; !ok || v != "" {
		t.Errorf("beta class annotation %q, %v; want the existing \"\" kept", v, ok)
	}
	if !Equal(got, existing) {
		t.Error("update wanted for an unchanged claim")
	}
}
