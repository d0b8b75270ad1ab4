package persistentvolume

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// ClaimIndex is the name of the tenant and super PV cache indexes by claimRef "namespace/name".
const ClaimIndex = "vcsyncer-claim"

// Resource syncs PersistentVolumes (upward only).
var Resource = resources.Funcs{
	Name: resources.KindPersistentVolume,
	// Tenant: the tenant PV cache, indexed by claimRef (ClaimIndex).
	Tenant: func(c *tenant.Cluster) cache.SharedIndexInformer {
		inf := c.Informers.Core().V1().PersistentVolumes().Informer()
		// Errors mean the index exists already (a later call) or the informer has started.
		_ = inf.AddIndexers(cache.Indexers{ClaimIndex: claimKey})
		return inf
	},
	// Super: every super PV, trimmed (Env.SuperVolumes), indexed by claimRef (ClaimIndex).
	Super: func(env *resources.Env) cache.SharedIndexInformer {
		inf := env.SuperVolumes.Core().V1().PersistentVolumes().Informer()
		_ = inf.AddIndexers(cache.Indexers{ClaimIndex: claimKey})
		return inf
	},
	Down: reconcileDownward,
	// Up removes the tenant PV name if the syncer created it and its super PV no longer backs
	// the claim it is bound to (see Prune).
	Up: func(ctx context.Context, env *resources.Env, c *tenant.Cluster, _, name string) error {
		pv, err := c.Informers.Core().V1().PersistentVolumes().Lister().Get(name)
		if err != nil {
			return nil // gone, or not cached yet (its add event comes later)
		}
		return Prune(ctx, env, c, pv)
	},
}

var _ resources.Resource = Resource

// TrimSuper is the transform of Env.SuperVolumes: it keeps what binding and the tenant PV need
// (name, UID, capacity, access modes, volume mode, class, mount options, node affinity,
// claimRef, phase) and drops the volume source, labels, annotations and managed fields.
func TrimSuper(obj any) (any, error) {
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok {
		return obj, nil
	}
	pv.ManagedFields, pv.Labels, pv.Annotations = nil, nil, nil
	pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{}
	return pv, nil
}

// IsSyncerVolume reports whether a tenant PV was created by the syncer.
func IsSyncerVolume(pv *corev1.PersistentVolume) bool {
	return pv.Labels[conversion.LabelManagedBy] == conversion.ManagedByValue && pv.Annotations[conversion.AnnotationSuperName] != ""
}

func claimKey(obj any) ([]string, error) {
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok || pv.Spec.ClaimRef == nil {
		return nil, nil
	}
	return []string{pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name}, nil
}
