package resources

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Kind names a synced Kubernetes kind (its API kind name).
type Kind string

// The kinds synced by the walking skeleton.
const (
	KindNamespace      Kind = "Namespace"
	KindPod            Kind = "Pod"
	KindConfigMap      Kind = "ConfigMap"
	KindSecret         Kind = "Secret"
	KindServiceAccount Kind = "ServiceAccount"
	KindService        Kind = "Service"
)

// The storage kinds: PersistentVolumeClaims down, their status, bound PersistentVolumes and
// public StorageClasses up.
const (
	KindPersistentVolumeClaim Kind = "PersistentVolumeClaim"
	KindPersistentVolume      Kind = "PersistentVolume"
	KindStorageClass          Kind = "StorageClass"
)

// Further synced kinds. Ingress, NetworkPolicy and PodDisruptionBudget are
// opt-in (syncer.Options.OptInKinds); the others are synced by default.
const (
	KindEndpoints           Kind = "Endpoints"
	KindEndpointSlice       Kind = "EndpointSlice"
	KindIngress             Kind = "Ingress"
	KindNetworkPolicy       Kind = "NetworkPolicy"
	KindPodDisruptionBudget Kind = "PodDisruptionBudget"
	KindPriorityClass       Kind = "PriorityClass"
	KindRuntimeClass        Kind = "RuntimeClass"
	KindEvent               Kind = "Event"
)

// Request is the work item of both pipelines: one tenant object, named by its tenant
// namespace ("" for cluster-scoped kinds) and name.
type Request struct {
	Tenant    string
	Kind      Kind
	Namespace string
	Name      string
}

// String returns "tenant/Kind/namespace/name".
func (r Request) String() string {
	return fmt.Sprintf("%s/%s/%s/%s", r.Tenant, r.Kind, r.Namespace, r.Name)
}

// Env is what reconcilers share: the super cluster's client and its caches. Super caches hold
// only objects labelled conversion.LabelManagedBy (plus all Nodes).
type Env struct {
	Super          kubernetes.Interface
	SuperInformers informers.SharedInformerFactory
	// SuperNodes caches every super Node (for virtual nodes) and every super RuntimeClass (the
	// node.k8s.io group; those a tenant's policy allows are copied into it). Read only.
	SuperNodes informers.SharedInformerFactory
	// NamespaceLabels are put on every super namespace when the syncer creates it, e.g.
	// pod-security.kubernetes.io/enforce=baseline (--pod-security-enforce). Afterwards they
	// belong to the super cluster's admins: the syncer never changes or reverts them.
	NamespaceLabels map[string]string
	// TenantDNS points ClusterFirst Pods at their tenant's DNS Service (kube-system/kube-dns)
	// when the tenant has one (--tenant-dns).
	TenantDNS bool
	// ClusterDomain is the tenants' DNS cluster domain (--tenant-cluster-domain), used in Pod
	// search paths and host aliases. Empty means cluster.local.
	ClusterDomain string
	// SuperVolumes caches every super PersistentVolume, trimmed to what binding needs (no
	// volume source, labels or annotations): PVs are not the syncer's, so the managed-by
	// selector of SuperInformers cannot find them. It caches every super StorageClass too,
	// trimmed to name, creation time, provisioner and default-class annotations, for the
	// class decisions of claim conversion (storageclass.SuperClasses). Read only; the syncer
	// never writes PVs or StorageClasses.
	SuperVolumes informers.SharedInformerFactory
	// SuperPublic caches super objects labelled conversion.LabelPublic=true (StorageClasses,
	// PriorityClasses), which are copied up into every tenant. Read only.
	SuperPublic informers.SharedInformerFactory
	// VNodes manages the tenants' virtual Nodes (pkg/vnode); the Pod upward path asks it for
	// the vNode of a super Node before binding a tenant Pod there.
	VNodes VNodes
	// SuperEvents caches every super Event (trimmed); only those about objects the syncer
	// synced are copied up (pkg/resources/event).
	SuperEvents informers.SharedInformerFactory
	// SuperObject returns the cached super object of a synced kind at namespace/name (nil, false
	// when not cached or the kind is not synced). Set by the syncer.
	SuperObject func(kind Kind, namespace, name string) (metav1.Object, bool)
	// AdmitObject reports whether tenant object obj of kind may be synced under tenant c's
	// limits.maxObjects, admitting it when there is room and reporting a refusal otherwise
	// (idempotent). nil admits everything. Set by the syncer.
	AdmitObject func(c *tenant.Cluster, kind Kind, obj metav1.Object) bool
	// ReservedServiceIP reports whether ip lies in the Service range (Tenant
	// spec.serviceCIDRs) of a registered tenant other than c: an address the super cluster
	// must not give to c's Services, or c could answer that tenant's own names. nil reserves
	// nothing. Set by the syncer.
	ReservedServiceIP func(c *tenant.Cluster, ip netip.Addr) bool
	// PodAdmission paces the creation of super Pods (pkg/admission); nil admits every Pod.
	PodAdmission PodAdmission
	// PodEchoes is told of every super Pod the Pod reconciler creates, so that the super
	// watch's Add of it (the reconciler's own write coming back) does not queue the tenant Pod
	// downward again; nil: every Add does. Set by the syncer.
	PodEchoes PodEchoes
	// Budget counts the tenants' budgets (limits.quota over all of a tenant's namespaces,
	// budget.go); nil bounds nothing. Set by the syncer.
	Budget Budget
	// PodTokens holds the service-account tokens requested for new tenant Pods before a
	// downward worker takes them (pod.TokenPrefetcher, fed by the syncer's tenant Pod
	// handler); nil: the Pod reconciler requests a Pod's tokens itself.
	PodTokens PodTokens
	// Disruptions remembers why deleted super Pods went away (their DisruptionTarget
	// condition), filled by the syncer's super Pod handler; nil remembers nothing.
	Disruptions *Disruptions
}

// Budget is the tenants' budgets as the reconcilers see them: a tenant's use is the sum of the
// charges of its super objects (policy.PodCharge, recorded on each super Pod;
// policy.ObjectCharge for the other kinds) and of the reservations of objects being created
// or updated to cost more. An object is named by its kind and its super namespace and name.
type Budget interface {
	// Reserve takes need for tenant object namespace/name of kind (super copy
	// superNamespace/name) in tenant's budget hard (policy.BudgetHard) and reports ok; when
	// need does not fit, the object is parked (run again once room appears, not retried) and
	// over says where it does not fit. err is not nil while the budgets are not counted yet
	// (retry).
	Reserve(tenant string, kind Kind, namespace, name, superNamespace string, need, hard corev1.ResourceList) (ok bool, over []policy.BudgetExceeded, err error)
	// Fits reports whether Reserve would take need now, without reserving or parking.
	Fits(tenant string, kind Kind, superNamespace, name string, need, hard corev1.ResourceList) bool
	// Created reports that the reserved object's super copy was written.
	Created(tenant string, kind Kind, superNamespace, name string)
	// Release returns the reservation of an object whose super copy was not written.
	Release(tenant string, kind Kind, superNamespace, name string)
	// Leave forgets a parked object (it is gone).
	Leave(tenant string, kind Kind, superNamespace, name string)
}

// PodEchoes are the super Pods being created by the Pod reconciler, as it sees them.
type PodEchoes interface {
	// Expect announces that super Pod namespace/name is about to be created for the tenant Pod
	// whose UID is tenantUID; call it before the create.
	Expect(namespace, name, tenantUID string)
	// Forget withdraws Expect when the create failed.
	Forget(namespace, name string)
	// Answered records that the create of super Pod namespace/name succeeded, now: the time
	// until its Add reaches the syncer is then measured (metrics.CallSuperWatch).
	Answered(namespace, name string)
}

// PodTokens are the service-account tokens of new tenant Pods requested ahead of their
// downward reconcile, as the Pod reconciler sees them.
type PodTokens interface {
	// Take returns the tokens requested ahead for tenant's Pod namespace/name with UID uid,
	// in the order of its projected serviceAccountToken sources, and when they must be
	// refreshed; it waits for a round still in flight (until ctx ends) and forgets the round.
	// ok is false when none was requested, or the round failed (the caller requests the
	// tokens itself); err is ctx's when it ended first.
	Take(ctx context.Context, tenant, namespace, name string, uid types.UID) (tokens []string, refresh time.Time, ok bool, err error)
}

// PodAdmission is the super-Pod admission window as the Pod reconciler sees it.
type PodAdmission interface {
	// Admit reports whether tenant Pod namespace/name of tenant may create its super Pod
	// superNamespace/name now (ok), and whether this call took a slot for it (took: the caller
	// then reports Created or Abort; false when the Pod was counted already). When ok is false
	// the Pod waits: its request is run again once it is granted a slot, and the reconcile
	// returns without error.
	Admit(tenant, namespace, name, superNamespace string) (ok, took bool)
	// Created reports that an admitted Pod's super Pod was created (its bind latency starts).
	Created(superNamespace, name string)
	// Abort returns the slot of an admitted Pod whose super Pod was not created.
	Abort(superNamespace, name string)
}

// VNodes is the virtual-node manager as reconcilers see it (implemented by pkg/vnode).
type VNodes interface {
	// Ensure makes sure tenant c has the virtual Node of super Node superNode and records that
	// the tenant needs it. It returns an error when the super Node is unknown or the vNode
	// cannot be created.
	Ensure(ctx context.Context, c *tenant.Cluster, superNode string) error
}

// Resource is one synced kind.
type Resource interface {
	// Kind returns the kind's name.
	Kind() Kind
	// TenantInformer returns (registering on first call) the kind's informer on a tenant.
	TenantInformer(c *tenant.Cluster) cache.SharedIndexInformer
	// SuperInformer returns (registering on first call) the kind's informer on the super cluster.
	SuperInformer(env *Env) cache.SharedIndexInformer
	// Downward reconciles the super copy of one tenant object. Errors are retried with backoff.
	Downward(ctx context.Context, env *Env, c *tenant.Cluster, namespace, name string) error
	// Upward reconciles the tenant object's status from its super copy. Kinds without an
	// upward path return nil.
	Upward(ctx context.Context, env *Env, c *tenant.Cluster, namespace, name string) error
}

// ErrNotOwned is returned when a super object exists at the mapped name but belongs to
// someone else (another tenant or not the syncer). The syncer refuses to touch it.
var ErrNotOwned = errors.New("super object exists and is not owned by this tenant")

// SuperNamespace returns the super namespace of a tenant namespace.
func SuperNamespace(c *tenant.Cluster, ns string) string {
	return conversion.SuperNamespace(c.Name, c.UID, ns)
}

// DesiredNamespace returns the super Namespace for tenant namespace tns, given the current
// super namespace existing (nil when creating): mapped name; the tenant's labels under the
// syncer's keys (NamespaceLabels: super-cluster NetworkPolicies, webhooks and policy engines
// that select namespaces by plain keys such as name=kube-system or istio-injection=enabled do
// not act on them) and the tenant's annotations that the tenant's metadata allowlist passes
// (AllowedMeta, as for every kind: a tenant must not set policy on its super namespace, such
// as Pod Security levels or a node selector, and the built-in allowlist has no such key),
// merged with existing's by MergeSynced (keys the super cluster's admins set stay theirs and
// win over the tenant's); on creation env.NamespaceLabels (not recorded as the tenant's, so
// they belong to the admins afterwards); and the ownership stamps.
func DesiredNamespace(env *Env, c *tenant.Cluster, tns *corev1.Namespace, existing *corev1.Namespace) *corev1.Namespace {
	var exLabels, exAnn map[string]string
	if existing != nil {
		exLabels, exAnn = existing.Labels, existing.Annotations
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: SuperNamespace(c, tns.Name)}}
	_, ann := AllowedMeta(c.Policy(), nil, tns.Annotations)
	ns.Labels, ns.Annotations = MergeSynced(exLabels, exAnn, NamespaceLabels(c.Policy(), tns.Labels), ann)
	if existing == nil {
		for k, v := range env.NamespaceLabels {
			ns.Labels[k] = v
		}
	}
	conversion.Stamp(&ns.ObjectMeta, conversion.Owner{
		Tenant: c.Name, TenantUID: c.UID, Namespace: tns.Name, Name: tns.Name, UID: string(tns.UID),
	})
	return ns
}

// NamespaceLabels returns the labels of the super namespace of a tenant namespace labelled
// labels under policy pol (a new map, nil when empty): every tenant label k=v as
// conversion.SuperNamespaceLabelKey(k)=v (keys it cannot map are left out), and also as k=v
// when pol's metadata.allowedNamespaceLabelPrefixes passes k (policy.KeyAllowed). Silent keys
// (IsSilentKey) and keys in the mapped form (conversion.IsSuperNamespaceLabelKey, which only
// the mapping writes) are never copied. labels is not modified.
func NamespaceLabels(pol *policy.Effective, labels map[string]string) map[string]string {
	var out map[string]string
	set := func(k, v string) {
		if out == nil {
			out = make(map[string]string, 2*len(labels))
		}
		out[k] = v
	}
	for k, v := range labels {
		if IsSilentKey(k) {
			continue
		}
		if mk, ok := conversion.SuperNamespaceLabelKey(k); ok {
			set(mk, v)
		}
		if !conversion.IsSuperNamespaceLabelKey(k) && policy.KeyAllowed(pol.Metadata().AllowedNamespaceLabelPrefixes, k) {
			set(k, v)
		}
	}
	return out
}

// NamespaceSelectorKey returns the key that a term of a tenant namespaceSelector on the tenant
// namespace label key k selects on in the super cluster: the key NamespaceLabels puts the
// label under (conversion.SuperNamespaceLabelKey), or, for a key it cannot map,
// conversion.LabelUnmappedNamespaceKey, which no super namespace carries (so the term selects
// what a term on a key no namespace has selects); so does a silent key (IsSilentKey, such as
// tenancy.vcsyncer.io/tenant-uid), which NamespaceLabels never copies. kubernetes.io/metadata.name is not a label
// the tenant sets: callers map its values to super namespace names instead.
func NamespaceSelectorKey(k string) string {
	if IsSilentKey(k) {
		return conversion.LabelUnmappedNamespaceKey // never copied from a tenant namespace
	}
	if mk, ok := conversion.SuperNamespaceLabelKey(k); ok {
		return mk
	}
	return conversion.LabelUnmappedNamespaceKey
}

// SuperNamespaceSelector returns tenant namespace selector sel as it selects in the super
// cluster: values of kubernetes.io/metadata.name (the apiserver's name label) become the super
// namespace names of tenant tenantName (UID tenantUID), and every other key becomes
// NamespaceSelectorKey's (the key NamespaceLabels copies the tenant label to). It does not
// confine the result to the tenant: callers add the tenant's UID label requirement. nil for
// nil; sel is not modified.
func SuperNamespaceSelector(tenantName, tenantUID string, sel *metav1.LabelSelector) *metav1.LabelSelector {
	if sel == nil {
		return nil
	}
	superName := func(ns string) string { return conversion.SuperNamespace(tenantName, tenantUID, ns) }
	out := &metav1.LabelSelector{}
	if len(sel.MatchLabels) > 0 {
		out.MatchLabels = make(map[string]string, len(sel.MatchLabels))
	}
	for k, v := range sel.MatchLabels {
		if k == corev1.LabelMetadataName {
			out.MatchLabels[k] = superName(v)
			continue
		}
		out.MatchLabels[NamespaceSelectorKey(k)] = v
	}
	for _, e := range sel.MatchExpressions {
		e = *e.DeepCopy()
		if e.Key == corev1.LabelMetadataName {
			for i, v := range e.Values {
				e.Values[i] = superName(v)
			}
		} else {
			e.Key = NamespaceSelectorKey(e.Key)
		}
		out.MatchExpressions = append(out.MatchExpressions, e)
	}
	return out
}

// Owner returns the ownership record for a tenant object of tenant c.
func Owner(c *tenant.Cluster, obj metav1.Object) conversion.Owner {
	return conversion.Owner{
		Tenant: c.Name, TenantUID: c.UID, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: string(obj.GetUID()),
	}
}

// CopyMap returns a copy of m (nil for an empty map).
func CopyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// MergeAnnotations returns the annotations a super object should have: those already on the
// super object that the tenant never set (added by other super-cluster controllers; kept),
// overlaid with the tenant's annotations, overlaid with the ownership stamps.
func MergeAnnotations(super, desired map[string]string) map[string]string {
	out := CopyMap(super)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range desired {
		out[k] = v
	}
	return out
}

// SubsetEqual reports whether every key of want has the same value in have.
func SubsetEqual(want, have map[string]string) bool {
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			return false
		}
	}
	return true
}

// MapsEqual reports whether two string maps hold the same entries (nil equals empty).
func MapsEqual(a, b map[string]string) bool {
	return len(a) == len(b) && SubsetEqual(a, b)
}
