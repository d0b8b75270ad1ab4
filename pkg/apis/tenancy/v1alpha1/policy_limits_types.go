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
	// Quota is the tenant's budget in the super cluster, counted over all of its namespaces
	// together (not per namespace) and enforced by the syncer before anything is asked of an
	// apiserver for a new Pod (no TokenRequest, no super write). Pod keys are counted from the
	// super Pods' own requests and limits, which are the tenant's (the syncer adds none):
	// pods and count/pods count non-terminal Pods; requests.cpu and requests.memory (and the
	// bare cpu and memory) count requests, a container that requests nothing of cpu or memory
	// being charged DefaultCharge for it (counted, never written into the Pod); limits.cpu and
	// limits.memory count a container's limit, or its request (or charge) when it sets no
	// limit; requests.ephemeral-storage (ephemeral-storage), limits.ephemeral-storage,
	// requests.<extended resource> and hugepages count as Kubernetes' quota counts them (the
	// larger of the regular containers' sum and each init container, sidecars added,
	// pod-level resources where set). A Pod the budget has no room for waits (condition
	// PodScheduled=False with reason PolicyDenied, one Warning Event, rule tenantQuota) and is
	// synced as soon as room appears: a Pod of the tenant ends or is deleted, or the policy
	// changes. A RuntimeClass overhead the super cluster adds is not counted.
	//
	// The object counts and claims' storage are counted over all of the tenant's namespaces
	// too, from the super copies the syncer made, as the super cluster's quota counts them:
	// count/<resource> and the legacy names (services, services.nodeports,
	// services.loadbalancers, persistentvolumeclaims, secrets, configmaps) for the kinds the
	// syncer copies down (ConfigMaps, Secrets, ServiceAccounts, Services, claims, Endpoints,
	// EndpointSlices, and the opt-in Ingresses, NetworkPolicies and PodDisruptionBudgets);
	// requests.storage and <class>.storageclass.storage.k8s.io/requests.storage and
	// /persistentvolumeclaims from each claim's request and class. An object the budget has no
	// room for (or a claim resized, a Service retyped, beyond it) gets no super copy (its
	// super copy stays as it was) and waits, with a QuotaExceeded Warning Event (a Service
	// also condition tenancy.vcsyncer.io/Synced=False), until room appears.
	//
	// The syncer also keeps a ResourceQuota (name vc-syncer-quota) in every super namespace of
	// the tenant as a backstop, with only the keys of this map that never refuse a Pod the
	// budget admitted and never require a field the tenant did not set: object counts
	// (services, services.nodeports, services.loadbalancers, persistentvolumeclaims, secrets,
	// configmaps, count/* but count/pods) and claims' storage (requests.storage, per
	// StorageClass). Not requests.cpu, requests.memory or limits.*: a ResourceQuota with those
	// refuses every Pod with a container that does not set them. Not pods or count/pods: the
	// super apiserver would write the quota's status for every super Pod; the budget alone
	// counts Pods. It also counts what the budget does not: the
	// claims of generic ephemeral volumes, which the super cluster makes from super Pods
	// (objects it has no room for are refused, rule quota, and retried with backoff).
	//
	// Built-in default: pods 1000, requests.cpu 64, requests.memory 256Gi, limits.cpu 128,
	// limits.memory 512Gi, services 200, services.nodeports 0, services.loadbalancers 0,
	// persistentvolumeclaims 200, requests.storage 10Ti, secrets 2000, configmaps 2000. An
	// empty map: no budget and no ResourceQuota (the syncer deletes its own).
	// +optional
	Quota corev1.ResourceList `json:"quota,omitempty"`
	// DefaultCharge is what a container that requests nothing of a resource (and sets no limit
	// of it) is charged for it in the tenant's budget (Quota), per container: it is counted,
	// never written into the Pod, whose QoS class stays the tenant's. Built-in default: cpu
	// 100m, memory 128Mi.
	// +optional
	DefaultCharge corev1.ResourceList `json:"defaultCharge,omitempty"`
	// LimitRange is the spec.limits of a LimitRange the syncer keeps in every super namespace
	// of the tenant (name vc-syncer-limits). It changes tenant Pods (the super apiserver adds
	// its defaults to the super Pods, which then differ from the tenant's: other limits, QoS
	// class, OOM-kill point, and Pods the tenant's cluster admits refused); not recommended:
	// the budget (Quota, DefaultCharge) bounds the tenant without changing its Pods. The
	// tenant's own LimitRanges, in its own control plane, work as on any cluster. Built-in
	// default: none (the syncer deletes its own).
	// +optional
	LimitRange []corev1.LimitRangeItem `json:"limitRange,omitempty"`
	// MaxObjectBytes caps the size of one object of the tenant that the syncer caches and
	// copies down (Secrets, ConfigMaps, Services, ServiceAccounts, Endpoints, EndpointSlices,
	// PersistentVolumeClaims, PodDisruptionBudgets, Ingresses, NetworkPolicies, Namespaces and
	// Pods), counted over the whole object as the syncer holds it (its protobuf encoding
	// without managedFields: keys, values, labels, annotations and the rest of its metadata; a
	// Pod in the syncer's compact form, its spec trimmed) (rule objectSize). An object over it
	// is neither copied to the super cluster nor kept in the syncer's caches (they hold its
	// name and version only); a super copy made before it grew is left as it was, and nothing
	// is copied up into it. A Namespace over it is not synced, nor anything in it; a Pod over
	// it gets PodScheduled=False (reason PolicyDenied). Built-in default: 512Ki.
	// +optional
	MaxObjectBytes *resource.Quantity `json:"maxObjectBytes,omitempty"`
	// MaxCachedBytes caps the bytes of the tenant's objects of the kinds MaxObjectBytes lists,
	// all kinds counted together, that the syncer holds in its caches (the sum of their sizes
	// as MaxObjectBytes counts them) (rule cachedBytes). An object that would take the sum
	// over it is kept out as MaxObjectBytes keeps out an object over that cap, and it is synced
	// when deletions or a raised cap make room. The super copies are copies of the objects
	// held, so the syncer's memory for the tenant's objects stays within about twice this (a
	// few times for kinds of many small fields, such as Pods and Services, decoded). Lowering
	// it never drops objects already held. Built-in default: 64Mi, for an ordinary large
	// tenant with room to spare: 2000 Secrets and 2000 ConfigMaps of 4 KB (16 MB), 1000 Pods
	// in the compact form (about 4 KB each with metadata and status: 4 MB), 500 Services with
	// their Endpoints and EndpointSlices (about 1.5 KB each: 2.3 MB), and a few hundred
	// ServiceAccounts, claims and namespaces (under 1 MB) hold about 24 MB, 8 KB ConfigMaps and
	// Secrets about 40 MB.
	// +optional
	MaxCachedBytes *resource.Quantity `json:"maxCachedBytes,omitempty"`
	// MaxObjects caps the number of the tenant's objects the syncer syncs for each kind the
	// tenant creates (rule objectCount): objects beyond it get no super copy until others are
	// deleted. It bounds the syncer's work, super objects and checkpointed queues, not the
	// number of objects in its caches of the tenant (an informer caches every object, one
	// beyond MaxCachedBytes as a stub). Lowering it never drops objects
	// already synced. Built-in default: 20000.
	// +optional
	MaxObjects *int32 `json:"maxObjects,omitempty"`
	// MaxCachedObjects caps the number of the tenant's objects the syncer keeps in its caches
	// of the tenant: every object of the kinds MaxObjectBytes lists and of the cluster-scoped
	// kinds it watches in the tenant (Nodes, PersistentVolumes, StorageClasses,
	// PriorityClasses, RuntimeClasses), all kinds counted together, stubs included (rule
	// cachedObjects). MaxCachedBytes bounds the bytes of the objects held in full, but an
	// informer keeps an entry, a stub of about 200 bytes, for every object beyond it; this
	// bounds their number. When the tenant has more, the syncer stops watching it (its caches
	// are dropped and nothing of it is synced, its super objects are kept): the Tenant shows
	// Synced=False and WithinMemoryBound=False with reason TooManyObjects, a Warning Event and
	// vcsyncer_tenant_suspended 1; the syncer counts the tenant's objects again (one LIST
	// with limit=1 per kind, remainingItemCount) after 30 s, doubling up to 10 min, and
	// resumes once they are at most this many. Other tenants are not affected. Built-in
	// default: 40000, for an ordinary large tenant with room to spare: 2000 Secrets, 2000
	// ConfigMaps, 1000 Pods, 500 Services with their Endpoints and EndpointSlices, and a few
	// thousand ServiceAccounts, claims and namespaces are about 10000 objects; 40000 stubs
	// with the caches' own bookkeeping (about 1 KB each) take about 40 MB beside
	// MaxCachedBytes. Negative: no cap.
	// +optional
	MaxCachedObjects *int32 `json:"maxCachedObjects,omitempty"`
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
	// MaxBlockingSeconds bounds how long a tenant budget may hold a super-cluster drain. When
	// set (over 0), the super copy of a budget that has allowed no disruption (its
	// DisruptionAllowed condition False, since that condition's lastTransitionTime, as the
	// super cluster's disruption controller and eviction API set it) for longer than this
	// while one of its super Pods is on a cordoned (unschedulable) super Node is relaxed to
	// allow one disruption (minAvailable: its current healthy Pods less one), and the tenant
	// budget gets a Warning Event (rule disruptionBudget). It protects again as soon as that
	// disruption is used (the bound then starts over) or no Pod of it is on a cordoned Node:
	// a drain waits this long for each eviction the budget refuses. Unset or 0 (the default):
	// off, a budget holds a drain as long as it does in the tenant.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxBlockingSeconds *int32 `json:"maxBlockingSeconds,omitempty"`
}
