package persistentvolume

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	kerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// ReasonVolumeNotSynced is the reason of the Warning Event on a tenant claim that names a PV
// the tenant created itself.
const ReasonVolumeNotSynced = "VolumeNotSynced"

// reconcileDownward is the kind's downward reconciler. PersistentVolumes are never synced
// down; for a PV the tenant created, every tenant claim naming it is refused (see
// RefuseClaim), also when the claim was synced before the PV appeared.
func reconcileDownward(ctx context.Context, env *resources.Env, c *tenant.Cluster, _, name string) error {
	pv, err := c.Informers.Core().V1().PersistentVolumes().Lister().Get(name)
	if err != nil || IsSyncerVolume(pv) || tenant.IsHeldOut(pv) {
		return nil // a stub (held out of the syncer's memory) may be the syncer's own PV
	}
	claims, err := c.Informers.Core().V1().PersistentVolumeClaims().Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	var errs []error
	for _, cl := range claims {
		if cl.Spec.VolumeName == name && cl.DeletionTimestamp.IsZero() {
			errs = append(errs, RefuseClaim(ctx, env, c, cl, pv))
		}
	}
	return kerrors.NewAggregate(errs)
}

// RefuseClaim handles tenant claim claim that names pv, a PV the tenant created: it records a
// VolumeNotSynced Warning Event on the claim and deletes the claim's super copy if one exists
// and is unbound (made before the tenant PV appeared). A bound super copy is kept: the data
// on its volume is not thrown away because the tenant later created a PV of that name.
func RefuseClaim(ctx context.Context, env *resources.Env, c *tenant.Cluster, claim *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) error {
	c.Recorder.Eventf(claim, corev1.EventTypeWarning, ReasonVolumeNotSynced,
		"PersistentVolume %s was created in the tenant; tenant PersistentVolumes are not synced to the super cluster, so this claim cannot be served", pv.Name)
	superNS := resources.SuperNamespace(c, claim.Namespace)
	s, err := env.SuperInformers.Core().V1().PersistentVolumeClaims().Lister().PersistentVolumeClaims(superNS).Get(claim.Name)
	if err != nil || !conversion.OwnedByTenant(s, c.UID) || s.Spec.VolumeName != "" && s.Status.Phase == corev1.ClaimBound {
		return nil
	}
	return reconcile.DeleteSuper(ctx, env.Super.CoreV1().PersistentVolumeClaims(superNS), s)
}
