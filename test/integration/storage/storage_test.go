package storage_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/resources/persistentvolume"
	"github.com/vcsyncer/syncer/pkg/resources/persistentvolumeclaim"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// TestStorage checks PersistentVolumeClaims down, their binding and status up, tenant PVs,
// public StorageClasses and isolation between two tenants, on real control planes (the super
// cluster's StorageClasses are served by the framework's provisioner).
func TestStorage(t *testing.T) {
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 2}, 2)
	c := itest.StartSyncer(t, env.Super.RESTConfig, nil)
	super := env.Super.Client
	ctx := context.Background()
	t1, t2 := env.Tenants[0], env.Tenants[1]
	for _, tc := range []*localcluster.ControlPlane{t1, t2} {
		if err := itest.AddTenant(ctx, c, kubeconfigNS, tc, 1); err != nil {
			t.Fatal(err)
		}
	}
	itest.WaitRunning(t, c, t1.Name)
	itest.WaitRunning(t, c, t2.Name)
	uid1, uid2 := itest.TenantUID(t, c, t1.Name), itest.TenantUID(t, c, t2.Name)
	for _, tc := range []*localcluster.ControlPlane{t1, t2} {
		itest.MustCreateNS(t, tc.Client, "data")
	}
	sns1 := conversion.SuperNamespace(t1.Name, uid1, "data")

	t.Run("public StorageClasses appear in every tenant", func(t *testing.T) {
		for _, tc := range []*localcluster.ControlPlane{t1, t2} {
			itest.Eventually(t, time.Minute, tc.Name+" has the default class", func(ctx context.Context) error {
				sc, err := tc.Client.StorageV1().StorageClasses().Get(ctx, localcluster.DefaultStorageClass, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if sc.Provisioner != localcluster.Provisioner || sc.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" {
					return itest.Errorf("provisioner %q annotations %v", sc.Provisioner, sc.Annotations)
				}
				return nil
			})
			if _, err := tc.Client.StorageV1().StorageClasses().Get(ctx, "fast", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("%s: super class fast is not public but the tenant has it (err %v)", tc.Name, err)
			}
		}
	})

	t.Run("claim goes down, binds, and its PV comes up", func(t *testing.T) {
		itest.Created(t)(t1.Client.CoreV1().PersistentVolumeClaims("data").Create(ctx, claim("db", nil, ""), metav1.CreateOptions{}))
		tc := waitClaimBound(t, t1.Client, "db")
		if tc.Spec.StorageClassName == nil || *tc.Spec.StorageClassName != localcluster.DefaultStorageClass {
			t.Errorf("tenant claim class %v, want the default %s (tenant admission with the synced default class)", tc.Spec.StorageClassName, localcluster.DefaultStorageClass)
		}
		sc, err := super.CoreV1().PersistentVolumeClaims(sns1).Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sc.Annotations[conversion.AnnotationUID] != string(tc.UID) || sc.Status.Phase != corev1.ClaimBound {
			t.Errorf("super claim: uid annotation %q (tenant %s), phase %s", sc.Annotations[conversion.AnnotationUID], tc.UID, sc.Status.Phase)
		}
		if tc.Spec.VolumeName != sc.Spec.VolumeName {
			t.Errorf("tenant claim names PV %q, super claim %q (dynamically provisioned PVs keep their name)", tc.Spec.VolumeName, sc.Spec.VolumeName)
		}
		if got, want := tc.Status.Capacity.Storage().String(), sc.Status.Capacity.Storage().String(); got != want {
			t.Errorf("tenant capacity %s, super %s", got, want)
		}
		if _, ok := sc.Annotations[persistentvolumeclaim.AnnBindCompleted]; ok && sc.Annotations[conversion.AnnotationName] == "" {
			t.Error("super claim lost its ownership annotations")
		}
		checkTenantPV(t, t1.Client, tc, sc.Spec.VolumeName)
		// The super PV is never written by the syncer.
		spv, err := super.CoreV1().PersistentVolumes().Get(ctx, sc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if spv.Labels[conversion.LabelManagedBy] != "" || spv.Spec.ClaimRef.Namespace != sns1 {
			t.Errorf("super PV labels %v claimRef %+v", spv.Labels, spv.Spec.ClaimRef)
		}
	})

	t.Run("a tenant cannot see or take another tenant's PV", func(t *testing.T) {
		tc, err := t1.Client.CoreV1().PersistentVolumeClaims("data").Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Tenant 2 names tenant 1's volume: it maps into tenant 2's own PV names and stays Pending.
		itest.Created(t)(t2.Client.CoreV1().PersistentVolumeClaims("data").Create(ctx, claim("steal", ptr(""), tc.Spec.VolumeName), metav1.CreateOptions{}))
		sns2 := conversion.SuperNamespace(t2.Name, uid2, "data")
		itest.Eventually(t, time.Minute, "tenant 2's claim in the super cluster", func(ctx context.Context) error {
			s, err := super.CoreV1().PersistentVolumeClaims(sns2).Get(ctx, "steal", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if want := conversion.SuperVolumeName(t2.Name, uid2, tc.Spec.VolumeName); s.Spec.VolumeName != want {
				return itest.Errorf("super volumeName %q, want %q", s.Spec.VolumeName, want)
			}
			return nil
		})
		itest.Consistently(t, 3*time.Second, "tenant 1's PV stays with tenant 1", func(ctx context.Context) error {
			pvs, err := t2.Client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, pv := range pvs.Items {
				return itest.Errorf("tenant 2 sees PV %s (claimRef %+v)", pv.Name, pv.Spec.ClaimRef)
			}
			s, err := t2.Client.CoreV1().PersistentVolumeClaims("data").Get(ctx, "steal", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if s.Status.Phase != corev1.ClaimPending {
				return itest.Errorf("tenant 2's claim is %s", s.Status.Phase)
			}
			return nil
		})
		checkTenantPV(t, t1.Client, tc, tc.Spec.VolumeName)
	})

	t.Run("a claim with class \"\" binds only PVs labelled for its tenant", func(t *testing.T) {
		staticPV := func(name string, labels map[string]string) *corev1.PersistentVolume {
			return &corev1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
				Spec: corev1.PersistentVolumeSpec{
					Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
					AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					PersistentVolumeSource: corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "10.0.0.3", Path: "/" + name}},
				},
			}
		}
		// An admin's volume for tenant 1, without a claimRef: tenant 2 must not get it.
		victim := conversion.SuperVolumeName(t1.Name, uid1, "reserved")
		itest.Created(t)(super.CoreV1().PersistentVolumes().Create(ctx, staticPV(victim, map[string]string{conversion.LabelTenantUID: uid1}), metav1.CreateOptions{}))
		itest.Created(t)(t2.Client.CoreV1().PersistentVolumeClaims("data").Create(ctx, claim("any-static", ptr(""), ""), metav1.CreateOptions{}))
		// A Pod's generic ephemeral volume naming the victim's full super name.
		eph := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "eph-steal"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
				VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: *claim("", ptr(""), victim).Spec.DeepCopy()}}}}},
		}}
		itest.Created(t)(t2.Client.CoreV1().Pods("data").Create(ctx, eph, metav1.CreateOptions{}))
		// The legacy class annotation "" (without spec.storageClassName) wins in the PV
		// controller: such a claim, and an ephemeral template with it, must be confined too.
		// The template's metadata also forges the syncer's ownership stamps for tenant 1.
		annClaim := claim("ann-static", nil, "")
		annClaim.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: ""}
		itest.Created(t)(t2.Client.CoreV1().PersistentVolumeClaims("data").Create(ctx, annClaim, metav1.CreateOptions{}))
		annEph := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "eph-ann"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
				VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
					ObjectMeta: metav1.ObjectMeta{
						Labels:      map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue, conversion.LabelTenantUID: uid1},
						Annotations: map[string]string{corev1.BetaStorageClassAnnotation: "", conversion.AnnotationTenant: t1.Name},
					},
					Spec: *claim("", nil, "").Spec.DeepCopy(),
				}}}}},
		}}
		itest.Created(t)(t2.Client.CoreV1().Pods("data").Create(ctx, annEph, metav1.CreateOptions{}))
		sns2 := conversion.SuperNamespace(t2.Name, uid2, "data")
		itest.Eventually(t, time.Minute, "super claims of the annotated claim and template, confined", func(ctx context.Context) error {
			for _, name := range []string{"ann-static", "eph-ann-v"} {
				sc, err := super.CoreV1().PersistentVolumeClaims(sns2).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if sc.Spec.StorageClassName == nil || *sc.Spec.StorageClassName != "" || sc.Spec.Selector == nil ||
					sc.Spec.Selector.MatchLabels[conversion.LabelTenantUID] != uid2 {
					return itest.Errorf("super claim %s: class %v selector %v, want \"\" confined to tenant 2", name, sc.Spec.StorageClassName, sc.Spec.Selector)
				}
				if _, ok := sc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
					return itest.Errorf("super claim %s keeps the beta class annotation", name)
				}
				if name == "eph-ann-v" && (sc.Labels[conversion.LabelTenantUID] != "" || sc.Labels[conversion.LabelManagedBy] != "" || sc.Annotations[conversion.AnnotationTenant] != "") {
					return itest.Errorf("super ephemeral claim carries forged stamps: labels %v annotations %v", sc.Labels, sc.Annotations)
				}
			}
			return nil
		})
		itest.Consistently(t, 5*time.Second, "tenant 1's volume stays Available", func(ctx context.Context) error {
			pv, err := super.CoreV1().PersistentVolumes().Get(ctx, victim, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if pv.Spec.ClaimRef != nil {
				return itest.Errorf("tenant 1's PV %s was claimed by %s/%s", victim, pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name)
			}
			return nil
		})
		// Only any-static may take tenant 2's own volume below.
		_ = t2.Client.CoreV1().Pods("data").Delete(ctx, "eph-ann", metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
		_ = t2.Client.CoreV1().PersistentVolumeClaims("data").Delete(ctx, "ann-static", metav1.DeleteOptions{})
		itest.Eventually(t, time.Minute, "the annotated claims' super copies gone", func(ctx context.Context) error {
			for _, name := range []string{"ann-static", "eph-ann-v"} {
				if _, err := super.CoreV1().PersistentVolumeClaims(sns2).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					return itest.Errorf("super claim %s: %v", name, err)
				}
			}
			return nil
		})
		// A volume labelled for tenant 2 serves its claim.
		own := conversion.SuperVolumeName(t2.Name, uid2, "own")
		itest.Created(t)(super.CoreV1().PersistentVolumes().Create(ctx, staticPV(own, map[string]string{conversion.LabelTenantUID: uid2}), metav1.CreateOptions{}))
		tc := waitClaimBound(t, t2.Client, "any-static")
		if pv := checkTenantPV(t, t2.Client, tc, tc.Spec.VolumeName); pv.Annotations[conversion.AnnotationSuperName] != own {
			t.Errorf("tenant 2's claim is bound to %q, want %q", pv.Annotations[conversion.AnnotationSuperName], own)
		}
		_ = t2.Client.CoreV1().Pods("data").Delete(ctx, "eph-steal", metav1.DeleteOptions{})
	})

	t.Run("data sources name only the tenant's own claims", func(t *testing.T) {
		snap := claim("from-snapshot", ptr(localcluster.DefaultStorageClass), "")
		snap.Spec.DataSource = &corev1.TypedLocalObjectReference{APIGroup: ptr("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: "other-tenants-snap"}
		itest.Created(t)(t1.Client.CoreV1().PersistentVolumeClaims("data").Create(ctx, snap, metav1.CreateOptions{}))
		itest.Eventually(t, time.Minute, "PolicyDenied Event on the claim", func(ctx context.Context) error {
			evs, err := t1.Client.CoreV1().Events("data").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=from-snapshot"})
			if err != nil {
				return err
			}
			for _, e := range evs.Items {
				if e.Reason == "PolicyDenied" && e.Type == corev1.EventTypeWarning {
					return nil
				}
			}
			return itest.Errorf("no PolicyDenied Event (%d Events)", len(evs.Items))
		})
		itest.Consistently(t, 2*time.Second, "no super copy of the refused claim", func(ctx context.Context) error {
			if _, err := super.CoreV1().PersistentVolumeClaims(sns1).Get(ctx, "from-snapshot", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("super copy: %v", err)
			}
			return nil
		})
		// Cloning the tenant's own claim in the same namespace is allowed.
		clone := claim("clone", ptr(localcluster.DefaultStorageClass), "")
		clone.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "db"}
		itest.Created(t)(t1.Client.CoreV1().PersistentVolumeClaims("data").Create(ctx, clone, metav1.CreateOptions{}))
		itest.Eventually(t, time.Minute, "super copy of the clone", func(ctx context.Context) error {
			sc, err := super.CoreV1().PersistentVolumeClaims(sns1).Get(ctx, "clone", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if sc.Spec.DataSource == nil || sc.Spec.DataSource.Name != "db" {
				return itest.Errorf("dataSource %+v", sc.Spec.DataSource)
			}
			return nil
		})
		_ = t1.Client.CoreV1().PersistentVolumeClaims("data").Delete(ctx, "from-snapshot", metav1.DeleteOptions{})
		_ = t1.Client.CoreV1().PersistentVolumeClaims("data").Delete(ctx, "clone", metav1.DeleteOptions{})
	})

	t.Run("preset volumeName with class \"\" binds the tenant's super PV", func(t *testing.T) {
		// The super-cluster admin creates the volume for tenant 1 under the mapped name.
		superName := conversion.SuperVolumeName(t1.Name, uid1, "fileserver")
		itest.Created(t)(super.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: superName},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Ti")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				PersistentVolumeSource: corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "10.0.0.2", Path: "/vol1"}},
			},
		}, metav1.CreateOptions{}))
		pvc := claim("fileserver-claim", ptr(""), "fileserver")
		pvc.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("1Ti")
		itest.Created(t)(t1.Client.CoreV1().PersistentVolumeClaims("data").Create(ctx, pvc, metav1.CreateOptions{}))
		tc := waitClaimBound(t, t1.Client, "fileserver-claim")
		if tc.Spec.VolumeName != "fileserver" {
			t.Errorf("tenant claim volumeName changed to %q", tc.Spec.VolumeName)
		}
		pv := checkTenantPV(t, t1.Client, tc, "fileserver")
		if pv.Spec.NFS != nil || pv.Spec.CSI == nil || pv.Spec.CSI.Driver != persistentvolume.Driver {
			t.Errorf("tenant PV source %+v: super storage details must not reach the tenant", pv.Spec.PersistentVolumeSource)
		}
		if pv.Annotations[conversion.AnnotationSuperName] != superName {
			t.Errorf("tenant PV mirrors %q, want %q", pv.Annotations[conversion.AnnotationSuperName], superName)
		}
	})

	t.Run("a claim naming a tenant-created PV is not synced", func(t *testing.T) {
		itest.Created(t)(t1.Client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "my-model-pv"},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany},
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc"}},
			},
		}, metav1.CreateOptions{}))
		itest.Eventually(t, 30*time.Second, "tenant PV cached by the tenant", func(ctx context.Context) error {
			_, err := t1.Client.CoreV1().PersistentVolumes().Get(ctx, "my-model-pv", metav1.GetOptions{})
			return err
		})
		time.Sleep(time.Second) // the syncer's tenant cache
		pvc := claim("my-model-pvc", nil, "my-model-pv")
		pvc.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}
		itest.Created(t)(t1.Client.CoreV1().PersistentVolumeClaims("data").Create(ctx, pvc, metav1.CreateOptions{}))
		itest.WaitEvent(t, t1.Client, "data", "my-model-pvc", persistentvolumeclaim.ReasonVolumeNotSynced, "my-model-pv")
		itest.Consistently(t, 2*time.Second, "no super copy", func(ctx context.Context) error {
			if _, err := super.CoreV1().PersistentVolumeClaims(sns1).Get(ctx, "my-model-pvc", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("super claim exists (err %v)", err)
			}
			pv, err := t1.Client.CoreV1().PersistentVolumes().Get(ctx, "my-model-pv", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if pv.Spec.ClaimRef != nil || len(pv.Labels) > 0 {
				return itest.Errorf("the tenant's own PV was changed: claimRef %+v labels %v", pv.Spec.ClaimRef, pv.Labels)
			}
			return nil
		})

		// The claim first, the tenant's PV later: the unbound super copy goes away.
		itest.Created(t)(t1.Client.CoreV1().PersistentVolumeClaims("data").Create(ctx, claim("late-pvc", ptr(""), "late-pv"), metav1.CreateOptions{}))
		itest.Eventually(t, 30*time.Second, "super copy of late-pvc", func(ctx context.Context) error {
			_, err := super.CoreV1().PersistentVolumeClaims(sns1).Get(ctx, "late-pvc", metav1.GetOptions{})
			return err
		})
		itest.Created(t)(t1.Client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "late-pv"},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var"}},
			},
		}, metav1.CreateOptions{}))
		itest.Eventually(t, 30*time.Second, "super copy of late-pvc removed", func(ctx context.Context) error {
			if _, err := super.CoreV1().PersistentVolumeClaims(sns1).Get(ctx, "late-pvc", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("still there (err %v)", err)
			}
			return nil
		})
		itest.WaitEvent(t, t1.Client, "data", "late-pvc", persistentvolumeclaim.ReasonVolumeNotSynced, "late-pv")
	})

	t.Run("StatefulSet volumeClaimTemplates get Running Pods", func(t *testing.T) {
		replicas := int32(2)
		labels := map[string]string{"app": "web"}
		itest.Created(t)(t1.Client.AppsV1().StatefulSets("data").Create(ctx, &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: appsv1.StatefulSetSpec{
				Replicas: &replicas, ServiceName: "web",
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{
						Name: "nginx", Image: "nginx:1.27",
						VolumeMounts: []corev1.VolumeMount{{Name: "www", MountPath: "/usr/share/nginx/html"}},
					}}},
				},
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{*claim("www", nil, "")},
			},
		}, metav1.CreateOptions{}))
		for _, name := range []string{"web-0", "web-1"} {
			itest.Eventually(t, 2*time.Minute, "Pod "+name+" Running in the tenant", func(ctx context.Context) error {
				p, err := t1.Client.CoreV1().Pods("data").Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if p.Status.Phase != corev1.PodRunning {
					return itest.Errorf("phase %s", p.Status.Phase)
				}
				return nil
			})
			tc := waitClaimBound(t, t1.Client, "www-"+name)
			checkTenantPV(t, t1.Client, tc, tc.Spec.VolumeName)
		}
	})

	t.Run("generic ephemeral volume claims bind through the super cluster's own claim", func(t *testing.T) {
		tmpl := claim("", nil, "")
		itest.Created(t)(t1.Client.CoreV1().Pods("data").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "scratch"},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Image: "busybox", VolumeMounts: []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}}},
				Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
					VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: tmpl.Spec},
				}}}},
			},
		}, metav1.CreateOptions{}))
		tc := waitClaimBound(t, t1.Client, "scratch-tmp")
		sc, err := super.CoreV1().PersistentVolumeClaims(sns1).Get(ctx, "scratch-tmp", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sc.Labels[conversion.LabelManagedBy] != "" || metav1.GetControllerOf(sc) == nil || metav1.GetControllerOf(sc).Kind != "Pod" {
			t.Errorf("super claim should be the super ephemeral-volume controller's: labels %v owner %+v", sc.Labels, metav1.GetControllerOf(sc))
		}
		checkTenantPV(t, t1.Client, tc, sc.Spec.VolumeName)
		itest.Eventually(t, time.Minute, "Pod scratch Running", func(ctx context.Context) error {
			p, err := t1.Client.CoreV1().Pods("data").Get(ctx, "scratch", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Status.Phase != corev1.PodRunning {
				return itest.Errorf("phase %s", p.Status.Phase)
			}
			return nil
		})
	})

	t.Run("deleting the claim removes the tenant PV", func(t *testing.T) {
		tc, err := t1.Client.CoreV1().PersistentVolumeClaims("data").Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := t1.Client.CoreV1().PersistentVolumeClaims("data").Delete(ctx, "db", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, time.Minute, "super PV, super claim and tenant PV gone", func(ctx context.Context) error {
			if _, err := super.CoreV1().PersistentVolumeClaims(sns1).Get(ctx, "db", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("super claim: %v", err)
			}
			if _, err := super.CoreV1().PersistentVolumes().Get(ctx, tc.Spec.VolumeName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("super PV: %v", err)
			}
			if _, err := t1.Client.CoreV1().PersistentVolumes().Get(ctx, tc.Spec.VolumeName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("tenant PV: %v", err)
			}
			return nil
		})
	})

	t.Run("a StorageClass unmarked public leaves the tenants; tenant classes are left alone", func(t *testing.T) {
		own := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "gold"}, Provisioner: "example.com/tenant-own"}
		itest.Created(t)(t2.Client.StorageV1().StorageClasses().Create(ctx, own, metav1.CreateOptions{}))
		itest.Created(t)(super.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
			ObjectMeta:  metav1.ObjectMeta{Name: "gold", Labels: map[string]string{conversion.LabelPublic: "true"}},
			Provisioner: localcluster.Provisioner, Parameters: map[string]string{"tier": "gold"},
		}, metav1.CreateOptions{}))
		itest.Eventually(t, time.Minute, "gold in tenant 1", func(ctx context.Context) error {
			sc, err := t1.Client.StorageV1().StorageClasses().Get(ctx, "gold", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if sc.Parameters["tier"] != "gold" || sc.Labels[conversion.LabelManagedBy] != conversion.ManagedByValue {
				return itest.Errorf("parameters %v labels %v", sc.Parameters, sc.Labels)
			}
			return nil
		})
		patch := []byte(`{"metadata":{"labels":{"` + conversion.LabelPublic + `":null}}}`)
		if _, err := super.StorageV1().StorageClasses().Patch(ctx, "gold", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, time.Minute, "gold gone from tenant 1", func(ctx context.Context) error {
			if _, err := t1.Client.StorageV1().StorageClasses().Get(ctx, "gold", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("still there (err %v)", err)
			}
			return nil
		})
		sc, err := t2.Client.StorageV1().StorageClasses().Get(ctx, "gold", metav1.GetOptions{})
		if err != nil || sc.Provisioner != own.Provisioner || sc.Labels[conversion.LabelManagedBy] != "" {
			t.Errorf("tenant 2's own class gold was touched: %+v, %v", sc, err)
		}
		if _, err := super.StorageV1().StorageClasses().Get(ctx, "gold", metav1.GetOptions{}); err != nil {
			t.Errorf("super class gold: %v", err)
		}
	})
}

func ptr[T any](v T) *T { return &v }

// claim returns a 1Gi ReadWriteOnce claim with the given class (nil: none) and volumeName.
func claim(name string, class *string, volumeName string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			StorageClassName: class,
			VolumeName:       volumeName,
		},
	}
}

// waitClaimBound waits until tenant claim data/name is Bound and returns it.
func waitClaimBound(t *testing.T, c kubernetes.Interface, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	const ns = "data"
	var out *corev1.PersistentVolumeClaim
	itest.Eventually(t, time.Minute, "tenant claim "+ns+"/"+name+" Bound", func(ctx context.Context) error {
		pvc, err := c.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "" {
			return itest.Errorf("phase %s volumeName %q", pvc.Status.Phase, pvc.Spec.VolumeName)
		}
		out = pvc
		return nil
	})
	return out
}

// checkTenantPV checks that tenant PV name exists, is Bound, and its claimRef names tenant
// claim tc (namespace, name, UID).
func checkTenantPV(t *testing.T, c kubernetes.Interface, tc *corev1.PersistentVolumeClaim, name string) *corev1.PersistentVolume {
	t.Helper()
	pv, err := c.CoreV1().PersistentVolumes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("tenant PV %s: %v", name, err)
	}
	r := pv.Spec.ClaimRef
	if r == nil || r.Namespace != tc.Namespace || r.Name != tc.Name || r.UID != tc.UID {
		t.Errorf("tenant PV %s claimRef %+v, want %s/%s uid %s", name, r, tc.Namespace, tc.Name, tc.UID)
	}
	if pv.Status.Phase != corev1.VolumeBound {
		t.Errorf("tenant PV %s phase %s", name, pv.Status.Phase)
	}
	return pv
}
