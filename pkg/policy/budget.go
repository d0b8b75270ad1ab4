package policy

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The tenant-wide budget (limits.quota counted over all of a tenant's namespaces): what one
// Pod costs (PodCharge) and what a super copy of another kind costs (ObjectCharge,
// budget_objects.go), which keys of limits.quota the budget counts (BudgetHard), and the
// refusal of an object the budget has no room for (BudgetDenial). Pure functions; the
// counting itself is pkg/admission's Budget.

// RuleTenantQuota refuses, until there is room, a Pod that would take its tenant over the
// tenant-wide budget (limits.quota counted over all of the tenant's namespaces).
const RuleTenantQuota Rule = "tenantQuota"

// AnnotationCharge is the super Pod annotation that records what the Pod was charged in its
// tenant's budget when the syncer created it (FormatCharge), so that the charge released when
// it ends is the one taken, whatever the policy says by then, and a restarted syncer counts
// the same from its super cache. Only the syncer writes it (the syncer's annotation domain
// never passes the metadata allowlist).
const AnnotationCharge = "tenancy.vcsyncer.io/budget-charge"

// isStorageKey reports whether k counts claims' storage or claims of a StorageClass
// (requests.storage, <class>.storageclass.storage.k8s.io/requests.storage or
// /persistentvolumeclaims).
func isStorageKey(k corev1.ResourceName) bool {
	s := string(k)
	return s == string(corev1.ResourceRequestsStorage) || strings.Contains(s, storageClassSuffix)
}

// isCountKey reports whether k counts objects: count/<resource>[.<group>], a legacy bare name
// (pods, services, secrets, configmaps, persistentvolumeclaims, replicationcontrollers,
// resourcequotas) or services.loadbalancers / services.nodeports.
func isCountKey(k corev1.ResourceName) bool {
	s := string(k)
	switch {
	case strings.HasPrefix(s, "count/"):
		return true
	case k == corev1.ResourceServicesNodePorts || k == corev1.ResourceServicesLoadBalancers:
		return true
	case strings.ContainsAny(s, "./"):
		return false
	}
	return !isBareCompute(k)
}

// isBareCompute reports the bare compute names that mean requests in a ResourceQuota.
func isBareCompute(k corev1.ResourceName) bool {
	return k == corev1.ResourceCPU || k == corev1.ResourceMemory || k == corev1.ResourceEphemeralStorage ||
		strings.HasPrefix(string(k), corev1.ResourceHugePagesPrefix)
}

// normalizeBudgetKey returns the canonical key of budget key k (the bare cpu, memory,
// ephemeral-storage and hugepages-* names mean requests, as in a ResourceQuota), and whether
// the budget counts anything under it: Pods' compute keys, object counts and claims' storage.
func normalizeBudgetKey(k corev1.ResourceName) (corev1.ResourceName, bool) {
	s := string(k)
	switch {
	case isStorageKey(k), isCountKey(k):
		return k, true
	case strings.HasPrefix(s, "requests.") || strings.HasPrefix(s, "limits."):
		return k, true
	case isBareCompute(k):
		return corev1.ResourceName("requests." + s), true
	}
	return "", false
}

// BudgetHard returns the keys of limits.quota (hard) that the budget counts, over all of a
// tenant's namespaces: Pods' keys (PodCharge), with the bare names (cpu, memory,
// ephemeral-storage, hugepages-*) under their requests.* names (the smaller hard when both are
// set), the object counts and claims' storage (ObjectCharge); nil when none is set.
func BudgetHard(hard corev1.ResourceList) corev1.ResourceList {
	var out corev1.ResourceList
	for k, v := range hard {
		n, ok := normalizeBudgetKey(k)
		if !ok {
			continue
		}
		if out == nil {
			out = corev1.ResourceList{}
		}
		if have, ok := out[n]; ok && have.Cmp(v) <= 0 {
			continue
		}
		out[n] = v.DeepCopy()
	}
	return out
}

// BackstopKey reports whether limits.quota key k belongs in the ResourceQuota the syncer keeps
// in each super namespace: object counts other than Pods' and claims' storage, which never
// refuse a Pod the tenant's budget admitted and never require a field the tenant did not set.
// Compute keys (cpu, memory, ephemeral-storage, hugepages, extended resources, requests.* and
// limits.* other than storage) are the budget's alone: a ResourceQuota with requests.cpu or
// limits.* refuses every Pod with a container that does not set them. So are pods and
// count/pods: a ResourceQuota with either makes the super apiserver's quota admission
// evaluate every super Pod's create and write the quota's status for it (about 0.3 writes
// per Pod in a burst; the kube-apiserver's ResourceQuota admission plugin), so a super create
// waited about twice as long as one made straight (docs/bench/burst/cost-6), to bound per
// namespace what the budget already bounds over all of the tenant's namespaces, as it bounds
// the Pods' cpu and memory.
func BackstopKey(k corev1.ResourceName) bool {
	if k == corev1.ResourcePods || k == "count/pods" {
		return false
	}
	return isStorageKey(k) || isCountKey(k)
}

// PodCharge returns what Pod p costs in its tenant's budget, under the canonical keys of
// BudgetHard: pods and count/pods 1; requests.<name> for every resource the Pod requests,
// counted as Kubernetes' quota counts a Pod's requests (the larger of the regular containers'
// sum and each init container's, restartable init containers (sidecars) added to both,
// pod-level spec.resources where set, spec.overhead added), with each container that neither
// requests nor limits a resource of defaultCharge charged that amount for it (unless the Pod
// sets it at pod level); limits.<name> likewise from each container's limit, or its request or
// charge where it sets no limit. A container that requests 0 of a resource and sets no limit
// of it is charged defaultCharge too (it is as unbounded as one that asks nothing). p itself is
// not changed. The charge is computed from the spec whatever p's phase: a tenant writes its
// own Pods' status, so a Pod it marks Succeeded before its super copy exists must not be
// charged nothing (a super Pod that ended is not counted: the syncer's accounting skips it).
func PodCharge(p *corev1.Pod, defaultCharge corev1.ResourceList) corev1.ResourceList {
	var podReq, podLim corev1.ResourceList
	if p.Spec.Resources != nil {
		podReq, podLim = p.Spec.Resources.Requests, p.Spec.Resources.Limits
	}
	charged := func(c corev1.Container) (req, lim corev1.ResourceList) {
		req, lim = corev1.ResourceList{}, corev1.ResourceList{}
		for k, v := range c.Resources.Requests {
			req[k] = v
		}
		for k, v := range c.Resources.Limits {
			lim[k] = v
			if _, ok := req[k]; !ok {
				req[k] = v // the apiserver defaults a request to its limit
			}
		}
		for k, v := range defaultCharge {
			q, ok := req[k]
			_, limited := lim[k]
			if !ok || (q.IsZero() && !limited) {
				if _, pod := podReq[k]; !pod {
					req[k] = v
				}
			}
		}
		for k, v := range req {
			if _, ok := lim[k]; !ok {
				lim[k] = v
			}
		}
		return req, lim
	}
	reqs, lims := corev1.ResourceList{}, corev1.ResourceList{}
	initReqs, initLims := corev1.ResourceList{}, corev1.ResourceList{}
	sideReqs, sideLims := corev1.ResourceList{}, corev1.ResourceList{}
	for _, c := range p.Spec.Containers {
		r, l := charged(c)
		addList(reqs, r)
		addList(lims, l)
	}
	for _, c := range p.Spec.InitContainers {
		r, l := charged(c)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addList(reqs, r)
			addList(lims, l)
			addList(sideReqs, r)
			addList(sideLims, l)
			maxList(initReqs, sideReqs)
			maxList(initLims, sideLims)
			continue
		}
		addList(r, sideReqs)
		addList(l, sideLims)
		maxList(initReqs, r)
		maxList(initLims, l)
	}
	maxList(reqs, initReqs)
	maxList(lims, initLims)
	for k, v := range podReq {
		reqs[k] = v
	}
	for k, v := range podLim {
		lims[k] = v
	}
	addList(reqs, p.Spec.Overhead)
	addList(lims, p.Spec.Overhead)
	one := resource.MustParse("1")
	out := corev1.ResourceList{corev1.ResourcePods: one, "count/pods": one}
	for k, v := range reqs {
		if !v.IsZero() {
			out[corev1.ResourceName("requests."+string(k))] = v.DeepCopy()
		}
	}
	for k, v := range lims {
		if !v.IsZero() {
			out[corev1.ResourceName("limits."+string(k))] = v.DeepCopy()
		}
	}
	return out
}

func addList(dst, src corev1.ResourceList) {
	for k, v := range src {
		q := dst[k].DeepCopy()
		q.Add(v)
		dst[k] = q
	}
}

func maxList(dst, src corev1.ResourceList) {
	for k, v := range src {
		if q, ok := dst[k]; !ok || v.Cmp(q) > 0 {
			dst[k] = v.DeepCopy()
		}
	}
}

// FormatCharge returns the AnnotationCharge value of charge: "key=quantity" pairs, sorted,
// comma-separated.
func FormatCharge(charge corev1.ResourceList) string {
	parts := make([]string, 0, len(charge))
	for k, v := range charge {
		parts = append(parts, string(k)+"="+v.String())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// ParseCharge parses an AnnotationCharge value (FormatCharge); ok is false when s is not one.
func ParseCharge(s string) (corev1.ResourceList, bool) {
	out := corev1.ResourceList{}
	if s == "" {
		return out, true
	}
	for _, part := range strings.Split(s, ",") {
		k, v, found := strings.Cut(part, "=")
		if !found {
			return nil, false
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, false
		}
		out[corev1.ResourceName(k)] = q
	}
	return out, true
}

// BudgetExceeded is one key of the budget an object does not fit under.
type BudgetExceeded struct {
	Name                  corev1.ResourceName
	Requested, Used, Hard resource.Quantity
}

// BudgetDenial returns the refusal (RuleTenantQuota) of object what (its kind and ns/name),
// whose charge does not fit in its tenant's budget under the keys of over: "exceeded tenant
// budget: requested pods=1, used 3, limited 3", one clause per key. The object waits; nothing
// is asked of any apiserver for it meanwhile.
func BudgetDenial(what string, over []BudgetExceeded) *Denial {
	clauses := make([]string, len(over))
	for i, o := range over {
		clauses[i] = fmt.Sprintf("requested %s=%s, used %s, limited %s", o.Name, o.Requested.String(), o.Used.String(), o.Hard.String())
	}
	sort.Strings(clauses)
	return Deny(RuleTenantQuota, "%s waits: exceeded tenant budget (all of the tenant's namespaces together): %s; it is synced as soon as the tenant's other objects leave room; a TenantPolicy's limits.quota allows more",
		what, strings.Join(clauses, "; "))
}
