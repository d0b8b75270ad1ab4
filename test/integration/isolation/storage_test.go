package isolation

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
)

// legacyClassAnnotation is the beta storage-class annotation; the PV controller reads it before
// spec.storageClassName.
const legacyClassAnnotation = "volume.beta.kubernetes.io/storage-class"

// claimSpec returns a 1Gi ReadWriteOnce claim spec with class (nil: unset).
func claimSpec(class *string) corev1.PersistentVolumeClaimSpec {
	return corev1.PersistentVolumeClaimSpec{
		StorageClassName: class,
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}
}

// baitEscape returns an escaped func: B's Available volume bait was bound by anyone.
func (s *suite) baitEscape(bait string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		pv, err := s.super.CoreV1().PersistentVolumes().Get(ctx, bait, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("tenant B's volume %s: %w", bait, err)
		}
		if r := pv.Spec.ClaimRef; r != nil {
			return fmt.Errorf("tenant B's volume %s (label %s=%s) was bound to claim %s/%s", bait, conversion.LabelTenantUID, s.bUID, r.Namespace, r.Name)
		}
		return nil
	}
}

// attackClaimLegacyAnnotation: a claim with only the legacy annotation storage-class "" (no
// spec.storageClassName) must not bind a static PV labelled for tenant B. The refusal needs no
// signal (confining the claim to A's PVs is enough): the claim must stay away from B's PV.
func (s *suite) attackClaimLegacyAnnotation(t *testing.T) {
	ctx := context.Background()
	bait := s.staticPV("bait-claim", s.bUID)
	if _, err := s.super.CoreV1().PersistentVolumes().Create(ctx, bait, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := s.snapshot(t)
	defer s.compare(t, before)
	const name = "legacy-annotation"
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{legacyClassAnnotation: ""}},
		Spec:       claimSpec(nil),
	}
	created, err := s.a.Client.CoreV1().PersistentVolumeClaims(aNS).Create(ctx, pvc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("tenant A's apiserver refused the attack claim: %v", err)
	}
	if created.Spec.StorageClassName != nil {
		t.Fatalf("tenant A's apiserver set storageClassName %q: the attack cannot be made", *created.Spec.StorageClassName)
	}
	s.settled(t, "PersistentVolumeClaim", name, func(ctx context.Context) error {
		_, err := s.super.CoreV1().PersistentVolumeClaims(s.aSuperNS).Get(ctx, name, metav1.GetOptions{})
		return err
	}, s.baitEscape(bait.Name))
}

// attackEphemeralLegacyAnnotation: a generic ephemeral volume whose template carries the legacy
// annotation storage-class "" (and no class) must not bind a static PV labelled for B.
func (s *suite) attackEphemeralLegacyAnnotation(t *testing.T) {
	ctx := context.Background()
	bait := s.staticPV("bait-ephemeral", s.bUID)
	if _, err := s.super.CoreV1().PersistentVolumes().Create(ctx, bait, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := s.snapshot(t)
	defer s.compare(t, before)
	const name = "eph-legacy-annotation"
	p := basePod(name)
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{legacyClassAnnotation: ""}},
			Spec:       claimSpec(nil),
		}}}}}
	if _, err := s.a.Client.CoreV1().Pods(aNS).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("tenant A's apiserver refused the attack Pod: %v", err)
	}
	s.settled(t, "Pod", name, func(ctx context.Context) error {
		// The super cluster's ephemeral-volume controller names the claim <pod>-<volume>.
		_, err := s.super.CoreV1().PersistentVolumeClaims(s.aSuperNS).Get(ctx, name+"-data", metav1.GetOptions{})
		return err
	}, s.baitEscape(bait.Name))
}

// attackEphemeralStamps: an ephemeral-volume template whose metadata carries the syncer's
// ownership stamps naming tenant B's claim; the super claim (made by the super cluster's
// ephemeral-volume controller from the template) must carry none of them, so the syncer never
// takes it for B's. The syncer's own domain is never copied from a tenant (a filter, no signal).
func (s *suite) attackEphemeralStamps(t *testing.T) {
	ctx := context.Background()
	before := s.snapshot(t)
	defer s.compare(t, before)
	const name = "eph-stamps"
	class := localcluster.DefaultStorageClass
	p := basePod(name)
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
			ObjectMeta: metav1.ObjectMeta{
				Labels: map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue, conversion.LabelTenantUID: s.bUID},
				Annotations: map[string]string{
					conversion.AnnotationTenant: s.b.Name, conversion.AnnotationTenantUID: s.bUID,
					conversion.AnnotationNamespace: bNS, conversion.AnnotationName: bClaim, conversion.AnnotationUID: s.bClaimUID,
				},
			},
			Spec: claimSpec(&class),
		}}}}}
	if _, err := s.a.Client.CoreV1().Pods(aNS).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("tenant A's apiserver refused the attack Pod: %v", err)
	}
	claim := name + "-data"
	escaped := func(ctx context.Context) error {
		if err := s.podEscape(name, func(p *corev1.Pod) error {
			for _, v := range p.Spec.Volumes {
				if e := v.Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
					for k := range e.VolumeClaimTemplate.Labels {
						if conversion.IsOwnKey(k) {
							return fmt.Errorf("volume %s's claim template carries the syncer's label %s=%s", v.Name, k, e.VolumeClaimTemplate.Labels[k])
						}
					}
					for k := range e.VolumeClaimTemplate.Annotations {
						if conversion.IsOwnKey(k) || k == conversion.AnnotationTenantUID {
							return fmt.Errorf("volume %s's claim template carries the syncer's annotation %s=%s", v.Name, k, e.VolumeClaimTemplate.Annotations[k])
						}
					}
				}
			}
			return nil
		})(ctx); err != nil {
			return err
		}
		c, err := s.super.CoreV1().PersistentVolumeClaims(s.aSuperNS).Get(ctx, claim, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if o, ok := conversion.OwnerOf(c); ok && o.TenantUID != s.aUID {
			return fmt.Errorf("super claim %s/%s is stamped as tenant %s's claim %s/%s", c.Namespace, c.Name, o.Tenant, o.Namespace, o.Name)
		}
		if c.Labels[conversion.LabelTenantUID] == s.bUID || c.Annotations[conversion.AnnotationTenantUID] == s.bUID || c.Annotations[conversion.AnnotationUID] == s.bClaimUID {
			return fmt.Errorf("super claim %s/%s carries tenant B's stamps: labels %v annotations %v", c.Namespace, c.Name, c.Labels, c.Annotations)
		}
		return nil
	}
	s.settled(t, "Pod", name, func(ctx context.Context) error {
		_, err := s.super.CoreV1().PersistentVolumeClaims(s.aSuperNS).Get(ctx, claim, metav1.GetOptions{})
		return err
	}, escaped)
}

// attackDataSourcePopulator: a claim filled by a volume populator of the super cluster
// (dataSourceRef to a custom resource: the populator runs with its own rights and reads from
// wherever the resource says). A claim's data source may only be one of A's own claims, which
// in A's super namespace are A's by construction: rule storageDataSource.
func (s *suite) attackDataSourcePopulator(t *testing.T) {
	const name = "populate-import"
	class := localcluster.DefaultStorageClass
	group := "populator.example.com"
	s.run(t, attack{
		kind: "PersistentVolumeClaim", ns: aNS, names: []string{name}, rules: []string{"storageDataSource"},
		create: func(ctx context.Context) error {
			spec := claimSpec(&class)
			spec.DataSourceRef = &corev1.TypedObjectReference{APIGroup: &group, Kind: "HTTPImport", Name: "tenant-b-export"}
			_, err := s.a.Client.CoreV1().PersistentVolumeClaims(aNS).Create(ctx, &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{})
			return err
		},
		escaped: s.claimEscape(name, func(c *corev1.PersistentVolumeClaim) error {
			if d := c.Spec.DataSourceRef; d != nil && d.Kind == "HTTPImport" {
				return fmt.Errorf("dataSourceRef names populator resource %s/%s %s", ptrString(d.APIGroup), d.Kind, d.Name)
			}
			return nil
		}),
	})
}

// attackDataSourceRefSnapshot: a claim restored from a VolumeSnapshot (a kind the syncer does
// not sync, so never one of A's objects) through dataSourceRef.
func (s *suite) attackDataSourceRefSnapshot(t *testing.T) {
	const name = "restore-snapshot"
	class := localcluster.DefaultStorageClass
	group := "snapshot.storage.k8s.io"
	s.run(t, attack{
		kind: "PersistentVolumeClaim", ns: aNS, names: []string{name}, rules: []string{"storageDataSource"},
		create: func(ctx context.Context) error {
			spec := claimSpec(&class)
			spec.DataSourceRef = &corev1.TypedObjectReference{APIGroup: &group, Kind: "VolumeSnapshot", Name: "b-nightly"}
			_, err := s.a.Client.CoreV1().PersistentVolumeClaims(aNS).Create(ctx, &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{})
			return err
		},
		escaped: s.claimEscape(name, func(c *corev1.PersistentVolumeClaim) error {
			if d := c.Spec.DataSourceRef; d != nil && d.Kind == "VolumeSnapshot" {
				return fmt.Errorf("dataSourceRef names VolumeSnapshot %s", d.Name)
			}
			if d := c.Spec.DataSource; d != nil && d.Kind == "VolumeSnapshot" {
				return fmt.Errorf("dataSource names VolumeSnapshot %s", d.Name)
			}
			return nil
		}),
	})
}

// claimEscape returns an escaped func calling check on A's super claim name once it exists.
func (s *suite) claimEscape(name string, check func(c *corev1.PersistentVolumeClaim) error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		c, err := s.super.CoreV1().PersistentVolumeClaims(s.aSuperNS).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := check(c); err != nil {
			return fmt.Errorf("super claim %s/%s: %w", c.Namespace, c.Name, err)
		}
		return nil
	}
}
