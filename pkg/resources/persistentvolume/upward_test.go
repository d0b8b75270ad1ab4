package persistentvolume

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
)

func claim(volumeName string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "data", UID: "tenant-claim-uid"},
		Spec:       corev1.PersistentVolumeClaimSpec{VolumeName: volumeName},
	}
}

func TestTenantName(t *testing.T) {
	mapped := conversion.SuperVolumeName("t1", "uid", "fileserver")
	cases := map[string]struct {
		volumeName, superPV, want string
	}{
		"dynamically provisioned":             {superPV: "pvc-9", want: "pvc-9"},
		"preset name that maps to the PV":     {volumeName: "fileserver", superPV: mapped, want: "fileserver"},
		"already bound to the super PV name":  {volumeName: "pvc-9", superPV: "pvc-9", want: "pvc-9"},
		"preset name of a different super PV": {volumeName: "other", superPV: mapped, want: mapped},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := TenantName("t1", "uid", claim(tc.volumeName), tc.superPV); got != tc.want {
				t.Errorf("TenantName = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBoundTo(t *testing.T) {
	sc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "t1-abc-data", UID: "super-claim-uid"}}
	ref := func(ns, name string) *corev1.ObjectReference {
		return &corev1.ObjectReference{Namespace: ns, Name: name, UID: "super-claim-uid"}
	}
	cases := map[string]struct {
		ref   *corev1.ObjectReference
		phase corev1.PersistentVolumePhase
		want  bool
	}{
		"bound":             {ref: ref("t1-abc-data", "db"), phase: corev1.VolumeBound, want: true},
		"being bound":       {ref: ref("t1-abc-data", "db"), phase: corev1.VolumeAvailable, want: true},
		"no claimRef":       {phase: corev1.VolumeAvailable},
		"released":          {ref: ref("t1-abc-data", "db"), phase: corev1.VolumeReleased},
		"failed":            {ref: ref("t1-abc-data", "db"), phase: corev1.VolumeFailed},
		"other namespace":   {ref: ref("t2-def-data", "db"), phase: corev1.VolumeBound},
		"other claim name":  {ref: ref("t1-abc-data", "web"), phase: corev1.VolumeBound},
		"earlier claim UID": {ref: &corev1.ObjectReference{Namespace: "t1-abc-data", Name: "db", UID: "old"}, phase: corev1.VolumeBound},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pv := &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{ClaimRef: tc.ref}, Status: corev1.PersistentVolumeStatus{Phase: tc.phase}}
			if got := BoundTo(pv, sc); got != tc.want {
				t.Errorf("BoundTo = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDesired(t *testing.T) {
	fs := corev1.PersistentVolumeFilesystem
	super := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-9", Labels: map[string]string{"topology": "zone-a"}, Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": "x"}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/secret/path"}},
			ClaimRef:                      &corev1.ObjectReference{Namespace: "t1-abc-data", Name: "db", UID: "super-claim-uid"},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              "standard",
			MountOptions:                  []string{"noatime"},
			VolumeMode:                    &fs,
		},
	}
	got := Desired("pvc-9", super, claim(""))
	want := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "pvc-9",
			Labels:      map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue},
			Annotations: map[string]string{conversion.AnnotationSuperName: "pvc-9"},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: Driver, VolumeHandle: "pvc-9"}},
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: "data", Name: "db", UID: "tenant-claim-uid"},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              "standard",
			MountOptions:                  []string{"noatime"},
			VolumeMode:                    &fs,
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Desired (-want +got):\n%s", diff)
	}
	if !IsSyncerVolume(got) {
		t.Error("IsSyncerVolume(Desired(...)) = false")
	}
	if !Equal(got, got.DeepCopy()) {
		t.Error("Equal(want, copy) = false")
	}
	other := got.DeepCopy()
	other.Spec.ClaimRef.UID = "recreated"
	if Equal(got, other) {
		t.Error("Equal ignores the claim UID")
	}
	grown := got.DeepCopy()
	grown.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse("10Gi")
	if Equal(grown, got) {
		t.Error("Equal ignores capacity")
	}
}

func TestTrimSuper(t *testing.T) {
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}},
			ClaimRef:               &corev1.ObjectReference{Name: "db"},
		},
	}
	out, err := TrimSuper(pv)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.PersistentVolume)
	if got.Labels != nil || got.Annotations != nil || got.ManagedFields != nil || got.Spec.HostPath != nil || got.Spec.ClaimRef == nil || got.Name != "p" {
		t.Errorf("TrimSuper kept or lost the wrong fields: %+v", got)
	}
}
