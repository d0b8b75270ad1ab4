package storageclass

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
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
		Lookup: func(name string) (bool, bool) {
			sc, err := lister.Get(name)
			return err == nil, err == nil && conversion.IsPublic(sc.Labels)
		},
	}
}

// ClaimClassDenial checks the StorageClass that a tenant claim (or claim template) with
// annotations and spec names (conversion.ClaimClass: the beta annotation before
// spec.storageClassName) against storage policy p with policy.ClaimStorageClass, reading the
// super classes from env (SuperClasses). what names the claim in the message. A claim that
// names no class is not checked: it gets the super cluster's default class, the provider's
// choice. It returns nil when the claim passes.
func ClaimClassDenial(env *resources.Env, p *tenancyv1alpha1.StoragePolicy, what string, annotations map[string]string, spec *corev1.PersistentVolumeClaimSpec) *policy.Denial {
	class, set := conversion.ClaimClass(annotations, spec)
	if !set || class == "" {
		return nil
	}
	var exists, public bool
	if sc := SuperClasses(env); sc.Lookup != nil {
		exists, public = sc.Lookup(class)
	}
	return policy.ClaimStorageClass(p, what, class, exists, public)
}

// PodClaimClassDenial checks the claim template of every generic ephemeral volume of a tenant
// Pod's spec with ClaimClassDenial. The Denial names the volume.
func PodClaimClassDenial(env *resources.Env, p *tenancyv1alpha1.StoragePolicy, spec *corev1.PodSpec) *policy.Denial {
	for _, v := range spec.Volumes {
		if v.Ephemeral == nil || v.Ephemeral.VolumeClaimTemplate == nil {
			continue
		}
		t := v.Ephemeral.VolumeClaimTemplate
		if d := ClaimClassDenial(env, p, "ephemeral volume "+v.Name+": storageClassName", t.Annotations, &t.Spec); d != nil {
			return d
		}
	}
	return nil
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
// name, UID, resourceVersion, creation time, provisioner, the default-class annotations and
// the public label, which are all SuperClasses reads, and drops the rest (other labels, other
// annotations, parameters, managed fields). Other objects are returned unchanged.
func TrimSuper(obj any) (any, error) {
	sc, ok := obj.(*storagev1.StorageClass)
	if !ok {
		return obj, nil
	}
	out := &storagev1.StorageClass{TypeMeta: sc.TypeMeta, Provisioner: sc.Provisioner}
	out.Name, out.UID, out.ResourceVersion, out.CreationTimestamp = sc.Name, sc.UID, sc.ResourceVersion, sc.CreationTimestamp
	out.DeletionTimestamp = sc.DeletionTimestamp
	out.Annotations = pick(sc.Annotations, AnnDefault, AnnDefaultBeta)
	out.Labels = pick(sc.Labels, conversion.LabelPublic)
	return out, nil
}
