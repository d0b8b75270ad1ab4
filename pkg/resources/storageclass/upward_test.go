package storageclass

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
)

func superClass() *storagev1.StorageClass {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	del := corev1.PersistentVolumeReclaimDelete
	yes := true
	return &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "standard",
			Labels:      map[string]string{conversion.LabelPublic: "true", "admin": "x"},
			Annotations: map[string]string{AnnDefault: "true", "admin-note": "secret"},
		},
		Provisioner: "pd.csi.storage.gke.io", Parameters: map[string]string{"type": "pd-balanced"},
		ReclaimPolicy: &del, VolumeBindingMode: &wffc, AllowVolumeExpansion: &yes, MountOptions: []string{"noatime"},
	}
}

func TestDesired(t *testing.T) {
	s := superClass()
	want := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "standard",
			Labels:      map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue},
			Annotations: map[string]string{AnnDefault: "true"},
		},
		Provisioner: s.Provisioner, Parameters: s.Parameters, ReclaimPolicy: s.ReclaimPolicy,
		VolumeBindingMode: s.VolumeBindingMode, AllowVolumeExpansion: s.AllowVolumeExpansion, MountOptions: s.MountOptions,
	}
	if diff := cmp.Diff(want, Desired(s)); diff != "" {
		t.Errorf("Desired (-want +got):\n%s", diff)
	}
}

func TestEqual(t *testing.T) {
	want := Desired(superClass())
	retain := corev1.PersistentVolumeReclaimRetain
	restest.RunEqualCases(t, want, (*storagev1.StorageClass).DeepCopy, Equal, map[string]restest.EqualCase[*storagev1.StorageClass]{
		"same":                       {Mutate: func(*storagev1.StorageClass) {}, Equal: true},
		"extra tenant label":         {Mutate: func(h *storagev1.StorageClass) { h.Labels["x"] = "y" }, Equal: true},
		"default annotation removed": {Mutate: func(h *storagev1.StorageClass) { delete(h.Annotations, AnnDefault) }},
		"other provisioner":          {Mutate: func(h *storagev1.StorageClass) { h.Provisioner = "other" }},
		"other parameters":           {Mutate: func(h *storagev1.StorageClass) { h.Parameters = map[string]string{"type": "pd-ssd"} }},
		"other reclaim policy":       {Mutate: func(h *storagev1.StorageClass) { h.ReclaimPolicy = &retain }},
		"not the syncer's label":     {Mutate: func(h *storagev1.StorageClass) { delete(h.Labels, conversion.LabelManagedBy) }},
	})
	// Defaults the tenant apiserver fills in count as equal to unset fields.
	bare := Desired(&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Provisioner: "p"})
	defaulted := bare.DeepCopy()
	del := corev1.PersistentVolumeReclaimDelete
	imm := storagev1.VolumeBindingImmediate
	defaulted.ReclaimPolicy, defaulted.VolumeBindingMode = &del, &imm
	if !Equal(bare, defaulted) {
		t.Error("Equal is false for apiserver defaults")
	}
}
