package persistentvolume

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Driver is the CSI driver name of the placeholder source of every tenant PV.
const Driver = "super.tenancy.vcsyncer.io"

// ErrConflict is returned when the tenant already has a PV of its own at the name the
// syncer would use.
var ErrConflict = errors.New("tenant PersistentVolume exists and was not created by the syncer")

// TenantName returns the name of the tenant PV for super PV superPV bound to the super copy
// of tenant claim claim: the claim's preset spec.volumeName when it maps to superPV
// (conversion.SuperVolumeName), the super PV's name otherwise.
func TenantName(tenantName, tenantUID string, claim *corev1.PersistentVolumeClaim, superPV string) string {
	if v := claim.Spec.VolumeName; v != "" && conversion.SuperVolumeName(tenantName, tenantUID, v) == superPV {
		return v
	}
	return superPV
}

// BoundTo reports whether super PV pv is bound (or being bound) to super claim sc: its
// claimRef names sc by namespace, name and UID, and it is not Released or Failed.
func BoundTo(pv *corev1.PersistentVolume, sc *corev1.PersistentVolumeClaim) bool {
	r := pv.Spec.ClaimRef
	return r != nil && r.Namespace == sc.Namespace && r.Name == sc.Name && r.UID == sc.UID &&
		pv.Status.Phase != corev1.VolumeReleased && pv.Status.Phase != corev1.VolumeFailed
}

// Desired returns the tenant PV named name for super PV superPV, bound to tenant claim claim.
func Desired(name string, superPV *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) *corev1.PersistentVolume {
	s := superPV.Spec
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue},
			Annotations: map[string]string{conversion.AnnotationSuperName: superPV.Name},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    resources.CopyResourceList(s.Capacity),
			AccessModes: append([]corev1.PersistentVolumeAccessMode(nil), s.AccessModes...),
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				CSI: &corev1.CSIPersistentVolumeSource{Driver: Driver, VolumeHandle: superPV.Name},
			},
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID,
			},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              s.StorageClassName,
			MountOptions:                  s.MountOptions,
			VolumeMode:                    s.VolumeMode,
			NodeAffinity:                  s.NodeAffinity.DeepCopy(),
		},
	}
}

// Equal reports whether tenant PV have matches want in what the syncer keeps current:
// capacity, access modes, claimRef and the super PV it mirrors.
func Equal(want, have *corev1.PersistentVolume) bool {
	return have.Annotations[conversion.AnnotationSuperName] == want.Annotations[conversion.AnnotationSuperName] &&
		equality.Semantic.DeepEqual(want.Spec.Capacity, have.Spec.Capacity) &&
		equality.Semantic.DeepEqual(want.Spec.AccessModes, have.Spec.AccessModes) &&
		have.Spec.ClaimRef != nil && have.Spec.ClaimRef.UID == want.Spec.ClaimRef.UID &&
		have.Spec.ClaimRef.Namespace == want.Spec.ClaimRef.Namespace && have.Spec.ClaimRef.Name == want.Spec.ClaimRef.Name
}

// Ensure makes the tenant have PV want (see Desired), with status phase Bound. It returns
// ErrConflict (wrapped) when a PV the tenant created has that name; the caller reports it.
func Ensure(ctx context.Context, c *tenant.Cluster, want *corev1.PersistentVolume) error {
	pvs := c.Client.CoreV1().PersistentVolumes()
	have, err := c.Informers.Core().V1().PersistentVolumes().Lister().Get(want.Name)
	switch {
	case apierrors.IsNotFound(err):
		created, err := pvs.Create(ctx, want, metav1.CreateOptions{FieldManager: reconcile.FieldManager})
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("tenant PersistentVolume %s exists but is not cached yet, will retry", want.Name)
		}
		if err != nil {
			return fmt.Errorf("failed to create tenant PersistentVolume %s: %w", want.Name, err)
		}
		return setPhase(ctx, c, created, corev1.VolumeBound)
	case err != nil:
		return err
	case tenant.IsHeldOut(have):
		return fmt.Errorf("tenant PersistentVolume %s is held out of the syncer's memory (the tenant's limits.maxObjectBytes or limits.maxCachedBytes), will retry", want.Name)
	case !IsSyncerVolume(have):
		return fmt.Errorf("PersistentVolume %s: %w", want.Name, ErrConflict)
	case !have.DeletionTimestamp.IsZero():
		return fmt.Errorf("tenant PersistentVolume %s is being deleted, will recreate", want.Name)
	}
	if !Equal(want, have) {
		if have.Spec.ClaimRef != nil && have.Spec.ClaimRef.UID != want.Spec.ClaimRef.UID {
			// Bound to an earlier claim of the same name: replace it.
			if err := remove(ctx, c, have); err != nil {
				return err
			}
			return fmt.Errorf("removed stale tenant PersistentVolume %s, will recreate", want.Name)
		}
		u := have.DeepCopy()
		u.Annotations = resources.CopyMap(u.Annotations)
		u.Annotations[conversion.AnnotationSuperName] = want.Annotations[conversion.AnnotationSuperName]
		u.Spec.Capacity, u.Spec.AccessModes, u.Spec.ClaimRef = want.Spec.Capacity, want.Spec.AccessModes, want.Spec.ClaimRef
		updated, err := pvs.Update(ctx, u, metav1.UpdateOptions{FieldManager: reconcile.FieldManager})
		if err != nil {
			return fmt.Errorf("failed to update tenant PersistentVolume %s: %w", want.Name, err)
		}
		have = updated
	}
	return setPhase(ctx, c, have, corev1.VolumeBound)
}

// Prune removes tenant PV pv if the syncer created it and its super PV no longer backs the
// claim it is bound to: the super PV is gone, released, or bound to something other than the
// super copy (same tenant UID) of the tenant claim in pv's claimRef. PVs the tenant created
// are never touched.
func Prune(ctx context.Context, env *resources.Env, c *tenant.Cluster, pv *corev1.PersistentVolume) error {
	if !IsSyncerVolume(pv) || !pv.DeletionTimestamp.IsZero() {
		return nil
	}
	if Backed(env, c, pv) {
		return nil
	}
	return remove(ctx, c, pv)
}

// Backed reports whether syncer-created tenant PV pv still mirrors a super PV bound to the
// super claim of the tenant claim its claimRef names: the syncer's super copy (same tenant UID
// and claim UID), or, for a generic ephemeral claim (IsEphemeral), the claim of the same name
// that the super cluster's ephemeral-volume controller made in the tenant's super namespace.
func Backed(env *resources.Env, c *tenant.Cluster, pv *corev1.PersistentVolume) bool {
	r := pv.Spec.ClaimRef
	if r == nil {
		return false
	}
	superPV, err := env.SuperVolumes.Core().V1().PersistentVolumes().Lister().Get(pv.Annotations[conversion.AnnotationSuperName])
	if err != nil {
		return false
	}
	superNS := resources.SuperNamespace(c, r.Namespace)
	sr := superPV.Spec.ClaimRef
	if sr == nil || sr.Namespace != superNS || sr.Name != r.Name ||
		superPV.Status.Phase == corev1.VolumeReleased || superPV.Status.Phase == corev1.VolumeFailed {
		return false
	}
	sc, err := env.SuperInformers.Core().V1().PersistentVolumeClaims().Lister().PersistentVolumeClaims(superNS).Get(r.Name)
	if err == nil {
		o, ok := conversion.OwnerOf(sc)
		return ok && o.TenantUID == c.UID && o.UID == string(r.UID) && sr.UID == sc.UID
	}
	tc, err := c.Informers.Core().V1().PersistentVolumeClaims().Lister().PersistentVolumeClaims(r.Namespace).Get(r.Name)
	return err == nil && tc.UID == r.UID && IsEphemeral(tc)
}

// IsEphemeral reports whether a claim was made for a Pod's generic ephemeral volume: its
// controller owner is a Pod (KEP-1698; the ephemeral-volume controller names it
// "<pod>-<volume>"). The super cluster's own ephemeral-volume controller makes the super
// claim for the super Pod, so such tenant claims are not synced down.
func IsEphemeral(claim *corev1.PersistentVolumeClaim) bool {
	ref := metav1.GetControllerOf(claim)
	return ref != nil && ref.Kind == "Pod" && ref.APIVersion == "v1"
}

// BoundToName returns the super PV bound to the super claim superNS/name (claimRef by
// namespace and name, not Released or Failed), or nil.
func BoundToName(env *resources.Env, superNS, name string) *corev1.PersistentVolume {
	objs, err := env.SuperVolumes.Core().V1().PersistentVolumes().Informer().GetIndexer().ByIndex(ClaimIndex, superNS+"/"+name)
	if err != nil {
		return nil
	}
	for _, o := range objs {
		if pv, ok := o.(*corev1.PersistentVolume); ok && pv.Status.Phase != corev1.VolumeReleased && pv.Status.Phase != corev1.VolumeFailed {
			return pv
		}
	}
	return nil
}

// ForClaim returns the syncer-created tenant PVs whose claimRef names tenant claim ns/name.
func ForClaim(c *tenant.Cluster, ns, name string) ([]*corev1.PersistentVolume, error) {
	objs, err := c.Informers.Core().V1().PersistentVolumes().Informer().GetIndexer().ByIndex(ClaimIndex, ns+"/"+name)
	if err != nil {
		return nil, err
	}
	var out []*corev1.PersistentVolume
	for _, o := range objs {
		if pv, ok := o.(*corev1.PersistentVolume); ok && IsSyncerVolume(pv) {
			out = append(out, pv)
		}
	}
	return out, nil
}

// remove deletes a syncer-created tenant PV: status Released first (the tenant's
// pv-protection controller keeps the finalizer of a Bound PV), then a delete with a UID
// precondition.
func remove(ctx context.Context, c *tenant.Cluster, pv *corev1.PersistentVolume) error {
	if err := setPhase(ctx, c, pv, corev1.VolumeReleased); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	uid := pv.UID
	err := c.Client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("failed to delete tenant PersistentVolume %s: %w", pv.Name, err)
	}
	return nil
}

// setPhase sets the tenant PV's status phase unless it has it already.
func setPhase(ctx context.Context, c *tenant.Cluster, pv *corev1.PersistentVolume, phase corev1.PersistentVolumePhase) error {
	if pv.Status.Phase == phase {
		return nil
	}
	u := pv.DeepCopy()
	u.Status.Phase, u.Status.Message, u.Status.Reason = phase, "", ""
	now := metav1.Now()
	u.Status.LastPhaseTransitionTime = &now
	if _, err := c.Client.CoreV1().PersistentVolumes().UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: reconcile.FieldManager}); err != nil {
		return fmt.Errorf("failed to set tenant PersistentVolume %s phase %s: %w", pv.Name, phase, err)
	}
	return nil
}
