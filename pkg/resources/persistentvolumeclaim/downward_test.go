package persistentvolumeclaim_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/persistentvolumeclaim"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// A claim's data sources name only the tenant's own claims in the claim's namespace: a
// VolumeSnapshot, a populator or a claim of another namespace is refused (rule
// storageDataSource: Event, metric, no super copy, no retry). Its class is a public super
// class, one the policy allows, "" or none the super cluster has: a hidden super class is
// refused the same way (rule storageClass).
func TestDownwardDataSources(t *testing.T) {
	apiGroup := func(s string) *string { return &s }
	other, own := "other", "data"
	for name, tc := range map[string]struct {
		dataSource    *corev1.TypedLocalObjectReference
		dataSourceRef *corev1.TypedObjectReference
		class         *string
		refused       bool
		rule          policy.Rule // default storageDataSource
	}{
		"hidden super class":            {class: apiGroup("hidden"), refused: true, rule: policy.RuleStorageClass},
		"public super class":            {class: apiGroup("public")},
		"class the super cluster lacks": {class: apiGroup("tenant-own")},
		"empty class":                   {class: apiGroup("")},
		"own claim as dataSource": {
			dataSource: &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "src"}},
		"own claim as dataSourceRef in its own namespace": {
			dataSourceRef: &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "src", Namespace: &own}},
		"VolumeSnapshot": {refused: true,
			dataSource: &corev1.TypedLocalObjectReference{APIGroup: apiGroup("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: "snap"}},
		"populator": {refused: true,
			dataSourceRef: &corev1.TypedObjectReference{APIGroup: apiGroup("hello.example.com"), Kind: "Hello", Name: "h"}},
		"claim in another namespace": {refused: true,
			dataSourceRef: &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "src", Namespace: &other}},
		"claim kind in another API group": {refused: true,
			dataSource: &corev1.TypedLocalObjectReference{APIGroup: apiGroup("example.com"), Kind: "PersistentVolumeClaim", Name: "src"}},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			tenantName := "t-" + strings.ReplaceAll(name, " ", "-")
			claim := &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "data", UID: "claim-uid", ResourceVersion: "1"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
					StorageClassName: tc.class,
					DataSource:       tc.dataSource,
					DataSourceRef:    tc.dataSourceRef,
				},
			}
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "data", UID: "ns-uid"}}
			tenantCS := fake.NewClientset(claim.DeepCopy(), ns.DeepCopy())
			rec := record.NewFakeRecorder(10)
			c := &tenant.Cluster{Name: tenantName, UID: "uid-1", Client: tenantCS,
				Informers: informers.NewSharedInformerFactory(tenantCS, 0), Recorder: rec}
			// No quota: the fake super cluster has no quota controller to compute one.
			c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{Quota: corev1.ResourceList{}}}))
			mustAdd(t, c.Informers.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(claim))
			mustAdd(t, c.Informers.Core().V1().Namespaces().Informer().GetIndexer().Add(ns))
			c.Informers.Core().V1().PersistentVolumes().Informer()

			superCS := fake.NewClientset()
			env := &resources.Env{Super: superCS, SuperInformers: informers.NewSharedInformerFactory(superCS, 0),
				SuperVolumes: informers.NewSharedInformerFactory(superCS, 0)}
			env.SuperInformers.Core().V1().PersistentVolumeClaims().Informer()
			env.SuperInformers.Core().V1().Namespaces().Informer()
			env.SuperVolumes.Core().V1().PersistentVolumes().Informer()
			env.SuperVolumes.Storage().V1().StorageClasses().Informer()
			for _, sc := range []*storagev1.StorageClass{
				{ObjectMeta: metav1.ObjectMeta{Name: "hidden"}, Provisioner: "csi.example.com"},
				{ObjectMeta: metav1.ObjectMeta{Name: "public", Labels: map[string]string{conversion.LabelPublic: conversion.PublicValue}}, Provisioner: "csi.example.com"},
			} {
				mustAdd(t, env.SuperVolumes.Storage().V1().StorageClasses().Informer().GetIndexer().Add(sc))
			}
			rule := tc.rule
			if rule == "" {
				rule = policy.RuleStorageDataSource
			}
			denied := restest.DenialsRise(tenantName, resources.KindPersistentVolumeClaim, rule)

			superNS := resources.SuperNamespace(c, "data")
			for range 2 { // a second pass (a resync) reports nothing new
				if err := (persistentvolumeclaim.Resource).Downward(ctx, env, c, "data", "db"); err != nil {
					t.Fatalf("Downward: %v", err)
				}
				// The super caches see what the pass wrote.
				if sc, err := superCS.CoreV1().PersistentVolumeClaims(superNS).Get(ctx, "db", metav1.GetOptions{}); err == nil {
					mustAdd(t, env.SuperInformers.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(sc))
				}
				if sn, err := superCS.CoreV1().Namespaces().Get(ctx, superNS, metav1.GetOptions{}); err == nil {
					mustAdd(t, env.SuperInformers.Core().V1().Namespaces().Informer().GetIndexer().Add(sn))
				}
			}
			sc, err := superCS.CoreV1().PersistentVolumeClaims(superNS).Get(ctx, "db", metav1.GetOptions{})
			denials := denied()
			if !tc.refused {
				if err != nil {
					t.Fatalf("no super claim for an allowed data source: %v", err)
				}
				if ref := sc.Spec.DataSourceRef; ref != nil && ref.Namespace != nil {
					t.Errorf("super dataSourceRef keeps namespace %q (the tenant namespace means nothing in the super cluster)", *ref.Namespace)
				}
				if !conversion.OwnedByTenant(sc, "uid-1") || denials != 0 {
					t.Errorf("owned %v, denials %v", conversion.OwnedByTenant(sc, "uid-1"), denials)
				}
				return
			}
			if !apierrors.IsNotFound(err) {
				t.Errorf("refused claim has a super copy (err %v)", err)
			}
			if denials != 1 {
				t.Errorf("vcsyncer_policy_denials_total = %v, want 1", denials)
			}
			restest.WantOneEvent(t, rec, "Warning "+policy.ReasonPolicyDenied+" "+string(rule)+": ")
		})
	}
}

func mustAdd(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
