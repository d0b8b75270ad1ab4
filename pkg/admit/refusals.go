package admit

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// refusalKey is the key of a tenant object in tenant.Cluster.Refusals.
func refusalKey(kind resources.Kind, namespace, name string) string {
	return fmt.Sprintf("%s/%s/%s", kind, namespace, name)
}

// refusalVersion is the version of tenant object obj that a refusal is recorded for (Deny,
// RecordRejected, KeepRefused) and compared with (IsRefused, IsRejected): its resourceVersion,
// and for a Service a hash of its spec. A refused Service gets a status condition and a label
// from the syncer (pkg/resources/service), writes that change its resourceVersion but not what
// was refused (the policy's Service rules read the spec only), so they must not make it
// reported again. Services have no metadata.generation to use instead.
func refusalVersion(obj metav1.Object) string {
	if s, ok := obj.(*corev1.Service); ok {
		b, _ := json.Marshal(&s.Spec)
		h := fnv.New64a()
		_, _ = h.Write(b)
		return "spec:" + strconv.FormatUint(h.Sum64(), 16)
	}
	return obj.GetResourceVersion()
}

// Deny reports that tenant c's policy refused tenant object obj of kind (or, for a rule that
// filters, part of it): a Warning Event with reason d.Reason() (policy.ReasonPolicyDenied) on obj, whose
// message is d.Error(), and one count of vcsyncer_policy_denials_total{tenant,kind,rule}. It
// does both only the first time for obj's resourceVersion under c's current policy generation,
// so a refused object that is enqueued again (a remediation scan, a resync) is not reported
// again. It returns whether it reported. Callers do not sync what was refused and return nil
// (no retry): the object comes back when it or the policy changes.
func Deny(c *tenant.Cluster, kind resources.Kind, obj metav1.Object, d *policy.Denial) bool {
	key := refusalKey(kind, obj.GetNamespace(), obj.GetName())
	if !c.Refusals.Record(key, refusalVersion(obj), c.Policy().Generation, d.Rule) {
		return false
	}
	if ro, ok := obj.(runtime.Object); ok {
		c.Recorder.Event(ro, corev1.EventTypeWarning, d.Reason(), d.Error())
	}
	metrics.PolicyDenied(c.Name, string(kind), string(d.Rule))
	return true
}

// Admitted forgets any refusal recorded for tenant object namespace/name of kind, the policy's
// and the super cluster's (RecordRejected): it passed the policy and is being synced (or is gone). Call it when an object passes the policy, so a later refusal of the
// same version (after a policy change back) is reported again.
func Admitted(c *tenant.Cluster, kind resources.Kind, namespace, name string) {
	key := refusalKey(kind, namespace, name)
	c.Refusals.Forget(key)
	c.Refusals.Forget(rejectedKey(key))
}

// IsRefused reports whether tenant object obj of kind was refused at its current
// resourceVersion under c's current policy, by the policy (Deny) or by the super cluster
// (RecordRejected): a remediation scan skips it, since syncing it again would only be refused
// again.
func IsRefused(c *tenant.Cluster, kind resources.Kind, obj metav1.Object) bool {
	key, rv, gen := refusalKey(kind, obj.GetNamespace(), obj.GetName()), refusalVersion(obj), c.Policy().Generation
	return c.Refusals.Refused(key, rv, gen) || c.Refusals.Refused(rejectedKey(key), rv, gen)
}

// ruleSuperRejected is the rule of RecordRejected's records (never a metric label: the
// refusal is counted in vcsyncer_sync_rejected_total).
const ruleSuperRejected policy.Rule = "superClusterRejected"

// rejectedKey is the key of a super-cluster refusal in tenant.Cluster.Refusals, apart from
// the policy's (a filtered object is recorded by Deny and then created).
func rejectedKey(key string) string { return "rejected:" + key }

// RecordRejected records that the super cluster refused to create the super copy of tenant
// object obj of kind for a reason that does not change by itself (ErrRejected: Pod Security,
// an admission webhook or policy, an invalid object), at obj's resourceVersion under c's
// current policy generation. It returns whether the record is new. Until obj or the policy
// changes, IsRejected and IsRefused report true for it, so neither a re-enqueue nor a
// remediation scan sends the same object again. Admitted and Gone forget it.
func RecordRejected(c *tenant.Cluster, kind resources.Kind, obj metav1.Object) bool {
	return c.Refusals.Record(rejectedKey(refusalKey(kind, obj.GetNamespace(), obj.GetName())), refusalVersion(obj), c.Policy().Generation, ruleSuperRejected)
}

// IsRejected reports whether tenant object obj of kind was refused by the super cluster at
// its current resourceVersion under c's current policy (RecordRejected).
func IsRejected(c *tenant.Cluster, kind resources.Kind, obj metav1.Object) bool {
	return c.Refusals.Refused(rejectedKey(refusalKey(kind, obj.GetNamespace(), obj.GetName())), refusalVersion(obj), c.Policy().Generation)
}

// Filtered reports, like Deny, that tenant c's policy changed what of tenant object obj of
// kind reaches its super copy while the object itself was synced (rules that filter:
// metadataKey, disruptionBudget, terminationGracePeriod, ephemeralContainer): a Warning Event with reason policy.ReasonPolicyDenied on obj
// and one count of vcsyncer_policy_denials_total, once per version of obj (its
// resourceVersion, or any string that changes when the report would; see ReportDroppedMeta)
// and policy generation. Its record is kept per rule and apart from Deny's, so the object does
// not count as refused (IsRefused) and Admitted does not make it report again. A nil d (nothing
// changed) forgets the record of rule. It returns whether it reported.
func Filtered(c *tenant.Cluster, kind resources.Kind, obj metav1.Object, rule policy.Rule, version string, d *policy.Denial) bool {
	key := refusalKey(kind, obj.GetNamespace(), obj.GetName()) + "#" + string(rule)
	if d == nil {
		c.Refusals.Forget(key)
		return false
	}
	if !c.Refusals.Record(key, version, c.Policy().Generation, d.Rule) {
		return false
	}
	if ro, ok := obj.(runtime.Object); ok {
		c.Recorder.Event(ro, corev1.EventTypeWarning, d.Reason(), d.Error())
	}
	metrics.PolicyDenied(c.Name, string(kind), string(d.Rule))
	return true
}

// filterRules are the rules Filtered keeps records for.
var filterRules = []policy.Rule{policy.RuleMetadataKey, policy.RuleDisruptionBudget,
	policy.RuleTerminationGracePeriod, policy.RuleEphemeralContainer, policy.RuleExternalIPs, policy.RuleSharedClusterIP}

// Gone forgets every record of tenant object namespace/name of kind (Deny's, Filtered's and
// RecordRejected's):
// call it when the object no longer exists.
func Gone(c *tenant.Cluster, kind resources.Kind, namespace, name string) {
	key := refusalKey(kind, namespace, name)
	c.Refusals.Forget(key)
	c.Refusals.Forget(rejectedKey(key))
	for _, r := range filterRules {
		c.Refusals.Forget(key + "#" + string(r))
	}
}

// HeldOut returns the refusal of tenant object obj of kind when the tenant caches hold it as
// a stub (tenant.IsHeldOut: kept out of the syncer's memory by limits.maxObjectBytes or
// limits.maxCachedBytes), and nil otherwise. A stub carries no content: its reconcile writes
// nothing for it (no super copy is created or updated, an existing one is left as it was, and
// nothing is written into the tenant object), reports the refusal (Deny) and waits for the
// object to be readmitted (Gate.ReadmitHeld) or to change.
func HeldOut(c *tenant.Cluster, kind resources.Kind, obj metav1.Object) *policy.Denial {
	if !tenant.IsHeldOut(obj) {
		return nil
	}
	what := fmt.Sprintf("%s %s/%s", kind, obj.GetNamespace(), obj.GetName())
	if obj.GetNamespace() == "" {
		what = fmt.Sprintf("%s %s", kind, obj.GetName())
	}
	return c.Held.HeldOutDenial(c.Policy().Limits(), obj, what)
}

// ReportDroppedMeta reports the keys DroppedMetaKeys finds for tenant object tObj of kind and
// its super copy desired under tenant c's policy, with rule metadataKey (Warning Event on tObj
// and vcsyncer_policy_denials_total; see Filtered), once per version of tObj, set of dropped
// keys and policy generation. The version is the object's generation when it has one (so
// status writes, such as the load-balancer status the syncer copies up, do not repeat the
// report) and its resourceVersion otherwise. The object is synced anyway. extra lists keys
// left out of parts of the object that carry metadata of their own (a Pod's generic ephemeral
// volume claim templates: "ephemeral volume <v>: label <key>"); they are reported with the
// object's own.
func ReportDroppedMeta(c *tenant.Cluster, kind resources.Kind, tObj, desired metav1.Object, extra ...string) {
	dropped := append(resources.DroppedMetaKeys(c.Policy(), tObj, desired), extra...)
	version := tObj.GetResourceVersion()
	if g := tObj.GetGeneration(); g > 0 {
		version = "g" + strconv.FormatInt(g, 10)
	}
	version += "|" + strings.Join(dropped, ",")
	Filtered(c, kind, tObj, policy.RuleMetadataKey, version, policy.MetadataDenial(string(kind), tObj.GetNamespace(), tObj.GetName(), dropped))
}
