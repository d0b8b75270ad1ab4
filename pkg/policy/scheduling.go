package policy

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// TopologyKeyAllowed reports whether a pod affinity or anti-affinity term or a topology spread
// constraint of a tenant Pod may use node label key k as its topology key: kubernetes.io/hostname
// (every Node has it, so it selects no Nodes, and it spreads or packs Pods per Node, the most
// common use), an allowed node label key (p.AllowedNodeLabelKeys) or a key of p.NodeSelector.
// Any other key would place Pods by, and reveal, node labels the policy keeps from the tenant
// (a Node without the key is never a candidate for a term or constraint that requires it).
// Which Pods a term counts is confined elsewhere: the super Pod's terms select only Pods of
// the tenant's own super namespaces (pkg/resources/pod).
func TopologyKeyAllowed(p *tenancyv1alpha1.PodPolicy, k string) bool {
	return k == corev1.LabelHostname || nodeKeyAllowed(p, k)
}

// checkScheduling applies the scheduling-term rules of CheckPod: RulePodAffinity for a
// required pod affinity or anti-affinity term, RuleTopologySpread for a DoNotSchedule
// topology spread constraint, whose topology key TopologyKeyAllowed refuses.
func checkScheduling(p *tenancyv1alpha1.PodPolicy, spec *corev1.PodSpec) *Denial {
	if n := SchedulingRequirements(spec); p.MaxSchedulingRequirements != nil && n > int(*p.MaxSchedulingRequirements) {
		return Deny(RuleSchedulingRequirements, "the Pod has %d scheduling requirements (pod affinity and anti-affinity terms, topology spread "+
			"constraints, node affinity terms and their selectors' entries); allowed: at most %d; a TenantPolicy's pods.maxSchedulingRequirements allows more",
			n, *p.MaxSchedulingRequirements)
	}
	if a := spec.Affinity; a != nil {
		var required []corev1.PodAffinityTerm
		if a.PodAffinity != nil {
			required = append(required, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		}
		if a.PodAntiAffinity != nil {
			required = append(required, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		}
		for _, term := range required {
			if !TopologyKeyAllowed(p, term.TopologyKey) {
				return Deny(RulePodAffinity, "a required pod affinity or anti-affinity term has topology key %s, which is not an allowed node label key; "+
					"allowed: %s; a TenantPolicy's pods.allowedNodeLabelKeys allows more", term.TopologyKey, topologyKeys(p))
			}
		}
	}
	for _, c := range spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable != corev1.ScheduleAnyway && !TopologyKeyAllowed(p, c.TopologyKey) {
			return Deny(RuleTopologySpread, "a DoNotSchedule topology spread constraint has topology key %s, which is not an allowed node label key; "+
				"allowed: %s; a TenantPolicy's pods.allowedNodeLabelKeys allows more", c.TopologyKey, topologyKeys(p))
		}
	}
	return nil
}

// SchedulingRequirements counts the scheduling requirements of spec that the scheduler
// evaluates: one per pod affinity and anti-affinity term (required and preferred), topology
// spread constraint, required node selector term and preferred node affinity term, plus one
// per entry of their label and namespace selectors (matchLabels, matchExpressions,
// matchFields), matchLabelKeys and mismatchLabelKeys. The nodeSelector is not counted (the
// placement rules bound its keys).
func SchedulingRequirements(spec *corev1.PodSpec) int {
	sel := func(s *metav1.LabelSelector) int {
		if s == nil {
			return 0
		}
		return len(s.MatchLabels) + len(s.MatchExpressions)
	}
	podTerm := func(t *corev1.PodAffinityTerm) int {
		return 1 + sel(t.LabelSelector) + sel(t.NamespaceSelector) + len(t.MatchLabelKeys) + len(t.MismatchLabelKeys)
	}
	nodeTerm := func(t *corev1.NodeSelectorTerm) int { return 1 + len(t.MatchExpressions) + len(t.MatchFields) }
	n := 0
	if a := spec.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil {
			for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				n += podTerm(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
			}
			for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				n += podTerm(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
			}
		}
		if pa := a.PodAntiAffinity; pa != nil {
			for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				n += podTerm(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
			}
			for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				n += podTerm(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
			}
		}
		if na := a.NodeAffinity; na != nil {
			if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
				for i := range r.NodeSelectorTerms {
					n += nodeTerm(&r.NodeSelectorTerms[i])
				}
			}
			for i := range na.PreferredDuringSchedulingIgnoredDuringExecution {
				n += nodeTerm(&na.PreferredDuringSchedulingIgnoredDuringExecution[i].Preference)
			}
		}
	}
	for i := range spec.TopologySpreadConstraints {
		c := &spec.TopologySpreadConstraints[i]
		n += 1 + sel(c.LabelSelector) + len(c.MatchLabelKeys)
	}
	return n
}

// topologyKeys lists the topology keys TopologyKeyAllowed allows under p, for a message.
func topologyKeys(p *tenancyv1alpha1.PodPolicy) string {
	keys := append([]string{corev1.LabelHostname}, p.AllowedNodeLabelKeys...)
	for k := range p.NodeSelector {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return list(slices.Compact(keys))
}

// filterScheduling drops, in place, the preferred pod affinity and anti-affinity terms and
// the ScheduleAnyway topology spread constraints of spec whose topology key
// TopologyKeyAllowed refuses, and returns a report of what it dropped (nil when nothing).
func filterScheduling(p *tenancyv1alpha1.PodPolicy, spec *corev1.PodSpec) *Denial {
	terms := 0
	keep := func(in []corev1.WeightedPodAffinityTerm) []corev1.WeightedPodAffinityTerm {
		var out []corev1.WeightedPodAffinityTerm
		for _, w := range in {
			if TopologyKeyAllowed(p, w.PodAffinityTerm.TopologyKey) {
				out = append(out, w)
			} else {
				terms++
			}
		}
		return out
	}
	if a := spec.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil && len(pa.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
			pa.PreferredDuringSchedulingIgnoredDuringExecution = keep(pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if pa := a.PodAntiAffinity; pa != nil && len(pa.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
			pa.PreferredDuringSchedulingIgnoredDuringExecution = keep(pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
	}
	constraints := 0
	if len(spec.TopologySpreadConstraints) > 0 {
		var kept []corev1.TopologySpreadConstraint
		for _, c := range spec.TopologySpreadConstraints {
			if TopologyKeyAllowed(p, c.TopologyKey) {
				kept = append(kept, c)
			} else {
				constraints++ // CheckPod refused the DoNotSchedule ones
			}
		}
		spec.TopologySpreadConstraints = kept
	}
	allowed := fmt.Sprintf("allowed topology keys: %s; a TenantPolicy's pods.allowedNodeLabelKeys allows more", topologyKeys(p))
	switch {
	case terms > 0 && constraints > 0:
		return Deny(RulePodAffinity, "%d preferred pod affinity or anti-affinity term(s) and %d ScheduleAnyway topology spread constraint(s) "+
			"not copied to the super Pod (topology keys not allowed); %s", terms, constraints, allowed)
	case terms > 0:
		return Deny(RulePodAffinity, "%d preferred pod affinity or anti-affinity term(s) not copied to the super Pod (topology keys not allowed); %s", terms, allowed)
	case constraints > 0:
		return Deny(RuleTopologySpread, "%d ScheduleAnyway topology spread constraint(s) not copied to the super Pod (topology keys not allowed); %s", constraints, allowed)
	}
	return nil
}

// checkProbeHosts returns the RuleProbeHost refusal of spec when a probe (liveness, readiness,
// startup) or lifecycle hook (postStart, preStop) of a container or init container names a
// host in its httpGet or tcpSocket action. The kubelet makes these connections itself, from
// the node's network namespace: a host would let a tenant reach another tenant's Pods, the
// node's own loopback services or a cloud metadata endpoint, past every NetworkPolicy. Pod
// Security baseline refuses such hosts only from Kubernetes 1.34 on; this holds whatever the
// super cluster's level and version. An empty host (the Pod's IP) is allowed.
func checkProbeHosts(spec *corev1.PodSpec) *Denial {
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			c := &cs[i]
			check := func(what string, get *corev1.HTTPGetAction, tcp *corev1.TCPSocketAction) *Denial {
				host := ""
				if get != nil {
					host = get.Host
				}
				if tcp != nil && host == "" {
					host = tcp.Host
				}
				if host == "" {
					return nil
				}
				return Deny(RuleProbeHost, "container %s %s names host %q: the kubelet would connect to it from the node's network; "+
					"only the Pod's own address (no host) is allowed; no TenantPolicy field allows it", c.Name, what, host)
			}
			for _, pr := range []struct {
				what string
				p    *corev1.Probe
			}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}} {
				if pr.p != nil {
					if d := check(pr.what, pr.p.HTTPGet, pr.p.TCPSocket); d != nil {
						return d
					}
				}
			}
			if l := c.Lifecycle; l != nil {
				for _, h := range []struct {
					what string
					h    *corev1.LifecycleHandler
				}{{"postStart hook", l.PostStart}, {"preStop hook", l.PreStop}} {
					if h.h != nil {
						if d := check(h.what, h.h.HTTPGet, h.h.TCPSocket); d != nil {
							return d
						}
					}
				}
			}
		}
	}
	return nil
}

// ClampGracePeriod returns seconds bounded by p.MaxTerminationGracePeriodSeconds (unchanged
// when p sets no bound or seconds is nil), and whether it clamped.
func ClampGracePeriod(p *tenancyv1alpha1.PodPolicy, seconds *int64) (*int64, bool) {
	if seconds == nil || p.MaxTerminationGracePeriodSeconds == nil || *seconds <= *p.MaxTerminationGracePeriodSeconds {
		return seconds, false
	}
	bound := *p.MaxTerminationGracePeriodSeconds
	return &bound, true
}

// DeletionGracePeriod returns the grace period with which the super Pod of a tenant Pod
// deleted with grace period seconds (the tenant Pod's deletionGracePeriodSeconds; nil: none
// given, the super Pod's own terminationGracePeriodSeconds applies) is deleted, and a report of
// what it changed (nil when nothing):
//
//   - above p.MaxTerminationGracePeriodSeconds it is clamped to it (ClampGracePeriod);
//   - below 1 (0 is a force deletion: a tenant Pod kept by a finalizer of the tenant's and
//     deleted with --grace-period=0 keeps deletionGracePeriodSeconds 0) it is raised to 1.
//
// The super cluster never gets a force deletion from a tenant: it would remove the super Pod's
// object at once while its node still runs its containers (up to their grace period, hooks
// included), uncounted by the super ResourceQuota and by the scheduler. With 1 the super Pod
// stays until its node has stopped it. Both are reported with RuleTerminationGracePeriod.
func DeletionGracePeriod(p *tenancyv1alpha1.PodPolicy, seconds *int64) (*int64, *Denial) {
	if seconds == nil {
		return nil, nil
	}
	if *seconds < 1 {
		one := int64(1)
		return &one, Deny(RuleTerminationGracePeriod, "deletion grace period %ds (a force deletion) raised to 1s for the super Pod: "+
			"the super cluster deletes a Pod only once its node has stopped it; no TenantPolicy field allows a force deletion", *seconds)
	}
	if g, clamped := ClampGracePeriod(p, seconds); clamped {
		return g, Deny(RuleTerminationGracePeriod, "deletion grace period %ds clamped to %ds for the super Pod; "+
			"a TenantPolicy's pods.maxTerminationGracePeriodSeconds allows more", *seconds, *g)
	}
	return seconds, nil
}

// clampTermination bounds, in place, spec's terminationGracePeriodSeconds and the seconds of
// its containers' and init containers' preStop and postStart sleep actions by
// p.MaxTerminationGracePeriodSeconds (a sleep never exceeds the grace period: the apiserver
// refuses one that does), and returns a report of what it clamped (nil when nothing).
func clampTermination(p *tenancyv1alpha1.PodPolicy, spec *corev1.PodSpec) *Denial {
	if p.MaxTerminationGracePeriodSeconds == nil {
		return nil
	}
	bound := *p.MaxTerminationGracePeriodSeconds
	var what []string
	if g, clamped := ClampGracePeriod(p, spec.TerminationGracePeriodSeconds); clamped {
		what = append(what, fmt.Sprintf("terminationGracePeriodSeconds %d", *spec.TerminationGracePeriodSeconds))
		spec.TerminationGracePeriodSeconds = g
	}
	clampSleep := func(container, hook string, h *corev1.LifecycleHandler) {
		if h != nil && h.Sleep != nil && h.Sleep.Seconds > bound {
			what = append(what, fmt.Sprintf("container %s %s sleep %ds", container, hook, h.Sleep.Seconds))
			h.Sleep.Seconds = bound
		}
	}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			if l := cs[i].Lifecycle; l != nil {
				clampSleep(cs[i].Name, "preStop", l.PreStop)
				clampSleep(cs[i].Name, "postStart", l.PostStart)
			}
		}
	}
	if len(what) == 0 {
		return nil
	}
	return Deny(RuleTerminationGracePeriod, "%s clamped to %ds in the super Pod; a TenantPolicy's pods.maxTerminationGracePeriodSeconds allows more",
		strings.Join(what, ", "), bound)
}

// EphemeralContainers returns the report of a tenant Pod's ephemeral containers (names), which
// are not synced to its super Pod: they never run. Nil when names is empty.
func EphemeralContainers(names []string) *Denial {
	if len(names) == 0 {
		return nil
	}
	return Deny(RuleEphemeralContainer, "ephemeral containers %s are not run: vc-syncer does not copy ephemeral containers (kubectl debug) "+
		"to the super cluster; no TenantPolicy field allows them", strings.Join(names, ", "))
}

// combine returns the first of ds that is not nil, its message followed by the others'
// ("; also ..."): one report, counted once under the first rule.
func combine(ds ...*Denial) *Denial {
	var out *Denial
	for _, d := range ds {
		switch {
		case d == nil:
		case out == nil:
			out = &Denial{Rule: d.Rule, Message: d.Message}
		default:
			out.Message += "; also " + d.Message
		}
	}
	return out
}
