package persistentvolumeclaim

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/persistentvolume"
	"github.com/vcsyncer/syncer/pkg/resources/storageclass"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// ReasonVolumeNotSynced is the reason of the Warning Event on a tenant claim that names a PV
// the tenant created itself.
const ReasonVolumeNotSynced = persistentvolume.ReasonVolumeNotSynced

func reconcileDownward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	tl := c.Informers.Core().V1().PersistentVolumeClaims().Lister()
	sl := env.SuperInformers.Core().V1().PersistentVolumeClaims().Lister()
	pvl := c.Informers.Core().V1().PersistentVolumes().Lister()
	superPVs := env.SuperVolumes.Core().V1().PersistentVolumes().Lister()

	t, err := tl.PersistentVolumeClaims(ns).Get(name)
	stub := err == nil && tenant.IsHeldOut(t) // refused by reconcile.Reconcile, nothing else is checked on it
	if err == nil && !stub && persistentvolume.IsEphemeral(t) {
		return nil // the super cluster's ephemeral-volume controller makes the super claim
	}
	if err == nil && !stub && t.DeletionTimestamp.IsZero() && t.Spec.VolumeName != "" {
		// A PV held out of the syncer's memory (a stub) may be the syncer's own: not refused.
		if pv, err := pvl.Get(t.Spec.VolumeName); err == nil && !persistentvolume.IsSyncerVolume(pv) && !tenant.IsHeldOut(pv) {
			return persistentvolume.RefuseClaim(ctx, env, c, t, pv)
		}
	}
	if err == nil && !stub && t.DeletionTimestamp.IsZero() {
		if _, err := sl.PersistentVolumeClaims(resources.SuperNamespace(c, ns)).Get(name); apierrors.IsNotFound(err) {
			// Data sources are checked when the super copy is made (they are immutable); a super
			// claim made before a policy change is kept: deleting it would delete its data.
			if d := policy.ClaimDataSources(c.Policy().Storage(), ns, &t.Spec); d != nil {
				admit.Deny(c, resources.KindPersistentVolumeClaim, t, d)
				return nil
			}
			// So is the class (immutable too): a claim may name public classes and those the
			// policy allows, or none the super cluster has.
			if d := storageclass.ClaimClassDenial(env, c.Policy().Storage(), "storageClassName", t.Annotations, &t.Spec); d != nil {
				admit.Deny(c, resources.KindPersistentVolumeClaim, t, d)
				return nil
			}
			admit.Admitted(c, resources.KindPersistentVolumeClaim, ns, name)
		}
	}
	return reconcile.Reconcile(ctx, env, c, ns, name, reconcile.Spec[*corev1.PersistentVolumeClaim]{
		Kind:   resources.KindPersistentVolumeClaim,
		Tenant: func(ns string) reconcile.Getter[*corev1.PersistentVolumeClaim] { return tl.PersistentVolumeClaims(ns) },
		Super:  func(ns string) reconcile.Getter[*corev1.PersistentVolumeClaim] { return sl.PersistentVolumeClaims(ns) },
		Client: func(ns string) reconcile.Writer[*corev1.PersistentVolumeClaim] {
			return env.Super.CoreV1().PersistentVolumeClaims(ns)
		},
		Desired: func(o *corev1.PersistentVolumeClaim, superNS string, existing *corev1.PersistentVolumeClaim, has bool) *corev1.PersistentVolumeClaim {
			if has {
				return Desired(c, o, superNS, existing, "", conversion.SuperClasses{})
			}
			var tenantPV, superPV *corev1.PersistentVolume
			if v := o.Spec.VolumeName; v != "" {
				if pv, err := pvl.Get(v); err == nil {
					tenantPV = pv
					if spv, err := superPVs.Get(pv.Annotations[conversion.AnnotationSuperName]); err == nil {
						superPV = spv
					}
				}
			}
			return Desired(c, o, superNS, nil, SuperVolume(c.Name, c.UID, superNS, o, tenantPV, superPV), storageclass.SuperClasses(env))
		},
		Equal: Equal,
	})
}

// SuperVolume returns the super PV name for the super copy (in superNS) of tenant claim t when
// it is created: "" when t presets no volumeName; the super PV that syncer-created tenant PV
// tenantPV mirrors when superPV (that super PV, nil if not cached) is already bound to the
// super copy; otherwise conversion.SuperVolumeName of the preset name. Claims naming a PV the
// tenant created are not synced at all (see the package documentation).
func SuperVolume(tenantName, tenantUID, superNS string, t *corev1.PersistentVolumeClaim, tenantPV, superPV *corev1.PersistentVolume) string {
	v := t.Spec.VolumeName
	if v == "" {
		return ""
	}
	if tenantPV != nil && persistentvolume.IsSyncerVolume(tenantPV) && superPV != nil &&
		superPV.Name == tenantPV.Annotations[conversion.AnnotationSuperName] && superPV.Spec.ClaimRef != nil &&
		superPV.Spec.ClaimRef.Namespace == superNS && superPV.Spec.ClaimRef.Name == t.Name {
		return superPV.Name
	}
	return conversion.SuperVolumeName(tenantName, tenantUID, v)
}

// Desired returns the super copy of tenant claim o in superNS. When existing (the current
// super claim) is nil, the tenant spec is copied with spec.volumeName set to volumeName (see
// SuperVolume) and converted by conversion.Confinement.Claim with classes (the super
// cluster's StorageClasses): its class, the one the PV controller reads from the tenant claim
// (the volume.beta.kubernetes.io/storage-class annotation before spec.storageClassName), or
// the super default for a claim without one, is in spec.storageClassName only, and a claim
// that binds existing PVs only is confined to PVs labelled for the tenant. Otherwise
// existing's spec is kept (claims are immutable apart from these) with the tenant's storage
// requests and volumeAttributesClassName, and classes is not read. The beta class annotation
// is never copied from the tenant; one that existing has (a super claim made before the
// class moved to the field) is kept as it is, so the class of an existing super claim never
// changes.
func Desired(c *tenant.Cluster, o *corev1.PersistentVolumeClaim, superNS string, existing *corev1.PersistentVolumeClaim, volumeName string, classes conversion.SuperClasses) *corev1.PersistentVolumeClaim {
	var spec corev1.PersistentVolumeClaimSpec
	if existing != nil {
		spec = *existing.Spec.DeepCopy()
		spec.Resources = *o.Spec.Resources.DeepCopy()
		spec.VolumeAttributesClassName = o.Spec.VolumeAttributesClassName
	} else {
		spec = *o.Spec.DeepCopy()
		spec.VolumeName = volumeName
		conversion.Confinement{TenantName: c.Name, TenantUID: c.UID, Namespace: o.Namespace, Classes: classes}.Claim(o.Annotations, &spec)
	}
	t := o.DeepCopy()
	t.Annotations = withoutBindingAnnotations(t.Annotations)
	delete(t.Annotations, conversion.AnnotationBetaStorageClass)
	if existing != nil {
		if v, ok := existing.Annotations[conversion.AnnotationBetaStorageClass]; ok {
			if t.Annotations == nil {
				t.Annotations = map[string]string{}
			}
			t.Annotations[conversion.AnnotationBetaStorageClass] = v
		}
	}
	return &corev1.PersistentVolumeClaim{ObjectMeta: resources.DesiredMeta(c, t, superNS, existing, conversion.AnnotationBetaStorageClass), Spec: spec}
}

// Equal reports whether the super claim has the desired metadata, storage requests and
// volumeAttributesClassName (the only mutable parts of a claim's spec).
func Equal(want, have *corev1.PersistentVolumeClaim) bool {
	return resources.MetaEqual(want, have) &&
		equality.Semantic.DeepEqual(want.Spec.Resources, have.Spec.Resources) &&
		equality.Semantic.DeepEqual(want.Spec.VolumeAttributesClassName, have.Spec.VolumeAttributesClassName)
}

// IsBindingAnnotation reports annotation keys that a cluster's PV controller, scheduler or
// provisioner writes on a claim to record binding and provisioning
// (conversion.IsClaimBindingAnnotation). They describe one cluster's binding and are never
// copied between tenant and super. The legacy class annotation
// volume.beta.kubernetes.io/storage-class is the user's request: Desired turns it into the
// super claim's spec.storageClassName.
func IsBindingAnnotation(k string) bool { return conversion.IsClaimBindingAnnotation(k) }

func withoutBindingAnnotations(m map[string]string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if IsBindingAnnotation(k) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}
