package admit

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
)

// Pure checks of limits.maxObjects and limits.quota: functions of the policy and of the
// objects, which the rest of this package reports. (limits.maxObjectBytes is checked by
// policy.CheckObjectBytes: the tenant informers' transform, below this floor, applies it.)

// ObjectCountDenial returns the denial (RuleObjectCount) of one object of kind beyond the
// policy's limits.maxObjects: the tenant has that many of kind synced already. what names the
// object.
func ObjectCountDenial(l *tenancyv1alpha1.LimitsPolicy, kind, what string) *policy.Denial {
	maxObjects := int32(0)
	if l != nil && l.MaxObjects != nil {
		maxObjects = *l.MaxObjects
	}
	return policy.Deny(policy.RuleObjectCount, "%s is not synced: the tenant has %d %s objects synced already, the most allowed; it is synced when others are deleted; a TenantPolicy's limits.maxObjects allows more",
		what, maxObjects, kind)
}

// QuotaReady reports whether a ResourceQuota's status has been computed for its current spec
// (the kube-controller-manager's resource quota controller writes status.hard and status.used):
// every key of spec.hard is in status.hard with the same value and in status.used. Until then
// the apiserver's quota admission does not enforce it: it checks only the resources named in
// status.hard (CheckRequest in k8s.io/apiserver pkg/admission/plugin/resourcequota), so an
// object created in that window is not held to the quota. A nil quota is not ready.
func QuotaReady(rq *corev1.ResourceQuota) bool {
	if rq == nil {
		return false
	}
	for name, want := range rq.Spec.Hard {
		have, ok := rq.Status.Hard[name]
		if !ok || have.Cmp(want) != 0 {
			return false
		}
		if _, ok := rq.Status.Used[name]; !ok {
			return false
		}
	}
	return true
}

// CheckQuotaRoom returns a denial (RuleQuota) when quota rq, by its status (hard and used, as
// last computed), has no room for need: some resource of need that the quota limits would go
// over its hard limit. It returns nil when there is room, when rq is nil, and for resources
// the quota does not limit. what names the object. need must be a lower bound of what the
// apiserver's admission will count for the object, so that the check never refuses what the
// apiserver would admit (beyond a stale cached status).
func CheckQuotaRoom(rq *corev1.ResourceQuota, need corev1.ResourceList, what string) *policy.Denial {
	if rq == nil {
		return nil
	}
	var over []string
	for name, n := range need {
		hard, ok := rq.Status.Hard[name]
		if !ok {
			continue
		}
		total := rq.Status.Used[name].DeepCopy()
		total.Add(n)
		if total.Cmp(hard) > 0 {
			used := rq.Status.Used[name]
			over = append(over, fmt.Sprintf("%s: requested %s, used %s, limited %s", name, n.String(), used.String(), hard.String()))
		}
	}
	if len(over) == 0 {
		return nil
	}
	sort.Strings(over)
	return policy.Deny(policy.RuleQuota, "%s does not fit in the super namespace's ResourceQuota %s (%s); it is retried with backoff until there is room; a TenantPolicy's limits.quota allows more",
		what, rq.Name, strings.Join(over, "; "))
}

// QuotaExceededDenial returns the denial (RuleQuota) of an object whose super-cluster create
// or update err was refused by a ResourceQuota ("exceeded quota: ..." from the quota admission,
// 403 Forbidden), quoting the apiserver; nil for any other error (nil included).
func QuotaExceededDenial(what string, err error) *policy.Denial {
	if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota") {
		return nil
	}
	return policy.Deny(policy.RuleQuota, "%s was refused by the super cluster's ResourceQuota: %v; it is retried with backoff until there is room; a TenantPolicy's limits.quota allows more",
		what, err)
}

// PodQuotaNeed returns a lower bound of what the quota admission counts for creating Pod p:
// one of pods and count/pods, and the cpu and memory requests and limits the Pod declares
// (the requests.* names and the bare cpu/memory names that mean requests). It is a lower bound
// because a LimitRange only adds defaults to containers that declare none, and the quota
// evaluator's figure (the larger of the regular containers' sum and each init container, plus
// sidecars and the Pod overhead) is at least the larger of the regular containers' sum and the
// largest non-sidecar init container's, which is what this counts.
func PodQuotaNeed(p *corev1.Pod) corev1.ResourceList {
	one := resource.MustParse("1")
	need := corev1.ResourceList{corev1.ResourcePods: one, "count/pods": one}
	for _, r := range []struct {
		name  corev1.ResourceName
		names []corev1.ResourceName
		req   bool
	}{
		{corev1.ResourceCPU, []corev1.ResourceName{corev1.ResourceRequestsCPU, corev1.ResourceCPU}, true},
		{corev1.ResourceMemory, []corev1.ResourceName{corev1.ResourceRequestsMemory, corev1.ResourceMemory}, true},
		{corev1.ResourceCPU, []corev1.ResourceName{corev1.ResourceLimitsCPU}, false},
		{corev1.ResourceMemory, []corev1.ResourceName{corev1.ResourceLimitsMemory}, false},
	} {
		pick := func(c corev1.Container) resource.Quantity {
			l := c.Resources.Limits
			if r.req {
				l = c.Resources.Requests
			}
			return l[r.name]
		}
		var sum resource.Quantity
		for _, c := range p.Spec.Containers {
			sum.Add(pick(c))
		}
		for _, c := range p.Spec.InitContainers {
			if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				continue // a sidecar: counted by the evaluator in ways this lower bound leaves out
			}
			if q := pick(c); q.Cmp(sum) > 0 {
				sum = q
			}
		}
		if sum.IsZero() {
			continue
		}
		for _, n := range r.names {
			need[n] = sum.DeepCopy()
		}
	}
	return need
}
