package admit

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// ErrNoQuotaRoom is returned (wrapped) by reconcilers for an object that the super namespace's
// ResourceQuota has no room for. Unlike other refusals it is retried, with the queue's backoff
// (up to a minute): room comes back when other objects are deleted, which neither the object
// nor the policy sees.
var ErrNoQuotaRoom = errors.New("no room in the super namespace's ResourceQuota; retrying with backoff")

// QuotaNeed returns what the super cluster's quota admission counts for creating obj, the
// super object of kind: for a Pod a lower bound, one of pods and count/pods and its declared
// cpu and memory (PodQuotaNeed); for the other kinds what the tenant's budget charges
// it (policy.ObjectCharge: its object counts, a Service's node ports and load balancer, a
// claim's storage).
func QuotaNeed(kind resources.Kind, obj metav1.Object) corev1.ResourceList {
	if p, ok := obj.(*corev1.Pod); ok {
		return PodQuotaNeed(p)
	}
	if ro, ok := obj.(runtime.Object); ok {
		return policy.ObjectCharge(ro)
	}
	return nil
}

// CheckQuota returns a denial (policy.RuleQuota) when the syncer's ResourceQuota in the super
// namespace of obj (the super object of kind about to be created, from tenant namespace ns),
// by its cached status, has no room for it (QuotaNeed), and nil when it has or there is no
// such quota. It reads the super cache only, so a refused object is retried without a call to
// any apiserver. A Pod needs none of the keys this syncer writes into that quota
// (policy.BackstopKey leaves out pods and count/pods); it is refused only by a quota an older
// syncer wrote with them, until this one repairs it (EnsureBounds).
func CheckQuota(env *resources.Env, c *tenant.Cluster, kind resources.Kind, ns string, obj metav1.Object) *policy.Denial {
	rq := cachedQuota(env, c, obj.GetNamespace())
	if rq == nil {
		return nil
	}
	return CheckQuotaRoom(rq, QuotaNeed(kind, obj), fmt.Sprintf("%s %s/%s", kind, ns, obj.GetName()))
}

// quotaKey is the key of a quota refusal in tenant.Cluster.Refusals: apart from the policy
// refusals' (refusalKey), so that an object that passes every rule (Admitted) and is then
// refused by the quota on each retry is reported once, not once per retry.
func quotaKey(kind resources.Kind, namespace, name string) string {
	return "quota:" + refusalKey(kind, namespace, name)
}

// DenyQuota reports that tenant object obj of kind does not fit in its super namespace's
// ResourceQuota (d, rule quota): a Warning Event with reason d.Reason() (QuotaExceeded, the
// reason of a refused Pod's condition too) on obj
// and one count of vcsyncer_policy_denials_total{rule="quota"}, only the first time for obj's
// resourceVersion under the current policy generation (retries are not reported again). It
// returns whether it reported. Callers return an error wrapping ErrNoQuotaRoom (retried with
// backoff), and call QuotaAdmitted once the object is created.
func DenyQuota(c *tenant.Cluster, kind resources.Kind, obj metav1.Object, d *policy.Denial) bool {
	if !c.Refusals.Record(quotaKey(kind, obj.GetNamespace(), obj.GetName()), refusalVersion(obj), c.Policy().Generation, d.Rule) {
		return false
	}
	if ro, ok := obj.(runtime.Object); ok && c.Recorder != nil {
		c.Recorder.Event(ro, corev1.EventTypeWarning, d.Reason(), d.Error())
	}
	metrics.PolicyDenied(c.Name, string(kind), string(d.Rule))
	return true
}

// QuotaAdmitted forgets the quota refusal of tenant object namespace/name of kind (it was
// created in the super cluster, or is gone).
func QuotaAdmitted(c *tenant.Cluster, kind resources.Kind, namespace, name string) {
	c.Refusals.Forget(quotaKey(kind, namespace, name))
}

// KeepRefused records, without reporting again, that tenant object obj of kind is still
// refused by rule at its current version under the current policy generation, so that
// IsRefused stays true for it (periodic remediation skips it) although Deny was called for an
// earlier version. For refusals reported once per object, not once per version (objectCount).
func KeepRefused(c *tenant.Cluster, kind resources.Kind, obj metav1.Object, rule policy.Rule) {
	c.Refusals.Record(refusalKey(kind, obj.GetNamespace(), obj.GetName()), refusalVersion(obj), c.Policy().Generation, rule)
}
