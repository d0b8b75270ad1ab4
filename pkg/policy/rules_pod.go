package policy

// Rules of the Pod policy about scheduling terms, termination and debugging (see CheckPod,
// FilterPod and CheckEphemeralContainers).
const (
	// RulePodAffinity refuses a required pod affinity or anti-affinity term whose topology key
	// is not an allowed node label key (and reports dropped preferred terms of such keys).
	RulePodAffinity Rule = "podAffinity"
	// RuleTopologySpread refuses a DoNotSchedule topology spread constraint whose topology key
	// is not an allowed node label key (and reports dropped ScheduleAnyway constraints).
	RuleTopologySpread Rule = "topologySpread"
	// RuleTerminationGracePeriod reports a grace period or lifecycle sleep above the policy's
	// pods.maxTerminationGracePeriodSeconds, clamped in the super Pod.
	RuleTerminationGracePeriod Rule = "terminationGracePeriod"
	// RuleEphemeralContainer reports ephemeral containers (kubectl debug) of a tenant Pod,
	// which are not synced to the super Pod.
	RuleEphemeralContainer Rule = "ephemeralContainer"
	// RuleSchedulingRequirements refuses a Pod with more scheduling requirements (terms,
	// constraints and their selectors' entries, SchedulingRequirements) than the policy's
	// pods.maxSchedulingRequirements.
	RuleSchedulingRequirements Rule = "schedulingRequirements"
	// RuleProbeHost refuses a probe or lifecycle hook (httpGet, tcpSocket) that names a host:
	// the kubelet would connect to it from the node's network.
	RuleProbeHost Rule = "probeHost"
)

// DefaultMaxSchedulingRequirements is the built-in pods.maxSchedulingRequirements.
const (
	DefaultMaxSchedulingRequirements = 64
)
