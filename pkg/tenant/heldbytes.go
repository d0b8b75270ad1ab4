package tenant

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/eventcache"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
)

// AnnotationHeldOut marks a stub in the tenant caches: a tenant object (of a kind in
// HeldKinds) that the syncer keeps out of its memory (HeldBytes), with its name, UID and
// resourceVersion only. Its value is "<rule> <bytes>": the rule that keeps it out (objectSize
// or cachedBytes) and the object's size. A stub is never copied to the super cluster (its
// reconcile reports the rule) and an existing super copy is left as it was.
const AnnotationHeldOut = conversion.Domain + "/held-out"

// HeldKey names one tenant object: its kind (one of HeldKinds), namespace and name.
type HeldKey struct{ Kind, Namespace, Name string }

// HeldOut is a tenant object kept out of the caches: its key, UID, resourceVersion, size and
// the rule that keeps it out.
type HeldOut struct {
	HeldKey
	UID             types.UID
	ResourceVersion string
	// Bytes is the object's encoded size (policy.ObjectBytes); Charge what it would count in
	// limits.maxCachedBytes (charge; 0: unknown, Bytes is used).
	Bytes, Charge int64
	Rule          policy.Rule
}

// charge is what o would count in limits.maxCachedBytes once cached in full.
func (o HeldOut) charge() int64 { return max(o.Bytes, o.Charge) }

// charge returns what the cached object obj counts in limits.maxCachedBytes: the larger of its
// encoded size (size, policy.ObjectBytes) and its estimated size on the heap
// (policy.HeapBytes), which for a small object is several times its encoded size; a Namespace
// also counts NamespaceSuperBytes.
func charge(obj any, size int64) int64 {
	c := max(size, policy.HeapBytes(obj))
	if _, ok := obj.(*corev1.Namespace); ok {
		c += NamespaceSuperBytes
	}
	return c
}

// NamespaceSuperBytes is what each tenant Namespace costs the syncer beside its cached object
// (bytes): its super namespace and ResourceQuota in the super caches, and its queue, tracker
// and remediation entries. A hostile review measured about 12 KB per Namespace in all (3000
// Namespaces: 35 MB of live heap) against about 1 KB for the cached Namespace itself.
const NamespaceSuperBytes = 10 << 10

// HeldBytes is the syncer's account of the bytes it holds in the tenant caches for one tenant's
// objects of every kind in HeldKinds (all counted together; a Pod as its compact cached
// form), and the bound on them (limits.maxObjectBytes per object,
// limits.maxCachedBytes in all). The tenant informers' transform (Admit) stores an object in
// full while it fits and a stub (AnnotationHeldOut) otherwise; Release forgets a deleted one.
// The checkpointed copies of the caches are copies of what the caches hold, stubs included, so
// they are bound too. It is safe for concurrent use. The zero value is ready.
type HeldBytes struct {
	mu    sync.Mutex
	held  map[HeldKey]heldEntry
	total int64
	out   map[HeldKey]HeldOut
	// over is set once a new object would have taken the entries past
	// limits.maxCachedObjects (Overflowed); it stays set: the Cluster is replaced.
	over bool
	// notify, when set, is called (without the lock) when objects start or stop being held
	// out (the Tenant's WithinMemoryBound condition follows).
	notify func()
}

// changed calls notify when the number of objects held out went from or to zero.
func (h *HeldBytes) changed(outBefore, outAfter int) {
	if h.notify != nil && (outBefore == 0) != (outAfter == 0) {
		h.notify()
	}
}

// Entries returns the number of the tenant's objects in the caches (HeldKinds), held in full
// or as stubs: what limits.maxCachedObjects bounds.
func (h *HeldBytes) Entries() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.held) + len(h.out)
}

// Overflowed reports whether an object arrived while the caches held limits.maxCachedObjects
// of the tenant's objects already: the tenant's informers must be stopped (the Tenant
// controller replaces the Cluster with one that waits until the tenant has few enough).
func (h *HeldBytes) Overflowed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.over
}

type heldEntry struct {
	uid   types.UID
	bytes int64
}

// heldKind returns the kind name of obj when HeldBytes bounds it: every kind the syncer
// caches from a tenant and syncs down (HeldKinds), a Pod in its cached form
// (podcache.Pod).
func heldKind(obj any) (string, bool) {
	switch obj.(type) {
	case *corev1.ConfigMap:
		return "ConfigMap", true
	case *corev1.Secret:
		return "Secret", true
	case *corev1.Service:
		return "Service", true
	case *corev1.ServiceAccount:
		return "ServiceAccount", true
	case *corev1.Endpoints:
		return "Endpoints", true
	case *discoveryv1.EndpointSlice:
		return "EndpointSlice", true
	case *corev1.PersistentVolumeClaim:
		return "PersistentVolumeClaim", true
	case *policyv1.PodDisruptionBudget:
		return "PodDisruptionBudget", true
	case *networkingv1.Ingress:
		return "Ingress", true
	case *networkingv1.NetworkPolicy:
		return "NetworkPolicy", true
	case *corev1.Namespace:
		return "Namespace", true
	case *podcache.Pod:
		return "Pod", true
	case *corev1.Node:
		return "Node", true
	case *corev1.PersistentVolume:
		return "PersistentVolume", true
	case *storagev1.StorageClass:
		return "StorageClass", true
	case *schedulingv1.PriorityClass:
		return "PriorityClass", true
	case *nodev1.RuntimeClass:
		return "RuntimeClass", true
	case *eventcache.Copy:
		return "Event", true
	}
	return "", false
}

// HeldKinds are the kinds (resources.Kind names) whose tenant objects HeldBytes bounds: the
// kinds the syncer caches from a tenant and copies down, and the cluster-scoped kinds it
// watches in every tenant to keep its own objects there (Nodes: its vNodes; PersistentVolumes,
// StorageClasses, PriorityClasses, RuntimeClasses: its upward copies), which a tenant can
// create too, and its Event copies (the tenant's Events labelled as the syncer's, cached as
// eventcache.Copy records of a bounded size).
var HeldKinds = []string{"ConfigMap", "Secret", "Service", "ServiceAccount", "Endpoints", "EndpointSlice",
	"PersistentVolumeClaim", "PodDisruptionBudget", "Ingress", "NetworkPolicy", "Namespace", "Pod",
	"Node", "PersistentVolume", "StorageClass", "PriorityClass", "RuntimeClass", "Event"}

// IsHeldKind reports whether HeldBytes bounds tenant objects of kind (HeldKinds).
func IsHeldKind(kind string) bool { return slices.Contains(HeldKinds, kind) }

// Admit is the bound in the tenant informers' transform: obj (already trimmed: no
// managedFields; a Pod in its cached form) is returned as is when it is not of a kind in
// HeldKinds, or when it fits: its
// size (policy.ObjectBytes) is at most l's maxObjectBytes and, with the bytes held for the
// tenant's other objects, at most l's maxCachedBytes; it is then counted as held. Otherwise a
// stub (metadata only, AnnotationHeldOut) is returned and recorded as held out. An object
// already held keeps its place when it changes (its new size replaces the old one), so
// lowering the caps never drops an object already held unless it grows. A stub coming back
// (from a checkpoint, or an update that did not change that) stays a stub. The transform runs
// for deletions too; Release settles them.
func (h *HeldBytes) Admit(l *tenancyv1alpha1.LimitsPolicy, obj any) any {
	kind, ok := heldKind(obj)
	if !ok {
		return obj
	}
	m := obj.(metav1.Object)
	key := HeldKey{Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName()}
	if h.admitEntry(l, key, m) {
		return stub(obj, policy.RuleCachedObjects, policy.ObjectBytes(obj))
	}
	if rule, size, ok := heldOutOf(m); ok && isStub(obj) {
		h.mu.Lock()
		before := len(h.out)
		h.dropHeld(key)
		h.recordOut(HeldOut{HeldKey: key, UID: m.GetUID(), ResourceVersion: m.GetResourceVersion(), Bytes: size, Rule: rule})
		after := len(h.out)
		h.mu.Unlock()
		h.changed(before, after)
		return obj
	}
	if ann := m.GetAnnotations(); ann != nil {
		if _, ok := ann[AnnotationHeldOut]; ok {
			delete(ann, AnnotationHeldOut) // the tenant's own: only the syncer's stubs carry it
			m.SetAnnotations(ann)
		}
	}
	size := policy.ObjectBytes(obj)
	var cost int64
	if mo := policy.MaxObjectBytes(l); mo < 0 || size <= mo {
		cost = charge(obj, size) // not walked for an object refused on its size alone
	}
	h.mu.Lock()
	before := len(h.out)
	defer func() {
		after := len(h.out)
		h.mu.Unlock()
		h.changed(before, after)
	}()
	prev := h.held[key]
	var rule policy.Rule
	switch {
	case policy.MaxObjectBytes(l) >= 0 && size > policy.MaxObjectBytes(l):
		rule = policy.RuleObjectSize
	case policy.MaxCachedBytes(l) >= 0 && h.total-prev.bytes+cost > policy.MaxCachedBytes(l) && cost > prev.bytes:
		rule = policy.RuleCachedBytes
	}
	if rule == "" {
		if h.held == nil {
			h.held = map[HeldKey]heldEntry{}
		}
		h.total += cost - prev.bytes
		h.held[key] = heldEntry{uid: m.GetUID(), bytes: cost}
		delete(h.out, key)
		return obj
	}
	h.dropHeld(key)
	h.recordOut(HeldOut{HeldKey: key, UID: m.GetUID(), ResourceVersion: m.GetResourceVersion(), Bytes: size, Charge: cost, Rule: rule})
	return stub(obj, rule, size)
}

// admitEntry applies limits.maxCachedObjects to the object m at key: it reports true (the
// object is then recorded as held out, rule cachedObjects, and the caller caches a stub) when
// m is a new entry and the caches hold the cap's number of the tenant's objects already; it
// then marks the HeldBytes overflowed and notifies (once). An object already in the caches,
// held or held out, keeps its entry.
func (h *HeldBytes) admitEntry(l *tenancyv1alpha1.LimitsPolicy, key HeldKey, m metav1.Object) bool {
	limit := policy.MaxCachedObjects(l)
	h.mu.Lock()
	_, held := h.held[key]
	o, out := h.out[key]
	if held || (out && o.Rule != policy.RuleCachedObjects) || limit < 0 || int64(len(h.held)+len(h.out)) < limit && !out {
		h.mu.Unlock()
		return false
	}
	first := !h.over
	h.over = true
	before := len(h.out)
	h.recordOut(HeldOut{HeldKey: key, UID: m.GetUID(), ResourceVersion: m.GetResourceVersion(), Rule: policy.RuleCachedObjects})
	after := len(h.out)
	h.mu.Unlock()
	h.changed(before, after)
	if first && h.notify != nil && (before == 0) == (after == 0) {
		h.notify()
	}
	return true
}

// dropHeld forgets key's held bytes. Call with the lock held.
func (h *HeldBytes) dropHeld(key HeldKey) {
	if e, ok := h.held[key]; ok {
		h.total -= e.bytes
		delete(h.held, key)
	}
}

// recordOut records o as held out. Call with the lock held.
func (h *HeldBytes) recordOut(o HeldOut) {
	if h.out == nil {
		h.out = map[HeldKey]HeldOut{}
	}
	h.out[o.HeldKey] = o
}

// Release forgets the deleted object at key with UID uid (held or held out), and reports
// whether bytes were freed (the caller may then readmit objects held out). An entry of
// another UID (the object was created again since) is kept.
func (h *HeldBytes) Release(key HeldKey, uid types.UID) bool {
	h.mu.Lock()
	before := len(h.out)
	defer func() {
		after := len(h.out)
		h.mu.Unlock()
		h.changed(before, after)
	}()
	if o, ok := h.out[key]; ok && o.UID == uid {
		delete(h.out, key)
	}
	if e, ok := h.held[key]; ok && e.uid == uid {
		h.total -= e.bytes
		delete(h.held, key)
		return e.bytes > 0
	}
	return false
}

// stillOut reports whether o is still recorded as held out at the same UID and
// resourceVersion (no later version of its object was admitted since).
func (h *HeldBytes) stillOut(o HeldOut) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	cur, ok := h.out[o.HeldKey]
	return ok && cur.UID == o.UID && cur.ResourceVersion == o.ResourceVersion
}

// Totals returns the bytes held and the number of objects held out.
func (h *HeldBytes) Totals() (held int64, out int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.total, len(h.out)
}

// Fits reports whether an object of size bytes fits l's caps beside what is held.
func (h *HeldBytes) Fits(l *tenancyv1alpha1.LimitsPolicy, size int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if mo := policy.MaxObjectBytes(l); mo >= 0 && size > mo {
		return false
	}
	mc := policy.MaxCachedBytes(l)
	return mc < 0 || h.total+size <= mc
}

// Fitting returns the objects held out that would fit l's caps now (in the order of their
// keys), at most max of them (max < 0: all).
func (h *HeldBytes) Fitting(l *tenancyv1alpha1.LimitsPolicy, maxN int) []HeldOut {
	h.mu.Lock()
	var all []HeldOut
	for _, o := range h.out {
		all = append(all, o)
	}
	total := h.total
	h.mu.Unlock()
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i].HeldKey, all[j].HeldKey
		return a.Kind+"/"+a.Namespace+"/"+a.Name < b.Kind+"/"+b.Namespace+"/"+b.Name
	})
	mo, mc := policy.MaxObjectBytes(l), policy.MaxCachedBytes(l)
	var out []HeldOut
	for _, o := range all {
		if maxN >= 0 && len(out) >= maxN {
			break
		}
		if (mo >= 0 && o.Bytes > mo) || (mc >= 0 && total+o.charge() > mc) {
			continue
		}
		total += o.charge()
		out = append(out, o)
	}
	return out
}

// HeldOutDenial returns the refusal of a stub in the tenant caches (an object kept out by
// HeldBytes: rule objectSize or cachedBytes, with the policy's remedy), nil for any
// other object. what names the object in the message.
func (h *HeldBytes) HeldOutDenial(l *tenancyv1alpha1.LimitsPolicy, obj metav1.Object, what string) *policy.Denial {
	rule, size, ok := heldOutOf(obj)
	if !ok || !isStub(obj) {
		return nil
	}
	if rule == policy.RuleObjectSize {
		if d := policy.CheckObjectBytes(l, what, size); d != nil {
			return d
		}
	}
	if rule == policy.RuleCachedObjects {
		return policy.CachedObjectsDenial(l, what, h.Entries())
	}
	charge := size
	if kind, ok := heldKind(obj); ok {
		h.mu.Lock()
		if o, ok := h.out[HeldKey{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}]; ok {
			charge = max(charge, o.Charge)
		}
		h.mu.Unlock()
	}
	held, _ := h.Totals()
	return policy.CachedBytesDenial(l, what, size, charge, held)
}

// heldOutOf parses the AnnotationHeldOut of m.
func heldOutOf(m metav1.Object) (policy.Rule, int64, bool) {
	v, ok := m.GetAnnotations()[AnnotationHeldOut]
	if !ok {
		return "", 0, false
	}
	rule, n, _ := strings.Cut(v, " ")
	size, _ := strconv.ParseInt(n, 10, 64)
	size = max(size, 0) // a tenant's forged value never lowers the bytes counted
	switch policy.Rule(rule) {
	case policy.RuleObjectSize, policy.RuleCachedBytes, policy.RuleCachedObjects:
		return policy.Rule(rule), size, true
	}
	return policy.RuleCachedBytes, size, true
}

// isStub reports whether obj has the shape of a stub (stub): no labels, one annotation, and
// nothing but metadata: a ConfigMap or Secret without data, an object of another kind whose
// spec and status are empty (a Pod: a spec without containers and an empty status; an
// EndpointSlice: no addressType, endpoints or ports; Endpoints: no subsets; a ServiceAccount:
// no secrets, image pull secrets or automount setting). The apiserver gives every Service,
// claim, Ingress, NetworkPolicy, Namespace and Pod a non-empty spec or status, so only
// ConfigMaps, Secrets, ServiceAccounts, Endpoints and PodDisruptionBudgets a tenant writes
// can look like one.
func isStub(obj any) bool {
	var m metav1.Object
	bare := false
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		m, bare = o, len(o.Data) == 0 && len(o.BinaryData) == 0 && o.Immutable == nil
	case *corev1.Secret:
		m, bare = o, len(o.Data) == 0 && len(o.StringData) == 0 && o.Immutable == nil
	case *corev1.Service:
		m, bare = o, equality.Semantic.DeepEqual(o.Spec, corev1.ServiceSpec{}) && equality.Semantic.DeepEqual(o.Status, corev1.ServiceStatus{})
	case *corev1.ServiceAccount:
		m, bare = o, len(o.Secrets) == 0 && len(o.ImagePullSecrets) == 0 && o.AutomountServiceAccountToken == nil
	case *corev1.Endpoints:
		m, bare = o, len(o.Subsets) == 0
	case *discoveryv1.EndpointSlice:
		m, bare = o, o.AddressType == "" && len(o.Endpoints) == 0 && len(o.Ports) == 0
	case *corev1.PersistentVolumeClaim:
		m, bare = o, equality.Semantic.DeepEqual(o.Spec, corev1.PersistentVolumeClaimSpec{}) && equality.Semantic.DeepEqual(o.Status, corev1.PersistentVolumeClaimStatus{})
	case *policyv1.PodDisruptionBudget:
		m, bare = o, equality.Semantic.DeepEqual(o.Spec, policyv1.PodDisruptionBudgetSpec{}) && equality.Semantic.DeepEqual(o.Status, policyv1.PodDisruptionBudgetStatus{})
	case *networkingv1.Ingress:
		m, bare = o, equality.Semantic.DeepEqual(o.Spec, networkingv1.IngressSpec{}) && equality.Semantic.DeepEqual(o.Status, networkingv1.IngressStatus{})
	case *networkingv1.NetworkPolicy:
		m, bare = o, equality.Semantic.DeepEqual(o.Spec, networkingv1.NetworkPolicySpec{})
	case *corev1.Namespace:
		m, bare = o, equality.Semantic.DeepEqual(o.Spec, corev1.NamespaceSpec{}) && equality.Semantic.DeepEqual(o.Status, corev1.NamespaceStatus{})
	case *podcache.Pod:
		m, bare = o, o.Bare()
	case *corev1.Pod: // a cached Pod decoded (podcache.From)
		m, bare = o, len(o.Spec.Containers) == 0 && len(o.Spec.InitContainers) == 0 && equality.Semantic.DeepEqual(o.Status, corev1.PodStatus{})
	case *corev1.Node:
		m, bare = o, equality.Semantic.DeepEqual(o.Spec, corev1.NodeSpec{}) && equality.Semantic.DeepEqual(o.Status, corev1.NodeStatus{})
	case *corev1.PersistentVolume:
		m, bare = o, equality.Semantic.DeepEqual(o.Spec, corev1.PersistentVolumeSpec{}) && equality.Semantic.DeepEqual(o.Status, corev1.PersistentVolumeStatus{})
	case *storagev1.StorageClass:
		m, bare = o, o.Provisioner == "" && len(o.Parameters) == 0 && o.ReclaimPolicy == nil && len(o.MountOptions) == 0 &&
			o.AllowVolumeExpansion == nil && o.VolumeBindingMode == nil && len(o.AllowedTopologies) == 0
	case *schedulingv1.PriorityClass:
		m, bare = o, o.Value == 0 && !o.GlobalDefault && o.Description == "" && o.PreemptionPolicy == nil
	case *nodev1.RuntimeClass:
		m, bare = o, o.Handler == "" && o.Overhead == nil && o.Scheduling == nil
	case *eventcache.Copy:
		m, bare = o, o.Digest == [len(o.Digest)]byte{}
	default:
		return false
	}
	if !bare || len(m.GetLabels()) != 0 || len(m.GetAnnotations()) != 1 || len(m.GetFinalizers()) != 0 ||
		len(m.GetOwnerReferences()) != 0 || m.GetGenerateName() != "" || len(m.GetManagedFields()) != 0 {
		return false
	}
	// A stub's one annotation is "<rule> <bytes>": a tenant object carrying a long value there is
	// not a stub (nothing else in a stub's metadata can be large: names are bounded by the
	// apiserver's validation).
	return len(m.GetAnnotations()[AnnotationHeldOut]) <= maxStubAnnotation
}

// maxStubAnnotation bounds the length of a stub's AnnotationHeldOut value ("cachedBytes
// 9223372036854775807" is 31 bytes).
const maxStubAnnotation = 48

// stub returns the stub of obj: an object of the same Go type with its name, namespace, UID,
// resourceVersion, generation and timestamps, AnnotationHeldOut, and nothing else but a
// Secret's type and a Pod's spec.nodeName (the vNode it is bound to, which the vNode
// bookkeeping reads).
func stub(obj any, rule policy.Rule, size int64) any {
	m := obj.(metav1.Object)
	meta := metav1.ObjectMeta{
		Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(), ResourceVersion: m.GetResourceVersion(),
		Generation: m.GetGeneration(), CreationTimestamp: m.GetCreationTimestamp(), DeletionTimestamp: m.GetDeletionTimestamp(),
		DeletionGracePeriodSeconds: m.GetDeletionGracePeriodSeconds(),
		Annotations:                map[string]string{AnnotationHeldOut: fmt.Sprintf("%s %d", rule, size)},
	}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return &corev1.ConfigMap{TypeMeta: o.TypeMeta, ObjectMeta: meta}
	case *corev1.Secret:
		return &corev1.Secret{TypeMeta: o.TypeMeta, ObjectMeta: meta, Type: o.Type}
	case *corev1.Service:
		return &corev1.Service{TypeMeta: o.TypeMeta, ObjectMeta: meta}
	case *corev1.ServiceAccount:
		return &corev1.ServiceAccount{TypeMeta: o.TypeMeta, ObjectMeta: meta}
	case *corev1.Endpoints:
		return &corev1.Endpoints{TypeMeta: o.TypeMeta, ObjectMeta: meta}
	case *discoveryv1.EndpointSlice:
		return &discoveryv1.EndpointSlice{TypeMeta: o.TypeMeta, ObjectMeta: meta}
	case *corev1.PersistentVolumeClaim:
		return &corev1.PersistentVolumeClaim{TypeMeta: o.TypeMeta, ObjectMeta: meta}
	case *policyv1.PodDisruptionBudget:
		return &policyv1.PodDisruptionBudget{TypeMeta: o.TypeMeta, ObjectMeta: meta}
	case *networkingv1.Ingress:
		return &networkingv1.Ingress{TypeMeta: o.TypeMeta, ObjectMeta: meta}
	case *networkingv1.NetworkPolicy:
		return &networkingv1.NetworkPolicy{TypeMeta: o.TypeMeta, ObjectMeta: meta}
	case *corev1.Namespace:
		return &corev1.Namespace{TypeMeta: o.TypeMeta, ObjectMeta: meta}
	case *podcache.Pod:
		nodeName := ""
		if p, err := o.Pod(); err == nil {
			nodeName = p.Spec.NodeName
		}
		return podcache.NewBare(meta, nodeName)
	case *corev1.Node:
		return &corev1.Node{TypeMeta: o.TypeMeta, ObjectMeta: meta}
	case *corev1.PersistentVolume:
		return &corev1.PersistentVolume{TypeMeta: o.TypeMeta, ObjectMeta: meta}
	case *storagev1.StorageClass:
		return &storagev1.StorageClass{TypeMeta: o.TypeMeta, ObjectMeta: meta}
	case *schedulingv1.PriorityClass:
		return &schedulingv1.PriorityClass{TypeMeta: o.TypeMeta, ObjectMeta: meta}
	case *nodev1.RuntimeClass:
		return &nodev1.RuntimeClass{TypeMeta: o.TypeMeta, ObjectMeta: meta}
	case *eventcache.Copy:
		return &eventcache.Copy{ObjectMeta: meta}
	}
	return obj
}

// IsHeldOut reports whether obj, read from a tenant cache, is a stub kept out by HeldBytes.
func IsHeldOut(obj any) bool {
	m, ok := obj.(metav1.Object)
	if !ok {
		return false
	}
	_, _, marked := heldOutOf(m)
	return marked && isStub(obj)
}
