package pod

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/storageclass"
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
		"annotation \"\" only":             {ann: map[string]string{corev1.BetaStorageClassAnnotation: ""}, wantClass: "", confined: true},
		"annotation \"\" over field class": {ann: map[string]string{corev1.BetaStorageClassAnnotation: ""}, field: &std, wantClass: "", confined: true},
		"field class":                      {field: &std, wantClass: std},
		"no class: the super default":      {wantClass: std},
		"class without a super class":      {field: ptrTo("manual"), wantClass: "manual", confined: true},
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

// superPodSpec is the super Pod the downward reconcile creates for p: Desired, then the
// ephemeral templates converted with the super cluster's StorageClasses (here "standard", a
// provisioning default class).
func superPodSpec(c *tenant.Cluster, p *corev1.Pod) *corev1.Pod {
	env := &resources.Env{SuperVolumes: informers.NewSharedInformerFactory(fake.NewClientset(), 0)}
	_ = env.SuperVolumes.Storage().V1().StorageClasses().Informer().GetIndexer().Add(&storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: "standard", Annotations: map[string]string{storageclass.AnnDefault: "true"}},
		Provisioner: "csi.example.com",
	})
	want := Desired(c, p, "t1-abcdef-shop", nil)
	confineEphemeralClaims(env, c, p.Namespace, &want.Spec)
	return want
}

func ptrTo[T any](v T) *T { return &v }

// Template labels and annotations go through the tenant's metadata allowlist as a claim's
// do: keys a provisioner, a backup tool or a load-balancer controller acts on are left out of
// the super Pod's template (so the super claim never gets them) and reported for the Pod.
func TestEphemeralTemplateMetadataAllowlist(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "tenant-uid"}
	meta := metav1.ObjectMeta{
		Labels: map[string]string{"app": "web", "velero.io/exclude-from-backup": "true"},
		Annotations: map[string]string{"note": "y", "example.com/provisioner-secret-namespace": "kube-system",
			"metallb.universe.tf/address-pool": "provider", conversion.AnnotationTenant: "other"},
	}
	std := "standard"
	p := ephemeralPod(meta, corev1.PersistentVolumeClaimSpec{StorageClassName: &std})
	env := &resources.Env{SuperVolumes: informers.NewSharedInformerFactory(fake.NewClientset(), 0)}
	want := Desired(c, p, "t1-abcdef-shop", nil)
	dropped := confineEphemeralClaims(env, c, p.Namespace, &want.Spec)
	got := template(t, want)
	if len(got.Labels) != 1 || got.Labels["app"] != "web" {
		t.Errorf("template labels %v, want only app=web", got.Labels)
	}
	if len(got.Annotations) != 1 || got.Annotations["note"] != "y" {
		t.Errorf("template annotations %v, want only note=y", got.Annotations)
	}
	v := "scratch"
	wantDropped := []string{
		"ephemeral volume " + v + ": annotation example.com/provisioner-secret-namespace",
		"ephemeral volume " + v + ": annotation metallb.universe.tf/address-pool",
		"ephemeral volume " + v + ": label velero.io/exclude-from-backup",
	}
	if !slices.Equal(dropped, wantDropped) {
		t.Errorf("dropped = %q, want %q (the syncer's own keys are dropped silently)", dropped, wantDropped)
	}
}
