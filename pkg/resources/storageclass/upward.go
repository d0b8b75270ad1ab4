package storageclass

import (
	"context"
	"fmt"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Default-class annotations (GA and beta) read by the DefaultStorageClass admission plugin.
const (
	AnnDefault     = "storageclass.kubernetes.io/is-default-class"
	AnnDefaultBeta = "storageclass.beta.kubernetes.io/is-default-class"
)

func reconcileUpward(ctx context.Context, env *resources.Env, c *tenant.Cluster, name string) error {
	super, err := env.SuperPublic.Storage().V1().StorageClasses().Lister().Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err == nil && !conversion.IsPublic(super.Labels) {
		super = nil
	}
	have, err := c.Informers.Storage().V1().StorageClasses().Lister().Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err == nil && !IsSyncerClass(have) {
		return nil // the tenant's own class: never touched
	}
	scs := c.Client.StorageV1().StorageClasses()
	if have != nil && (super == nil || !Equal(Desired(super), have)) {
		// StorageClasses are immutable apart from metadata: replace instead of update.
		uid := have.UID
		err := scs.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("failed to delete tenant StorageClass %s: %w", name, err)
		}
		if super == nil {
			return nil
		}
		return fmt.Errorf("replaced tenant StorageClass %s, will recreate", name)
	}
	if super == nil || have != nil {
		return nil
	}
	if _, err := scs.Create(ctx, Desired(super), metav1.CreateOptions{FieldManager: reconcile.FieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to create tenant StorageClass %s: %w", name, err)
	}
	return nil
}

// IsSyncerClass reports whether a tenant StorageClass was created by the syncer.
func IsSyncerClass(sc *storagev1.StorageClass) bool {
	return sc.Labels[conversion.LabelManagedBy] == conversion.ManagedByValue
}

// Desired returns the tenant copy of public super StorageClass super: same name, provisioner,
// parameters, reclaim policy, mount options, expansion, binding mode and allowed topologies,
// the default-class annotations, and the label tenancy.vcsyncer.io/managed-by=vc-syncer.
// Other labels and annotations of the super class are not copied.
func Desired(super *storagev1.StorageClass) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:   super.Name,
			Labels: map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue},
		},
		Provisioner:          super.Provisioner,
		Parameters:           resources.CopyMap(super.Parameters),
		ReclaimPolicy:        super.ReclaimPolicy,
		MountOptions:         super.MountOptions,
		AllowVolumeExpansion: super.AllowVolumeExpansion,
		VolumeBindingMode:    super.VolumeBindingMode,
		AllowedTopologies:    super.AllowedTopologies,
	}
	for _, k := range []string{AnnDefault, AnnDefaultBeta} {
		if v, ok := super.Annotations[k]; ok {
			if sc.Annotations == nil {
				sc.Annotations = map[string]string{}
			}
			sc.Annotations[k] = v
		}
	}
	return sc
}

// Equal reports whether tenant class have is the copy want (labels and annotations the
// syncer sets, and every field). Unset defaulted fields (reclaim policy, binding mode) in want
// count as their defaults.
func Equal(want, have *storagev1.StorageClass) bool {
	w := want.DeepCopy()
	if w.ReclaimPolicy == nil {
		w.ReclaimPolicy = have.ReclaimPolicy
	}
	if w.VolumeBindingMode == nil {
		w.VolumeBindingMode = have.VolumeBindingMode
	}
	return resources.MapsEqual(w.Annotations, pick(have.Annotations, AnnDefault, AnnDefaultBeta)) &&
		resources.SubsetEqual(w.Labels, have.Labels) &&
		w.Provisioner == have.Provisioner &&
		resources.MapsEqual(w.Parameters, have.Parameters) &&
		equality.Semantic.DeepEqual(w.ReclaimPolicy, have.ReclaimPolicy) &&
		equality.Semantic.DeepEqual(w.MountOptions, have.MountOptions) &&
		equality.Semantic.DeepEqual(w.AllowVolumeExpansion, have.AllowVolumeExpansion) &&
		equality.Semantic.DeepEqual(w.VolumeBindingMode, have.VolumeBindingMode) &&
		equality.Semantic.DeepEqual(w.AllowedTopologies, have.AllowedTopologies)
}

func pick(m map[string]string, keys ...string) map[string]string {
	var out map[string]string
	for _, k := range keys {
		if v, ok := m[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}
