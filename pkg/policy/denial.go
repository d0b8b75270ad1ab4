package policy

import (
	"fmt"
	"sync"
)

// Rule names the policy rule behind a refusal. The values are the `rule` label of
// vcsyncer_policy_denials_total: a fixed, bounded set.
type Rule string

// The rules.
const (
	RuleVolumeType            Rule = "volumeType"
	RuleCSIDriver             Rule = "csiDriver"
	RuleCredentialSource      Rule = "credentialSource"
	RuleToleration            Rule = "toleration"
	RuleNodePlacement         Rule = "nodePlacement"
	RuleRuntimeClass          Rule = "runtimeClass"
	RuleSchedulerName         Rule = "schedulerName"
	RulePriorityClass         Rule = "priorityClass"
	RuleServiceType           Rule = "serviceType"
	RuleExternalTrafficPolicy Rule = "externalTrafficPolicy"
	RuleLoadBalancerIP        Rule = "loadBalancerIP"
	RuleLoadBalancerClass     Rule = "loadBalancerClass"
	RuleMetadataKey           Rule = "metadataKey"
	RuleIngressClass          Rule = "ingressClass"
	RuleIngressHost           Rule = "ingressHost"
	RuleIngressSnippet        Rule = "ingressSnippet"
	RuleEndpointAddress       Rule = "endpointAddress"
	RuleStorageDataSource     Rule = "storageDataSource"
	RuleDisruptionBudget      Rule = "disruptionBudget"
	RuleObjectSize            Rule = "objectSize"
	RuleObjectCount           Rule = "objectCount"
	RuleNamespaceCollision    Rule = "namespaceCollision"
	RuleServiceAccountTokens  Rule = "serviceAccountTokens"
)

// RuleQuota is the rule of a refusal by the ResourceQuota the syncer keeps in each of the
// tenant's super namespaces (limits.quota): it has no room left for the object.
const RuleQuota Rule = "quota"

// ReasonPolicyDenied is the reason of the Warning Event (and, for a Pod, of its PodScheduled=False
// condition; for a Service without a super copy, of its tenancy.vcsyncer.io/Synced=False
// condition) that reports a refusal by the tenant's policy to the tenant.
const ReasonPolicyDenied = "PolicyDenied"

// ReasonQuotaExceeded is the reason of the Warning Event, and of a Pod's PodScheduled=False
// condition, that reports a quota refusal (RuleQuota): the object waits for room.
const ReasonQuotaExceeded = "QuotaExceeded"

// Reason returns the reason that reports d everywhere it is reported (the Warning Event on the
// tenant object, a Pod's PodScheduled=False condition, a Service's Synced=False condition, the
// Event on a refused Pod's owner): ReasonQuotaExceeded for a quota refusal, ReasonPolicyDenied
// for every other rule. One refusal kind has one reason, so the Event and the condition of one
// refusal always agree.
func (d *Denial) Reason() string {
	if d.Rule == RuleQuota || d.Rule == RuleTenantQuota {
		return ReasonQuotaExceeded
	}
	return ReasonPolicyDenied
}

// Denial is one refusal: the rule and a message that says what was refused and how an admin
// allows it ("volume nfs-data uses nfs; allowed: configMap, secret, ...; a TenantPolicy's
// pods.allowedVolumeTypes allows more").
type Denial struct {
	Rule    Rule
	Message string
}

// Deny returns a Denial of rule with a formatted message.
func Deny(rule Rule, format string, args ...any) *Denial {
	return &Denial{Rule: rule, Message: fmt.Sprintf(format, args...)}
}

// Error returns "<rule>: <message>".
func (d *Denial) Error() string { return string(d.Rule) + ": " + d.Message }

// Refusals records, per tenant object, the last refusal reported: its resourceVersion, the
// policy generation and the rule. Reporting again is skipped while all three are the same, so
// a refused object that a remediation scan or a resync re-enqueues gives one Event and one
// count, not one per pass. It is safe for concurrent use. The zero value is ready.
type Refusals struct {
	mu sync.Mutex
	m  map[string]refusal
}

type refusal struct {
	resourceVersion, generation string
	rule                        Rule
}

// Record stores a refusal of the object at key (any stable string: kind/namespace/name) at
// resourceVersion under policy generation, and reports whether it is new (not the same as the
// last one recorded for key).
func (r *Refusals) Record(key, resourceVersion, generation string, rule Rule) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]refusal{}
	}
	want := refusal{resourceVersion, generation, rule}
	if r.m[key] == want {
		return false
	}
	r.m[key] = want
	return true
}

// Refused reports whether the object at key was refused at resourceVersion under policy
// generation (so syncing it again would be refused again).
func (r *Refusals) Refused(key, resourceVersion, generation string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[key]
	return ok && v.resourceVersion == resourceVersion && v.generation == generation
}

// Forget drops the record of key (the object was synced, or is gone).
func (r *Refusals) Forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, key)
}

// Len returns the number of recorded refusals.
func (r *Refusals) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.m)
}
