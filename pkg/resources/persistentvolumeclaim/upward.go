package persistentvolumeclaim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/persistentvolume"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Annotations the Kubernetes PV controller writes on a claim it binds
// (pkg/controller/volume/persistentvolume, storagehelpers.AnnBindCompleted and
// AnnBoundByController); the syncer writes them the same way when it binds a tenant claim.
const (
	AnnBindCompleted     = "pv.kubernetes.io/bind-completed"
	AnnBoundByController = "pv.kubernetes.io/bound-by-controller"
)

// ReasonVolumeConflict is the reason of the Warning Event on a tenant claim whose tenant PV
// name is taken by a PV the tenant created.
const ReasonVolumeConflict = "VolumeConflict"

func reconcileUpward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	// Tenant PVs of this claim whose super PV went away, was released or rebound.
	pvs, err := persistentvolume.ForClaim(c, ns, name)
	if err != nil {
		return err
	}
	var errs []error
	for _, pv := range pvs {
		errs = append(errs, persistentvolume.Prune(ctx, env, c, pv))
	}
	if err := kerrors.NewAggregate(errs); err != nil {
		return err
	}

	t, err := c.Informers.Core().V1().PersistentVolumeClaims().Lister().PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if tenant.IsHeldOut(t) {
		return nil // a stub: nothing is written into the tenant claim from it
	}
	if persistentvolume.IsEphemeral(t) {
		return reconcileEphemeral(ctx, env, c, t)
	}
	s, err := env.SuperInformers.Core().V1().PersistentVolumeClaims().Lister().PersistentVolumeClaims(resources.SuperNamespace(c, ns)).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if o, ok := conversion.OwnerOf(s); !ok || o.TenantUID != c.UID || o.UID != string(t.UID) || !t.DeletionTimestamp.IsZero() {
		return nil
	}

	bound := false
	if s.Spec.VolumeName != "" {
		superPV, err := env.SuperVolumes.Core().V1().PersistentVolumes().Lister().Get(s.Spec.VolumeName)
		if err == nil && persistentvolume.BoundTo(superPV, s) {
			if t, err = bind(ctx, c, t, superPV); err != nil || t == nil {
				return err
			}
			bound = true
		}
	}
	want := DesiredStatus(t, s, bound)
	if equality.Semantic.DeepEqual(want, &t.Status) {
		return nil
	}
	u := t.DeepCopy()
	u.Status = *want
	if _, err := c.Client.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: reconcile.FieldManager}); err != nil {
		return fmt.Errorf("failed to update tenant PersistentVolumeClaim %s/%s status: %w", ns, name, err)
	}
	return nil
}

// reconcileEphemeral binds generic ephemeral tenant claim t once the super PV of the super
// claim of the same name (made by the super cluster's ephemeral-volume controller for the
// super Pod, which must be the syncer's copy of t's Pod) is bound, and sets its status as the
// PV controller would (phase Bound, the PV's capacity and access modes). The super claim is
// not the syncer's, so it is neither cached nor read.
func reconcileEphemeral(ctx context.Context, env *resources.Env, c *tenant.Cluster, t *corev1.PersistentVolumeClaim) error {
	if !t.DeletionTimestamp.IsZero() {
		return nil
	}
	superNS := resources.SuperNamespace(c, t.Namespace)
	owner := metav1.GetControllerOf(t)
	sp, err := podcache.ListerOf(env.SuperInformers.Core().V1().Pods().Informer()).Pods(superNS).Get(owner.Name)
	if err != nil {
		return nil // the super Pod comes first; its claim follows
	}
	if o, ok := conversion.OwnerOf(sp); !ok || o.TenantUID != c.UID || o.UID != string(owner.UID) {
		return nil
	}
	superPV := persistentvolume.BoundToName(env, superNS, t.Name)
	if superPV == nil || superPV.Status.Phase != corev1.VolumeBound {
		return nil
	}
	if t, err = bind(ctx, c, t, superPV); err != nil || t == nil {
		return err
	}
	want := t.Status.DeepCopy()
	want.Phase = corev1.ClaimBound
	want.Capacity = resources.CopyResourceList(superPV.Spec.Capacity)
	want.AccessModes = superPV.Spec.AccessModes
	if equality.Semantic.DeepEqual(want, &t.Status) {
		return nil
	}
	u := t.DeepCopy()
	u.Status = *want
	if _, err := c.Client.CoreV1().PersistentVolumeClaims(t.Namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: reconcile.FieldManager}); err != nil {
		return fmt.Errorf("failed to update tenant PersistentVolumeClaim %s/%s status: %w", t.Namespace, t.Name, err)
	}
	return nil
}

// bind makes sure the tenant has the PV for super PV superPV and that tenant claim t names it.
// It returns the claim as it is now, or nil (and no error) when the tenant PV's name is taken
// by a PV the tenant created (a VolumeConflict Warning Event is recorded).
func bind(ctx context.Context, c *tenant.Cluster, t *corev1.PersistentVolumeClaim, superPV *corev1.PersistentVolume) (*corev1.PersistentVolumeClaim, error) {
	pvName := persistentvolume.TenantName(c.Name, c.UID, t, superPV.Name)
	err := persistentvolume.Ensure(ctx, c, persistentvolume.Desired(pvName, superPV, t))
	if errors.Is(err, persistentvolume.ErrConflict) {
		c.Recorder.Eventf(t, corev1.EventTypeWarning, ReasonVolumeConflict,
			"the claim is bound to super PersistentVolume %s, but the tenant's own PersistentVolume %s has the name its tenant copy needs; not binding", superPV.Name, pvName)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if t.Spec.VolumeName != "" && t.Annotations[AnnBindCompleted] != "" {
		return t, nil
	}
	ann := map[string]string{AnnBindCompleted: "yes"}
	if t.Spec.VolumeName == "" {
		ann[AnnBoundByController] = "yes"
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": t.ResourceVersion, "annotations": ann},
		"spec":     map[string]any{"volumeName": pvName},
	})
	if err != nil {
		return nil, err
	}
	bound, err := c.Client.CoreV1().PersistentVolumeClaims(t.Namespace).Patch(ctx, t.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: reconcile.FieldManager})
	if err != nil {
		return nil, fmt.Errorf("failed to bind tenant PersistentVolumeClaim %s/%s to PersistentVolume %s: %w", t.Namespace, t.Name, pvName, err)
	}
	return bound, nil
}

// DesiredStatus returns the tenant claim status for tenant claim t given its super claim s:
// the super status (phase, capacity, access modes, conditions, allocated resources, volume
// attributes class state). Phase Bound is only copied once the tenant PV exists (bound) and t
// names it (spec.volumeName), so a tenant never sees a Bound claim without its volume.
func DesiredStatus(t, s *corev1.PersistentVolumeClaim, bound bool) *corev1.PersistentVolumeClaimStatus {
	want := s.Status.DeepCopy()
	if want.Phase == corev1.ClaimBound && (!bound || t.Spec.VolumeName == "") {
		want.Phase = corev1.ClaimPending
		want.Capacity, want.AccessModes = nil, nil
	}
	return want
}
