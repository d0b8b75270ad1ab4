package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// Projected volume sources a tenant Pod may use. The service-account token source is not
// passed through: the Pod package replaces it with the tenant's own token (a Secret source).
// podCertificate and clusterTrustBundle are credential sources (RuleCredentialSource); any
// source a newer Kubernetes adds is refused (RuleVolumeType) until this list names it.
var allowedProjectedSources = []string{"configMap", "downwardAPI", "secret", "serviceAccountToken"}

// credentialProjectedSources are projected sources that the super cluster's kubelet resolves
// against the super cluster's own signers (podCertificate, KEP-4317) and trust bundles
// (clusterTrustBundle, KEP-3257), for the super Pod's identity. A tenant Pod never gets them:
// what the kubelet would hand it is not the tenant's (certificates issued by, and bundles of,
// the shared super cluster). Translating them to tenant-side equivalents is not implemented.
var credentialProjectedSources = []string{"clusterTrustBundle", "podCertificate"}

// systemPriorityClassPrefix is the prefix Kubernetes reserves for its built-in priority
// classes (system-cluster-critical, system-node-critical; scheduling/v1 validation).
const systemPriorityClassPrefix = "system-"

// CheckPod returns the first refusal of the Pod spec under the Pod policy p, or nil when the
// Pod may be synced. The rules, in order:
//
//   - RuleVolumeType: a volume whose source (the set field of VolumeSource, by its JSON name:
//     nfs, hostPath, ...) is not in p.AllowedVolumeTypes, or a projected volume with a source
//     kind the syncer does not know. Sources are found by reflection, so a source a newer
//     Kubernetes adds is refused until an admin lists it.
//   - RuleCSIDriver: an inline csi volume whose driver is not in p.AllowedCSIDrivers.
//   - RuleCredentialSource: a projected podCertificate or clusterTrustBundle source, always
//     (see credentialProjectedSources); no policy field allows them.
//   - RuleProbeHost: a liveness, readiness or startup probe or a postStart or preStop hook of
//     a container or init container whose httpGet or tcpSocket names a host, always
//     (checkProbeHosts); no policy field allows it.
//   - RuleServiceAccountTokens: more projected serviceAccountToken sources, over all the Pod's
//     projected volumes, than p.MaxServiceAccountTokens (each is one TokenRequest to the
//     tenant apiserver per refresh).
//   - RuleNodePlacement: a nodeSelector key, or a key of a required node affinity
//     matchExpression, that is neither in p.AllowedNodeLabelKeys nor a key of p.NodeSelector
//     (which overrides it); a kubernetes.io/hostname selector or expression, or a matchFields
//     metadata.name requirement, that does not name (operator In) only Nodes for which inPool
//     is true. inPool(name) reports whether the super Node called name (or labelled
//     kubernetes.io/hostname=name) is in the tenant's node pool; nil means none is.
//   - RuleSchedulingRequirements: more scheduling requirements (SchedulingRequirements: pod
//     affinity and anti-affinity terms, topology spread constraints, node affinity terms and
//     their selectors' entries) than p.MaxSchedulingRequirements.
//   - RulePodAffinity: a required pod affinity or anti-affinity term whose topology key
//     TopologyKeyAllowed refuses (kubernetes.io/hostname, p.AllowedNodeLabelKeys and the keys
//     of p.NodeSelector are allowed).
//   - RuleTopologySpread: a DoNotSchedule topology spread constraint whose topology key
//     TopologyKeyAllowed refuses.
//   - RuleRuntimeClass: runtimeClassName not in p.AllowedRuntimeClassNames and not
//     p.DefaultRuntimeClassName (an unset name is given the default: allowed).
//   - RuleSchedulerName: an explicit schedulerName not in p.AllowedSchedulerNames (unset means
//     the super cluster's default scheduler: allowed).
//   - RulePriorityClass: a priorityClassName not in p.AllowedPriorityClassNames, when that is
//     non-nil. The built-in system-* classes are not refused here: the super Pod drops them
//     unless the super cluster made them public (and the list, when set, names them).
//
// Tolerations, preferred node and pod affinity, ScheduleAnyway spread constraints and grace
// periods are not refused but filtered (FilterPod). p must be
// a resolved policy (every field set); spec is not modified.
func CheckPod(p *tenancyv1alpha1.PodPolicy, spec *corev1.PodSpec, inPool func(nodeName string) bool) *Denial {
	if inPool == nil {
		inPool = func(string) bool { return false }
	}
	for i := range spec.Volumes {
		if d := checkVolume(p, &spec.Volumes[i]); d != nil {
			return d
		}
	}
	if d := checkProbeHosts(spec); d != nil {
		return d
	}
	if n := ServiceAccountTokenSources(spec); p.MaxServiceAccountTokens != nil && n > int(*p.MaxServiceAccountTokens) {
		return Deny(RuleServiceAccountTokens, "the Pod has %d projected serviceAccountToken sources; allowed: at most %d; a TenantPolicy's pods.maxServiceAccountTokens allows more",
			n, *p.MaxServiceAccountTokens)
	}
	if d := checkPlacement(p, spec, inPool); d != nil {
		return d
	}
	if d := checkScheduling(p, spec); d != nil {
		return d
	}
	if rc := spec.RuntimeClassName; rc != nil && *rc != "" && !RuntimeClassAllowed(p, *rc) {
		return Deny(RuleRuntimeClass, "runtimeClassName %q is not allowed; allowed: %s; a TenantPolicy's pods.allowedRuntimeClassNames allows more",
			*rc, list(append(slices.Clone(p.AllowedRuntimeClassNames), deref(p.DefaultRuntimeClassName))))
	}
	if s := spec.SchedulerName; s != "" && !slices.Contains(p.AllowedSchedulerNames, s) {
		return Deny(RuleSchedulerName, "schedulerName %q is not allowed; allowed: %s; a TenantPolicy's pods.allowedSchedulerNames allows more",
			s, list(p.AllowedSchedulerNames))
	}
	if pc := spec.PriorityClassName; pc != "" && !strings.HasPrefix(pc, systemPriorityClassPrefix) && !PriorityClassAllowed(p, pc) {
		return Deny(RulePriorityClass, "priorityClassName %q is not allowed; allowed: %s; a TenantPolicy's pods.allowedPriorityClassNames allows more",
			pc, list(p.AllowedPriorityClassNames))
	}
	return nil
}

// ServiceAccountTokenSources returns the number of projected serviceAccountToken sources in
// spec, over all its projected volumes.
func ServiceAccountTokenSources(spec *corev1.PodSpec) int {
	n := 0
	for _, v := range spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.ServiceAccountToken != nil {
				n++
			}
		}
	}
	return n
}

// PriorityClassAllowed reports whether the Pod policy lets a super Pod carry priority class
// name: always when p.AllowedPriorityClassNames is nil (every public class), else when it is
// listed. Whether the class is public in the super cluster is decided elsewhere.
func PriorityClassAllowed(p *tenancyv1alpha1.PodPolicy, name string) bool {
	return p.AllowedPriorityClassNames == nil || slices.Contains(p.AllowedPriorityClassNames, name)
}

// RuntimeClassAllowed reports whether Pod policy p lets a super Pod name RuntimeClass name:
// when allowedRuntimeClassNames lists it or it is defaultRuntimeClassName (RuleRuntimeClass).
func RuntimeClassAllowed(p *tenancyv1alpha1.PodPolicy, name string) bool {
	return slices.Contains(p.AllowedRuntimeClassNames, name) || (p.DefaultRuntimeClassName != nil && *p.DefaultRuntimeClassName == name)
}

// checkVolume applies the volume rules of CheckPod to one volume.
func checkVolume(p *tenancyv1alpha1.PodPolicy, v *corev1.Volume) *Denial {
	for _, typ := range setFields(reflect.ValueOf(&v.VolumeSource).Elem()) {
		if !slices.Contains(p.AllowedVolumeTypes, typ) {
			return Deny(RuleVolumeType, "volume %q uses %s; allowed volume types: %s; a TenantPolicy's pods.allowedVolumeTypes allows more",
				v.Name, typ, list(p.AllowedVolumeTypes))
		}
	}
	if v.CSI != nil && !slices.Contains(p.AllowedCSIDrivers, v.CSI.Driver) {
		return Deny(RuleCSIDriver, "volume %q is an inline csi volume of driver %q; allowed drivers: %s; a TenantPolicy's pods.allowedCSIDrivers allows more",
			v.Name, v.CSI.Driver, list(p.AllowedCSIDrivers))
	}
	if v.Projected != nil {
		for i := range v.Projected.Sources {
			for _, src := range setFields(reflect.ValueOf(&v.Projected.Sources[i]).Elem()) {
				switch {
				case slices.Contains(credentialProjectedSources, src):
					return Deny(RuleCredentialSource, "volume %q projects a %s source, which the super cluster would resolve with its own "+
						"signers and trust bundles for the super Pod; no TenantPolicy field allows it", v.Name, src)
				case !slices.Contains(allowedProjectedSources, src):
					return Deny(RuleVolumeType, "volume %q projects a %s source, which vc-syncer does not know; allowed projected sources: %s; "+
						"no TenantPolicy field allows it", v.Name, src, list(allowedProjectedSources))
				}
			}
		}
	}
	return nil
}

// fieldNames caches, per struct type, the JSON names of its fields.
var fieldNames sync.Map // reflect.Type → []string

// setFields returns the JSON names of the fields of struct value s that are set (not their
// zero value): for VolumeSource and VolumeProjection, which source a volume uses.
func setFields(s reflect.Value) []string {
	t := s.Type()
	names, ok := fieldNames.Load(t)
	if !ok {
		n := make([]string, t.NumField())
		for i := range n {
			n[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if n[i] == "" {
				n[i] = t.Field(i).Name
			}
		}
		names, _ = fieldNames.LoadOrStore(t, n)
	}
	var out []string
	for i, name := range names.([]string) {
		if !s.Field(i).IsZero() {
			out = append(out, name)
		}
	}
	return out
}

// checkPlacement applies the node placement rules of CheckPod.
func checkPlacement(p *tenancyv1alpha1.PodPolicy, spec *corev1.PodSpec, inPool func(string) bool) *Denial {
	keys := make([]string, 0, len(spec.NodeSelector))
	for k := range spec.NodeSelector {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first refusal is the same on every pass
	for _, k := range keys {
		v := spec.NodeSelector[k]
		switch {
		case k == corev1.LabelHostname:
			if !inPool(v) {
				return Deny(RuleNodePlacement, "nodeSelector %s=%s names a Node outside this tenant's node pool; no TenantPolicy field allows it", k, v)
			}
		case !nodeKeyAllowed(p, k):
			return denyNodeKey(p, "nodeSelector", k)
		}
	}
	na := nodeAffinity(spec)
	if na == nil || na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	for _, term := range na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, r := range term.MatchExpressions {
			switch {
			case r.Key == corev1.LabelHostname:
				if !namesPoolNodes(r, inPool) {
					return denyNodeNames("required node affinity", r)
				}
			case !nodeKeyAllowed(p, r.Key):
				return denyNodeKey(p, "required node affinity", r.Key)
			}
		}
		for _, r := range term.MatchFields {
			if r.Key != metav1.ObjectNameField || !namesPoolNodes(r, inPool) {
				return denyNodeNames("required node affinity matchFields", r)
			}
		}
	}
	return nil
}

func nodeAffinity(spec *corev1.PodSpec) *corev1.NodeAffinity {
	if spec.Affinity == nil {
		return nil
	}
	return spec.Affinity.NodeAffinity
}

// nodeKeyAllowed reports whether a tenant may select Nodes by label key k: an allowed key, or
// a key of the policy's node selector (which replaces the tenant's value, or is ANDed with an
// affinity term on it: the Pod stays in the pool either way).
func nodeKeyAllowed(p *tenancyv1alpha1.PodPolicy, k string) bool {
	_, pinned := p.NodeSelector[k]
	return pinned || slices.Contains(p.AllowedNodeLabelKeys, k)
}

// namesPoolNodes reports whether requirement r selects only named Nodes of the pool: operator
// In with at least one value, every value in the pool.
func namesPoolNodes(r corev1.NodeSelectorRequirement, inPool func(string) bool) bool {
	if r.Operator != corev1.NodeSelectorOpIn || len(r.Values) == 0 {
		return false
	}
	for _, v := range r.Values {
		if !inPool(v) {
			return false
		}
	}
	return true
}

func denyNodeKey(p *tenancyv1alpha1.PodPolicy, where, key string) *Denial {
	return Deny(RuleNodePlacement, "%s key %s is not an allowed node label key; allowed: %s; a TenantPolicy's pods.allowedNodeLabelKeys allows more",
		where, key, list(p.AllowedNodeLabelKeys))
}

func denyNodeNames(where string, r corev1.NodeSelectorRequirement) *Denial {
	return Deny(RuleNodePlacement, "%s %s %s %v may select Nodes outside this tenant's node pool (only operator In naming Nodes "+
		"of the pool is allowed); no TenantPolicy field allows it", where, r.Key, r.Operator, r.Values)
}

// FilterPod applies the filtering rules of the Pod policy p to spec, in place, and returns a
// refusal that reports what was left out (nil when nothing was). spec is the super Pod's spec
// (a copy of the tenant's). The rules:
//
//   - tolerations matching none of p.AllowedTolerations are dropped (reported with
//     RuleToleration); then p.Tolerations are appended;
//   - preferred node affinity terms with a matchFields requirement or a key that is neither in
//     p.AllowedNodeLabelKeys nor in p.NodeSelector are dropped (reported with
//     RuleNodePlacement when no toleration was dropped; a preference never widens placement,
//     so it is not worth resolving node names for it);
//   - p.NodeSelector is merged into the node selector, its values winning;
//   - p.DefaultRuntimeClassName, when not empty, is set on a spec that names no RuntimeClass;
//   - preferred pod affinity and anti-affinity terms, and ScheduleAnyway topology spread
//     constraints, whose topology key TopologyKeyAllowed refuses are dropped (RulePodAffinity,
//     RuleTopologySpread);
//   - terminationGracePeriodSeconds and the containers' preStop and postStart sleep seconds
//     above p.MaxTerminationGracePeriodSeconds are clamped to it (RuleTerminationGracePeriod).
//
// One report covers everything left out: the first rule in this order, the other parts
// appended to its message. CheckPod runs first: FilterPod does not refuse anything.
func FilterPod(p *tenancyv1alpha1.PodPolicy, spec *corev1.PodSpec) *Denial {
	var dropped []string
	kept := spec.Tolerations[:0:0]
	for _, t := range spec.Tolerations {
		if slices.ContainsFunc(p.AllowedTolerations, func(pat tenancyv1alpha1.TolerationPattern) bool { return TolerationMatches(pat, t) }) {
			kept = append(kept, t)
		} else {
			dropped = append(dropped, tolerationString(t))
		}
	}
	kept = append(kept, p.Tolerations...)
	if len(kept) == 0 {
		kept = nil
	}
	spec.Tolerations = kept

	droppedTerms := 0
	if na := nodeAffinity(spec); na != nil && len(na.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
		var keep []corev1.PreferredSchedulingTerm
		for _, term := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			ok := len(term.Preference.MatchFields) == 0
			for _, r := range term.Preference.MatchExpressions {
				ok = ok && nodeKeyAllowed(p, r.Key)
			}
			if ok {
				keep = append(keep, term)
			} else {
				droppedTerms++
			}
		}
		na.PreferredDuringSchedulingIgnoredDuringExecution = keep
	}

	if len(p.NodeSelector) > 0 {
		sel := make(map[string]string, len(spec.NodeSelector)+len(p.NodeSelector))
		for k, v := range spec.NodeSelector {
			sel[k] = v
		}
		for k, v := range p.NodeSelector {
			sel[k] = v
		}
		spec.NodeSelector = sel
	}
	if def := deref(p.DefaultRuntimeClassName); def != "" && (spec.RuntimeClassName == nil || *spec.RuntimeClassName == "") {
		spec.RuntimeClassName = &def
	}

	scheduling := filterScheduling(p, spec)
	termination := clampTermination(p, spec)

	terms := ""
	if droppedTerms > 0 {
		terms = fmt.Sprintf("%d preferred node affinity term(s) not copied to the super Pod (keys outside "+
			"pods.allowedNodeLabelKeys, or node names); allowed keys: %s", droppedTerms, list(p.AllowedNodeLabelKeys))
	}
	switch {
	case len(dropped) > 0:
		msg := fmt.Sprintf("tolerations not copied to the super Pod: %s; allowed: %s; a TenantPolicy's pods.allowedTolerations allows more",
			strings.Join(dropped, ", "), patternsString(p.AllowedTolerations))
		if terms != "" {
			msg += "; also " + terms
		}
		return combine(&Denial{Rule: RuleToleration, Message: msg}, scheduling, termination)
	case droppedTerms > 0:
		return combine(Deny(RuleNodePlacement, "%s; a TenantPolicy's pods.allowedNodeLabelKeys allows more", terms), scheduling, termination)
	}
	return combine(scheduling, termination)
}

// TolerationMatches reports whether toleration t is one pattern pat allows: the same key (a
// toleration without a key tolerates every taint and matches no pattern), and, for each of
// the pattern's operator, value and effect that is set, the same one. An empty toleration
// operator means Equal and an empty toleration effect means every effect (so it matches only
// a pattern without an effect), as in the scheduler (corev1.Toleration.ToleratesTaint).
func TolerationMatches(pat tenancyv1alpha1.TolerationPattern, t corev1.Toleration) bool {
	if pat.Key == "" || t.Key != pat.Key {
		return false
	}
	op := t.Operator
	if op == "" {
		op = corev1.TolerationOpEqual
	}
	if pat.Operator != "" && op != pat.Operator {
		return false
	}
	if pat.Value != "" && (op != corev1.TolerationOpEqual || t.Value != pat.Value) {
		return false
	}
	return pat.Effect == "" || t.Effect == pat.Effect
}

// tolerationString renders t as key[=value][:effect] (Exists when it has no value), "*" for
// an empty key.
func tolerationString(t corev1.Toleration) string {
	s := t.Key
	if s == "" {
		s = "*"
	}
	if t.Operator == corev1.TolerationOpExists {
		s += " Exists"
	} else {
		s += "=" + t.Value
	}
	if t.Effect != "" {
		s += ":" + string(t.Effect)
	}
	return s
}

func patternsString(ps []tenancyv1alpha1.TolerationPattern) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Key
		if p.Operator != "" {
			out[i] += " " + string(p.Operator)
		}
		if p.Value != "" {
			out[i] += "=" + p.Value
		}
		if p.Effect != "" {
			out[i] += ":" + string(p.Effect)
		}
	}
	return list(out)
}

// list renders names for a message: comma-separated, "none" when empty.
func list(names []string) string {
	names = slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s == "" })
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
