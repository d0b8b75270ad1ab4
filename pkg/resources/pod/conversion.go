package pod

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/storageclass"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// systemPriorityClasses exist in every cluster. A tenant Pod naming one (CoreDNS does) runs in
// the super cluster without a priority class unless the super cluster made that class public.
var systemPriorityClasses = []string{"system-cluster-critical", "system-node-critical"}

// AnnotationSyncedImages on a super Pod is a hash (FNV-64a, hex) of the tenant Pod's container
// names and images at the last sync. The syncer pushes images only when the tenant's change,
// so an image rewritten in the super cluster (say, a webhook pinning digests) is not fought over.
const AnnotationSyncedImages = conversion.Domain + "/synced-images"

// AnnotationSyncedSchedulingGates on a super Pod lists (comma-separated) the scheduling gates
// the syncer copied from the tenant Pod, as the tenant Pod has them at the last sync; absent
// when it has none. Kubernetes lets gates be removed after creation, never added: when the
// tenant removes one, the syncer removes it from the super Pod too, and only the gates this
// record lists, so a gate a super-cluster admission added stays.
const AnnotationSyncedSchedulingGates = conversion.Domain + "/synced-scheduling-gates"

// Desired returns the super Pod for tenant Pod t in superNS. existing is the current super Pod
// (nil when creating): labels and annotations other super-cluster controllers added to it
// are kept (resources.DesiredMeta). The filtering rules of the tenant's Pod policy are applied
// (policy.FilterPod: tolerations, preferred node and pod affinity, the policy's node selector
// and tolerations, the default RuntimeClass, grace periods); the refusing rules are checked
// before (checkPolicy). Pod affinity terms are confined to the tenant's super namespaces
// (confineAffinity).
// Generic ephemeral volume templates are left as the tenant wrote them: the create path
// converts them (confineEphemeralClaims), which needs the super cluster's StorageClasses.
func Desired(c *tenant.Cluster, t *corev1.Pod, superNS string, existing *corev1.Pod) *corev1.Pod {
	p, _ := desired(c, t, superNS, existing)
	return p
}

// desired is Desired, and also returns what the policy filtered out of the super Pod (nil
// when nothing), to be reported with admit.Deny.
func desired(c *tenant.Cluster, t *corev1.Pod, superNS string, existing *corev1.Pod) (*corev1.Pod, *policy.Denial) {
	spec := t.Spec.DeepCopy()
	spec.NodeName = ""
	spec.Priority = nil
	spec.PreemptionPolicy = nil
	// The caller sets a public class back (priorityClassAllowed): the super cluster's
	// system-* classes would let one tenant preempt every other tenant's Pods.
	spec.PriorityClassName = ""
	spec.EphemeralContainers = nil
	if rc := spec.RuntimeClassName; rc != nil && !policy.RuntimeClassAllowed(c.Policy().Pods(), *rc) {
		// Only a class of the tenant's own gets here past the policy check (localRuntimeClass);
		// whatever the tenant changed since, a name the policy does not allow never reaches the
		// super Pod: the policy's default runtime (FilterPod) runs it.
		spec.RuntimeClassName = nil
	}
	// The super cluster's RuntimeClass admission sets the overhead of the super class; the
	// tenant's (from the tenant's class) would be refused when it differs.
	spec.Overhead = nil
	filtered := policy.FilterPod(c.Policy().Pods(), spec)
	confineAffinity(spec, c.Name, c.UID)
	meta := desiredMeta(c, t, superNS, existing)
	rewriteMetaFieldRefs(spec, t, &meta, existing) // before rewriteFieldRefs, which points at annotations too
	rewriteFieldRefs(spec)
	rewriteProjectedTokens(spec) // the create path adds the token annotations (tokenAnnotations)
	return &corev1.Pod{ObjectMeta: meta, Spec: *spec}, filtered
}

// checkPolicy returns the first refusal of tenant Pod spec (the full spec, as the tenant
// apiserver has it) under tenant c's Pod policy (policy.CheckPod), or nil.
func checkPolicy(env *resources.Env, c *tenant.Cluster, spec *corev1.PodSpec) *policy.Denial {
	return policy.CheckPod(c.Policy().Pods(), spec, nodeInPool(env, c))
}

// ReasonLocalRuntimeClass is the reason of the Normal Event on a tenant Pod synced without its
// RuntimeClass (localRuntimeClass).
const ReasonLocalRuntimeClass = "RuntimeClassNotInSuperCluster"

// runtimeClassRefused reports whether Pod spec names a RuntimeClass tenant c's Pod policy does
// not allow: refused, unless only the tenant has that class (localRuntimeClass, which asks
// both apiservers).
func runtimeClassRefused(c *tenant.Cluster, spec *corev1.PodSpec) bool {
	rc := spec.RuntimeClassName
	return rc != nil && *rc != "" && !policy.RuntimeClassAllowed(c.Policy().Pods(), *rc)
}

// localRuntimeClass reports whether Pod spec names a RuntimeClass only tenant c has: a name
// c's Pod policy neither allows (allowedRuntimeClassNames) nor sets as its default, of a class
// the tenant apiserver has and the super cluster does not (both read live: this runs only for
// such Pods, at creation). Its handler names a runtime of the tenant's imagined nodes, not one
// of the super Nodes': the caller checks the policy as if the Pod named no class, and the super
// Pod runs without one (desired drops every name the policy does not allow), so the policy's
// defaultRuntimeClassName, or the super cluster's default runtime, runs it. A name the super
// cluster has, or the tenant does not, stays the policy's to refuse. It returns a read's error
// other than NotFound.
func localRuntimeClass(ctx context.Context, env *resources.Env, c *tenant.Cluster, spec *corev1.PodSpec) (bool, error) {
	rc := spec.RuntimeClassName
	if !runtimeClassRefused(c, spec) || c.Client == nil {
		return false, nil
	}
	if _, err := c.Client.NodeV1().RuntimeClasses().Get(ctx, *rc, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("tenant RuntimeClass %s: %w", *rc, err)
	}
	_, err := env.Super.NodeV1().RuntimeClasses().Get(ctx, *rc, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("super RuntimeClass %s: %w", *rc, err)
	}
	return false, nil
}

// nodeInPool returns the test for "super Node name is in tenant c's node pool" that the
// placement rules of policy.CheckPod use for node names (matchFields metadata.name and
// kubernetes.io/hostname values). The Nodes it considers are the super Node called name and
// every super Node labelled kubernetes.io/hostname=name; there must be at least one, and
// every one must be in the pool: when the Pod policy has a node selector, the super Nodes it
// selects; otherwise the tenant's own vNodes, super Nodes the super scheduler already placed
// one of the tenant's Pods on (presetNodeAllowed, decided from super-side state only). The
// tenant's DaemonSet controller pins each of its Pods to a vNode with matchFields
// metadata.name, which this keeps working.
func nodeInPool(env *resources.Env, c *tenant.Cluster) func(string) bool {
	lister := env.SuperNodes.Core().V1().Nodes().Lister()
	var pool labels.Selector
	if sel := c.Policy().Pods().NodeSelector; len(sel) > 0 {
		pool = labels.SelectorFromSet(sel)
	}
	return func(name string) bool {
		var nodes []*corev1.Node
		if n, err := lister.Get(name); err == nil {
			nodes = append(nodes, n)
		}
		if byHost, err := lister.List(labels.SelectorFromSet(labels.Set{corev1.LabelHostname: name})); err == nil {
			for _, n := range byHost {
				if n.Name != name {
					nodes = append(nodes, n)
				}
			}
		}
		if len(nodes) == 0 {
			return false
		}
		for _, n := range nodes {
			if pool != nil && !pool.Matches(labels.Set(n.Labels)) || pool == nil && !presetNodeAllowed(env, c, n.Name) {
				return false
			}
		}
		return true
	}
}

// confineEphemeralClaims converts the claim templates of the generic ephemeral volumes of spec
// (a super Pod's spec, from a tenant Pod in tenant namespace ns), whose claims the super
// cluster's ephemeral-volume controller creates from the super Pod, as the tenant's own
// claims are converted (conversion.Confinement.Template with the super cluster's
// StorageClasses): the class the PV controller reads (beta annotation before the field, or
// the super default) in spec.storageClassName only, a static claim bound only to PVs labelled
// with the tenant's UID, a preset volumeName mapped into the tenant's part of the PV name
// space, and no labels or annotations in the syncer's domain or of claim binding. It runs when
// the super Pod is created (a Pod's volumes are immutable): Desired leaves the templates as
// the tenant wrote them. The templates' labels and annotations then go through the tenant's
// metadata allowlist as a claim's do (resources.AllowedMeta), since the super cluster's
// ephemeral-volume controller copies them onto the super claim where provisioners, backup
// tools and other super-cluster controllers read them. It returns the keys left out
// ("ephemeral volume <v>: annotation <key>", sorted per volume), for the Pod's metadataKey
// report (admit.ReportDroppedMeta).
func confineEphemeralClaims(env *resources.Env, c *tenant.Cluster, ns string, spec *corev1.PodSpec) []string {
	var cf *conversion.Confinement
	var dropped []string
	for i := range spec.Volumes {
		e := spec.Volumes[i].Ephemeral
		if e == nil || e.VolumeClaimTemplate == nil {
			continue
		}
		if cf == nil {
			cf = &conversion.Confinement{TenantName: c.Name, TenantUID: c.UID, Namespace: ns, Classes: storageclass.SuperClasses(env)}
		}
		t := e.VolumeClaimTemplate
		cf.Template(t)
		labels, ann := resources.AllowedMeta(c.Policy(), t.Labels, t.Annotations)
		var left []string
		for what, m := range map[string][2]map[string]string{"label": {t.Labels, labels}, "annotation": {t.Annotations, ann}} {
			for k := range m[0] {
				if _, ok := m[1][k]; !ok && !resources.IsSilentKey(k) {
					left = append(left, "ephemeral volume "+spec.Volumes[i].Name+": "+what+" "+k)
				}
			}
		}
		sort.Strings(left)
		dropped = append(dropped, left...)
		t.Labels, t.Annotations = labels, ann
	}
	return dropped
}

// superIdentityFieldPaths maps the downward-API field paths whose values differ between a
// tenant Pod and its super copy to field paths of the super Pod that hold the tenant's values
// (the ownership annotations written by conversion.Stamp). A kubelet resolves
// metadata.namespace to the super namespace and metadata.uid to the super Pod's UID; the
// rewritten references resolve to the tenant namespace and the tenant Pod's UID instead.
// metadata.name, spec.nodeName (vNodes carry the super Node's name), spec.serviceAccountName
// (ServiceAccounts keep their names) and the status fields are the same on both sides.
var superIdentityFieldPaths = map[string]string{
	"metadata.namespace": "metadata.annotations['" + conversion.AnnotationNamespace + "']",
	"metadata.uid":       "metadata.annotations['" + conversion.AnnotationUID + "']",
}

// rewriteFieldRefs rewrites, in spec, every downward-API field reference (container and init
// container env, downwardAPI volumes, projected downwardAPI sources) listed in
// superIdentityFieldPaths, so the containers see the tenant's identity.
func rewriteFieldRefs(spec *corev1.PodSpec) {
	eachFieldRef(spec, func(f *corev1.ObjectFieldSelector) {
		if p, ok := superIdentityFieldPaths[f.FieldPath]; ok {
			f.FieldPath = p
		}
	})
}

// desiredMeta returns the metadata of the super Pod of tenant Pod t: resources.DesiredMeta,
// AnnotationSyncedImages, existing's policy.AnnotationCharge and AnnotationSyncedSchedulingGates
// (the gates copied from t). existing may be nil.
func desiredMeta(c *tenant.Cluster, t *corev1.Pod, superNS string, existing *corev1.Pod) metav1.ObjectMeta {
	var ex metav1.Object
	if existing != nil {
		ex = existing
	}
	meta := resources.DesiredMeta(c, t, superNS, ex)
	meta.Annotations[AnnotationSyncedImages] = imagesHash(t)
	if existing != nil {
		// The charge taken in the tenant's budget when the super Pod was created stays as
		// it was: it is what is released when the Pod ends.
		if v, ok := existing.Annotations[policy.AnnotationCharge]; ok {
			meta.Annotations[policy.AnnotationCharge] = v
		}
	}
	delete(meta.Annotations, AnnotationSyncedSchedulingGates) // kept from existing by DesiredMeta
	if gates := gateNames(t.Spec.SchedulingGates); len(gates) > 0 {
		meta.Annotations[AnnotationSyncedSchedulingGates] = strings.Join(gates, ",")
	}
	return meta
}

func gateNames(gates []corev1.PodSchedulingGate) []string {
	out := make([]string, 0, len(gates))
	for _, g := range gates {
		out = append(out, g.Name)
	}
	return out
}

// removedGates returns the scheduling gates of super Pod have that the syncer copied from the
// tenant (AnnotationSyncedSchedulingGates on have) and that the tenant Pod no longer has (want
// is the desired super Pod): the gates to remove from have.
func removedGates(want, have *corev1.Pod) []string {
	synced := strings.Split(have.Annotations[AnnotationSyncedSchedulingGates], ",")
	var out []string
	for _, g := range have.Spec.SchedulingGates {
		if slices.Contains(synced, g.Name) && !slices.ContainsFunc(want.Spec.SchedulingGates, func(w corev1.PodSchedulingGate) bool { return w.Name == g.Name }) {
			out = append(out, g.Name)
		}
	}
	return out
}

// imagesHash returns the AnnotationSyncedImages value of tenant Pod t.
func imagesHash(t *corev1.Pod) string {
	h := fnv.New64a()
	for _, cs := range [][]corev1.Container{t.Spec.InitContainers, t.Spec.Containers} {
		for _, c := range cs {
			_, _ = h.Write([]byte(c.Name + "=" + c.Image + "\n"))
		}
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

// NeedsUpdate reports whether the super Pod differs from desired in the fields that can be
// changed on a live Pod and that the syncer owns: labels and annotations (desired keeps what
// others added, see resources.DesiredMeta), container images when the tenant changed them
// since the last sync (AnnotationSyncedImages is among the annotations), and scheduling gates
// the tenant removed (AnnotationSyncedSchedulingGates is among the annotations).
func NeedsUpdate(want, have *corev1.Pod) bool {
	return !resources.MapsEqual(want.Labels, have.Labels) || !resources.MapsEqual(want.Annotations, have.Annotations)
}

// UpdatePatch returns a strategic-merge patch that gives the super Pod have want's labels and
// annotations, want's container images when the tenant changed them since the last sync, and
// removes the scheduling gates the tenant removed since (removedGates), and nothing else. A patch, not an Update: the super Pod in
// the cache is trimmed (see TrimSuperPod), so it cannot be sent back whole; and a patch never
// overwrites fields other controllers set. Returns nil when there is nothing to change.
func UpdatePatch(want, have *corev1.Pod) ([]byte, error) {
	meta := map[string]any{}
	labels := map[string]any{}
	for k, v := range want.Labels {
		if have.Labels[k] != v {
			labels[k] = v
		}
	}
	for k := range have.Labels {
		if _, ok := want.Labels[k]; !ok {
			labels[k] = nil // the syncer owns a super Pod's labels
		}
	}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	ann := map[string]any{}
	for k, v := range want.Annotations {
		if hv, ok := have.Annotations[k]; !ok || hv != v {
			ann[k] = v
		}
	}
	for k := range have.Annotations {
		if _, ok := want.Annotations[k]; !ok {
			ann[k] = nil // removed in the tenant since the last sync
		}
	}
	if len(ann) > 0 {
		meta["annotations"] = ann
	}
	patch := map[string]any{}
	if len(meta) > 0 {
		patch["metadata"] = meta
	}
	spec := map[string]any{}
	imagesChanged := want.Annotations[AnnotationSyncedImages] != have.Annotations[AnnotationSyncedImages]
	for field, pair := range map[string][2][]corev1.Container{
		"containers": {want.Spec.Containers, have.Spec.Containers}, "initContainers": {want.Spec.InitContainers, have.Spec.InitContainers},
	} {
		var changed []map[string]any
		for _, w := range pair[0] {
			for _, h := range pair[1] {
				if imagesChanged && h.Name == w.Name && h.Image != w.Image {
					changed = append(changed, map[string]any{"name": w.Name, "image": w.Image})
				}
			}
		}
		if len(changed) > 0 {
			spec[field] = changed
		}
	}
	if gates := removedGates(want, have); len(gates) > 0 {
		del := make([]map[string]any, 0, len(gates))
		for _, g := range gates {
			del = append(del, map[string]any{"$patch": "delete", "name": g})
		}
		spec["schedulingGates"] = del
	}
	if len(spec) > 0 {
		patch["spec"] = spec
	}
	if len(patch) == 0 {
		return nil, nil
	}
	return json.Marshal(patch)
}

// TrimSuperPod is the super Pod informer's transform: it keeps only what the syncer reads
// from a super Pod — metadata (without managedFields and without the annotations that carry
// tenant tokens and the tenant CA, IsCredentialAnnotation), spec.nodeName, the names and images
// of containers and init containers, and the whole status, the repeating strings of its
// metadata shared (conversion.InternMeta) — in its compact form (podcache.Pod), so the super cache holds a
// fraction of each Pod (the VirtualCluster paper's 40 KB per Pod came mostly from two full
// copies).
func TrimSuperPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	p.ManagedFields = nil
	conversion.TrimPodSpec(p)
	for k := range p.Annotations {
		if IsCredentialAnnotation(k) {
			delete(p.Annotations, k)
		}
	}
	conversion.InternMeta(&p.ObjectMeta)
	return podcache.New(p)
}
