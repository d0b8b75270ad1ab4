package pod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func ephemeralPod(meta metav1.ObjectMeta, spec corev1.PersistentVolumeClaimSpec) *corev1.Pod {
	p := tenantPod()
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{
		Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{ObjectMeta: meta, Spec: spec}},
	}})
	return p
}

func template(t *testing.T, p *corev1.Pod) *corev1.PersistentVolumeClaimTemplate {
	t.Helper()
	for _, v := range p.Spec.Volumes {
		if v.Name == "scratch" {
			return v.Ephemeral.VolumeClaimTemplate
		}
	}
	t.Fatal("no ephemeral volume scratch")
	return nil
}

// The super cluster's ephemeral-volume controller makes the super claim from the template:
// its class is the one the PV controller reads (annotation first), and a static template
// binds only PVs labelled for the tenant.
func TestEphemeralTemplateClass(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "tenant-uid"}
	std := "standard"
	for name, tc := range map[string]struct {
		ann       map[string]string
		field     *string
		wantClass string
		confined  bool
	}{
		"annotation \"\" only":            {ann: map[string]string{corev1.BetaStorageClassAnnotation: ""}, wantClass: "", confined: true},
		"annotation \"\" over field class": {ann: map[string]string{corev1.BetaStorageClassAnnotation: ""}, field: &std, wantClass: "", confined: true},
		"field class":                      {field: &std, wantClass: std},
	} {
		t.Run(name, func(t *testing.T) {
			got := template(t, superPodSpec(c, ephemeralPod(metav1.ObjectMeta{Annotations: tc.ann}, corev1.PersistentVolumeClaimSpec{StorageClassName: tc.field})))
			if got.Spec.StorageClassName == nil || *got.Spec.StorageClassName != tc.wantClass {
				t.Errorf("storageClassName %v, want %q", got.Spec.StorageClassName, tc.wantClass)
			}
			if v, ok := got.Annotations[corev1.BetaStorageClassAnnotation]; ok {
				t.Errorf("template keeps the beta class annotation %q", v)
			}
			confined := got.Spec.Selector != nil && got.Spec.Selector.MatchLabels[conversion.LabelTenantUID] == "tenant-uid"
			if confined != tc.confined {
				t.Errorf("confined = %v, want %v (selector %v)", confined, tc.confined, got.Spec.Selector)
			}
		})
	}
}

// Template metadata becomes the super claim's metadata: the syncer's ownership stamps (another
// tenant's UID, managed-by) and binding annotations never get there.
func TestEphemeralTemplateMetadata(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "tenant-uid"}
	meta := metav1.ObjectMeta{
		Labels: map[string]string{
			"app": "web", conversion.LabelManagedBy: conversion.ManagedByValue, conversion.LabelTenantUID: "other-tenant-uid",
			conversion.Domain + "/anything": "x",
		},
		Annotations: map[string]string{
			"note": "y", conversion.AnnotationTenant: "other", conversion.AnnotationUID: "forged",
			conversion.Domain + "/synced-labels": "app", "pv.kubernetes.io/bind-completed": "yes",
			"volume.kubernetes.io/storage-provisioner": "evil.example.com", "volume.kubernetes.io/selected-node": "n1",
		},
	}
	std := "standard"
	got := template(t, superPodSpec(c, ephemeralPod(meta, corev1.PersistentVolumeClaimSpec{StorageClassName: &std})))
	if len(got.Labels) != 1 || got.Labels["app"] != "web" {
		t.Errorf("template labels %v, want only app=web", got.Labels)
	}
	if len(got.Annotations) != 1 || got.Annotations["note"] != "y" {
		t.Errorf("template annotations %v, want only note=y", got.Annotations)
	}
}

// superPodSpec is the super Pod the downward reconcile creates for p (its spec conversion).
func superPodSpec(c *tenant.Cluster, p *corev1.Pod) *corev1.Pod {
	return Desired(c, p, "t1-abcdef-shop", nil)
}
