package persistentvolumeclaim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

const (
	tenantName = "t1"
	tenantUID  = "tenant-uid"
	superNS    = "t1-abcdef-data"
)

func tenantClaim(volumeName string) *corev1.PersistentVolumeClaim {
	class := "standard"
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: "db", Namespace: "data", UID: "claim-uid",
			Labels: map[string]string{"app": "db"},
			Annotations: map[string]string{
				"note": "x", "volume.beta.kubernetes.io/storage-class": "standard",
				AnnBindCompleted: "yes", AnnBoundByController: "yes",
				"volume.kubernetes.io/storage-provisioner": "tenant.example.com", "volume.beta.kubernetes.io/storage-provisioner": "tenant.example.com",
				"volume.kubernetes.io/selected-node": "vnode-1",
			},
			Finalizers: []string{"kubernetes.io/pvc-protection"},
		},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			StorageClassName: &class,
			VolumeName:       volumeName,
		},
	}
}

func syncerPV(name, superName string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{
		Name:        name,
		Labels:      map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue},
		Annotations: map[string]string{conversion.AnnotationSuperName: superName},
	}}
}

func superPV(name, claimNS, claimName string) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if claimName != "" {
		pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: claimNS, Name: claimName}
	}
	return pv
}

// testClasses is a super cluster whose default class "standard" provisions.
var testClasses = conversion.SuperClasses{Default: "standard", Provisions: func(c string) bool { return c == "standard" }}

func TestSuperVolume(t *testing.T) {
	mapped := func(v string) string { return conversion.SuperVolumeName(tenantName, tenantUID, v) }
	cases := map[string]struct {
		volumeName        string
		tenantPV, superPV *corev1.PersistentVolume
		want              string
	}{
		"no preset volume":           {want: ""},
		"names no tenant PV":         {volumeName: "fileserver", want: mapped("fileserver")},
		"names a PV of another name": {volumeName: "pvc-123", want: mapped("pvc-123")},
		"syncer PV bound to this claim's super copy": {
			volumeName: "pvc-123", tenantPV: syncerPV("pvc-123", "pvc-123"), superPV: superPV("pvc-123", superNS, "db"),
			want: "pvc-123",
		},
		"syncer PV whose super PV is bound elsewhere": {
			volumeName: "pvc-123", tenantPV: syncerPV("pvc-123", "pvc-123"), superPV: superPV("pvc-123", "t2-999999-data", "db"),
			want: mapped("pvc-123"),
		},
		"syncer PV whose super PV is unbound": {
			volumeName: "pvc-123", tenantPV: syncerPV("pvc-123", "pvc-123"), superPV: superPV("pvc-123", "", ""),
			want: mapped("pvc-123"),
		},
		"syncer PV whose super PV is not cached": {
			volumeName: "pvc-123", tenantPV: syncerPV("pvc-123", "pvc-123"),
			want: mapped("pvc-123"),
		},
		"tenant PV forged to look like the syncer's, naming another super PV": {
			volumeName: "mine", tenantPV: syncerPV("mine", "other-tenants-pv"), superPV: superPV("other-tenants-pv", "t2-999999-data", "db"),
			want: mapped("mine"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := SuperVolume(tenantName, tenantUID, superNS, tenantClaim(tc.volumeName), tc.tenantPV, tc.superPV)
			if got != tc.want {
				t.Errorf("SuperVolume = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDesired(t *testing.T) {
	c := &tenant.Cluster{Name: tenantName, UID: tenantUID}
	superClass := "standard"
	existing := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: superNS, Annotations: map[string]string{
			AnnBindCompleted: "yes", "volume.kubernetes.io/storage-provisioner": "super.example.com", "super-webhook": "keep",
		}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			StorageClassName: &superClass,
			VolumeName:       "pvc-super",
		},
	}
	grown := tenantClaim("pvc-super")
	grown.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
	cases := map[string]struct {
		tenant     *corev1.PersistentVolumeClaim
		existing   *corev1.PersistentVolumeClaim
		volumeName string
		wantSpec   corev1.PersistentVolumeClaimSpec
		wantAnn    map[string]string
	}{
		"create copies the spec with the mapped volume": {
			tenant: tenantClaim("fileserver"), volumeName: "t1-abcdef-fileserver",
			wantSpec: func() corev1.PersistentVolumeClaimSpec {
				s := tenantClaim("").Spec
				s.VolumeName = "t1-abcdef-fileserver"
				return s
			}(),
			wantAnn: map[string]string{"note": "x"},
		},
		"update keeps the super spec, takes the tenant's requests": {
			tenant: grown, existing: existing,
			wantSpec: func() corev1.PersistentVolumeClaimSpec {
				s := *existing.Spec.DeepCopy()
				s.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
				return s
			}(),
			wantAnn: map[string]string{
				"note":           "x",
				AnnBindCompleted: "yes", "volume.kubernetes.io/storage-provisioner": "super.example.com", "super-webhook": "keep",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Desired(c, tc.tenant, superNS, tc.existing, tc.volumeName, testClasses)
			if diff := cmp.Diff(tc.wantSpec, got.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			ann := map[string]string{}
			for k, v := range got.Annotations {
				if !conversion.IsOwnKey(k) && k != conversion.AnnotationTenantUID &&
					k != resources.AnnotationSyncedLabels && k != resources.AnnotationSyncedAnnotations {
					ann[k] = v
				}
			}
			if diff := cmp.Diff(tc.wantAnn, ann); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if o, ok := conversion.OwnerOf(got); !ok || o.UID != "claim-uid" || o.Namespace != "data" || o.TenantUID != tenantUID {
				t.Errorf("ownership %+v %v", o, ok)
			}
			if got.Namespace != superNS || len(got.Finalizers) > 0 || len(got.OwnerReferences) > 0 {
				t.Errorf("namespace %q finalizers %v ownerRefs %v", got.Namespace, got.Finalizers, got.OwnerReferences)
			}
			if tc.existing != nil && !Equal(got, Desired(c, tc.tenant, superNS, got, "", testClasses)) {
				t.Error("Equal is false for a super claim that matches")
			}
		})
	}
	// An unchanged claim is equal to its super copy; a changed request is not.
	want := Desired(c, tenantClaim("pvc-super"), superNS, existing, "", testClasses)
	if !Equal(want, want.DeepCopy()) {
		t.Error("Equal(want, copy of want) = false")
	}
	if Equal(Desired(c, grown, superNS, existing, "", testClasses), want) {
		t.Error("Equal ignores a changed storage request")
	}
}

func TestIsBindingAnnotation(t *testing.T) {
	cases := map[string]bool{
		AnnBindCompleted: true, AnnBoundByController: true,
		"volume.kubernetes.io/storage-provisioner": true, "volume.beta.kubernetes.io/storage-provisioner": true,
		"volume.kubernetes.io/selected-node":      true,
		"volume.beta.kubernetes.io/storage-class": false, "note": false, "example.com/pv.kubernetes.io": false,
	}
	for k, want := range cases {
		if got := IsBindingAnnotation(k); got != want {
			t.Errorf("IsBindingAnnotation(%q) = %v, want %v", k, got, want)
		}
	}
}

func TestDesiredStatus(t *testing.T) {
	bound := corev1.PersistentVolumeClaimStatus{
		Phase:       corev1.ClaimBound,
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		Conditions:  []corev1.PersistentVolumeClaimCondition{{Type: corev1.PersistentVolumeClaimResizing, Status: corev1.ConditionTrue}},
	}
	pendingWithConditions := corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending, Conditions: bound.Conditions}
	cases := map[string]struct {
		tenantVolume string
		tenantPV     bool
		super        corev1.PersistentVolumeClaimStatus
		want         corev1.PersistentVolumeClaimStatus
	}{
		"pending":                       {super: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}, want: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}},
		"bound, tenant claim bound":     {tenantVolume: "pvc-1", tenantPV: true, super: bound, want: bound},
		"bound, tenant claim unbound":   {tenantPV: true, super: bound, want: pendingWithConditions},
		"bound, preset name, no PV yet": {tenantVolume: "fileserver", super: bound, want: pendingWithConditions},
		"lost is copied as it is":       {tenantVolume: "pvc-1", super: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimLost}, want: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimLost}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &corev1.PersistentVolumeClaim{Status: tc.super}
			got := DesiredStatus(tenantClaim(tc.tenantVolume), s, tc.tenantPV)
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}
