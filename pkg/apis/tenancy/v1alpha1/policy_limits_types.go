package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// StoragePolicy is what tenant claims may ask of the super cluster's storage.
type StoragePolicy struct {
	// AllowDataSources allows claims with spec.dataSource or spec.dataSourceRef naming the
	// tenant's own PersistentVolumeClaims (rule storageDataSource). Built-in default: true.
	// Other data sources (snapshots, populators) are refused.
	// +optional
	AllowDataSources *bool `json:"allowDataSources,omitempty"`
	// AllowedStorageClassNames lists the super StorageClasses that tenant claims and generic
	// ephemeral volume templates may name besides the public ones (labelled
	// tenancy.vcsyncer.io/public=true, which every tenant gets a copy of) (rule
	// storageClass). A claim naming a super class that is neither public nor listed is
	// refused: it could bind an Available PersistentVolume the provider made in that class
	// for another tenant. Class "" and class names the super cluster does not have are not
	// refused (their claims bind only PersistentVolumes labelled for the tenant). Built-in
	// default: none (public classes only).
	// +optional
	AllowedStorageClassNames []string `json:"allowedStorageClassNames,omitempty"`
}

// LimitsPolicy bounds what one tenant puts into the super cluster.
type LimitsPolicy struct {
	// Quota is the spec.hard of the ResourceQuota the syncer keeps in every super namespace of
	// the tenant (name vc-syncer-quota). Built-in default: pods 1000, requests.cpu 64,
	// requests.memory 256Gi, limits.cpu 128, limits.memory 512Gi, services 200,
	// services.nodeports 0, services.loadbalancers 0, persistentvolumeclaims 200,
	// requests.storage 10Ti, secrets 2000, configmaps 2000. An empty map: no ResourceQuota (the
	// syncer deletes its own). Nothing is created in a super namespace until the super
	// cluster's quota controller has computed the quota's status; objects it has no room for are
	// refused (rule quota) and retried with backoff.
	// +optional
	Quota corev1.ResourceList `json:"quota,omitempty"`
	// LimitRange is the spec.limits of the LimitRange the syncer keeps in every super
	// namespace of the tenant (name vc-syncer-limits). Built-in default: containers get
	// requests cpu 100m, memory 128Mi and limits cpu 1, memory 1Gi when they set none. An
	// empty list: no LimitRange (the syncer deletes its own).
	// +optional
	LimitRange []corev1.LimitRangeItem `json:"limitRange,omitempty"`
	// MaxObjectBytes caps the size of one Secret or ConfigMap of the tenant, counted over the
	// whole object as the syncer holds it (its protobuf encoding without managedFields: keys,
	// values, labels, annotations and the rest of its metadata) (rule objectSize). An object
	// over it is neither copied to the super cluster nor kept in the syncer's caches (they hold
	// its name and version only). Built-in default: 512Ki.
	// +optional
	MaxObjectBytes *resource.Quantity `json:"maxObjectBytes,omitempty"`
	// MaxCachedBytes caps the bytes of the tenant's Secrets and ConfigMaps that the syncer holds
	// in its caches (the sum of their sizes as MaxObjectBytes counts them) (rule cachedBytes).
	// An object that would take the sum over it is kept out: the syncer's caches hold its name
	// and version only, it gets no super copy, and it is synced when deletions or a raised cap
	// make room. The super copies are copies of the objects held, so the syncer's memory for
	// the tenant's Secrets and ConfigMaps stays within about twice this. Lowering it never
	// drops objects already held. Built-in default: 32Mi.
	// +optional
	MaxCachedBytes *resource.Quantity `json:"maxCachedBytes,omitempty"`
	// MaxObjects caps the number of the tenant's objects the syncer syncs for each kind the
	// tenant creates (rule objectCount): objects beyond it get no super copy until others are
	// deleted. It bounds the syncer's work, super objects and checkpointed queues, not the
	// number of objects in its caches of the tenant (an informer caches every object, a
	// Secret or ConfigMap beyond MaxCachedBytes as a stub). Lowering it never drops objects
	// already synced. Built-in default: 20000.
	// +optional
	MaxObjects *int32 `json:"maxObjects,omitempty"`
}

// DisruptionBudgetPolicy is what a tenant PodDisruptionBudget may do to super-cluster drains.
// A tenant budget's super copy protects its Pods exactly as the tenant's budget does (an
// integer minAvailable equal to the tenant's status.desiredHealthy, which the super cluster's
// disruption controller can compute without owner references on the super Pods; never
// relaxed), so the super cluster never allows an eviction the tenant's budget would refuse.
// Its unhealthyPodEvictionPolicy is the tenant's, or AlwaysAllow when the tenant set none,
// and a second budget over the same Pods is refused.
type DisruptionBudgetPolicy struct {
	// AllowBlocking is deprecated and ignored. It used to let a budget that allows no
	// disruption at all be synced as such (without it, such a budget was synced allowing one
	// disruption, and a budget short of Pods was relaxed); every budget now protects its Pods
	// as in the tenant. Kept so that existing TenantPolicies stay valid.
	// +optional
	AllowBlocking *bool `json:"allowBlocking,omitempty"`
}
