package storageclass

import (
	"sort"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
)

// SuperClasses returns what claim conversion needs of the super cluster's StorageClasses, read
// from the cache of all of them (env.SuperVolumes; public or not): the default class as the
// super cluster's DefaultStorageClass admission plugin picks it (DefaultClass) and whether a
// class provisions. With no cache (env.SuperVolumes nil) it returns the zero SuperClasses:
// no default, no class known to provision, so every claim is confined to the tenant's static
// PVs.
func SuperClasses(env *resources.Env) conversion.SuperClasses {
	if env == nil || env.SuperVolumes == nil {
		return conversion.SuperClasses{}
	}
	lister := env.SuperVolumes.Storage().V1().StorageClasses().Lister()
	all, _ := lister.List(labels.Everything()) // a cache read: never fails
	return conversion.SuperClasses{
		Default: DefaultClass(all),
		Provisions: func(name string) bool {
			sc, err := lister.Get(name)
			return err == nil && sc.Provisioner != conversion.NoProvisioner
		},
	}
}

// DefaultClass returns the class that the DefaultStorageClass admission plugin and the PV
// controller's retroactive assignment give a claim without a class (k8s.io/kubernetes
// pkg/volume/util GetDefaultClass): of the classes whose AnnDefault or AnnDefaultBeta
// annotation is "true", the newest by creation time, then the first by name. "" when there is
// none.
func DefaultClass(classes []*storagev1.StorageClass) string {
	var defaults []*storagev1.StorageClass
	for _, sc := range classes {
		if sc.Annotations[AnnDefault] == "true" || sc.Annotations[AnnDefaultBeta] == "true" {
			defaults = append(defaults, sc)
		}
	}
	if len(defaults) == 0 {
		return ""
	}
	sort.Slice(defaults, func(i, j int) bool {
		ti, tj := defaults[i].CreationTimestamp.UnixNano(), defaults[j].CreationTimestamp.UnixNano()
		if ti == tj {
			return defaults[i].Name < defaults[j].Name
		}
		return ti > tj
	})
	return defaults[0].Name
}

// TrimSuper is the transform of the super StorageClasses in env.SuperVolumes: it keeps the
// name, UID, resourceVersion, creation time, provisioner and the default-class annotations,
// which are all SuperClasses reads, and drops the rest (labels, other annotations,
// parameters, managed fields). Other objects are returned unchanged.
func TrimSuper(obj any) (any, error) {
	sc, ok := obj.(*storagev1.StorageClass)
	if !ok {
		return obj, nil
	}
	out := &storagev1.StorageClass{TypeMeta: sc.TypeMeta, Provisioner: sc.Provisioner}
	out.Name, out.UID, out.ResourceVersion, out.CreationTimestamp = sc.Name, sc.UID, sc.ResourceVersion, sc.CreationTimestamp
	out.DeletionTimestamp = sc.DeletionTimestamp
	out.Annotations = pick(sc.Annotations, AnnDefault, AnnDefaultBeta)
	return out, nil
}
