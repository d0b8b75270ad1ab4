package poddisruptionbudget

import (
	"context"
	"strconv"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs PodDisruptionBudgets downward (it is also their remediation check); a
// budget is reconciled again when a Pod it selects or another budget of its namespace
// changes (resources.DependentMapper).
var Resource = resource{&reconcile.Descriptor[*policyv1.PodDisruptionBudget]{
	Name:     resources.KindPodDisruptionBudget,
	Resource: policyv1.Resource("poddisruptionbudgets"),
	Informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
		return f.Policy().V1().PodDisruptionBudgets().Informer()
	},
	Client: func(env *resources.Env, ns string) reconcile.Writer[*policyv1.PodDisruptionBudget] {
		return env.Super.PolicyV1().PodDisruptionBudgets(ns)
	},
	Desired: Desired,
	Equal:   Equal,
}}

// resource is the PodDisruptionBudget descriptor with its dependents and the report of what
// the translation changed.
type resource struct {
	*reconcile.Descriptor[*policyv1.PodDisruptionBudget]
}

var _ resources.DependentMapper = resource{}

// DependsOn implements resources.DependentMapper: a budget depends on its Pods, and on the
// other budgets of its namespace (a second budget over the same Pods is refused while the
// older one exists).
func (resource) DependsOn() []resources.Kind {
	return []resources.Kind{resources.KindPod, resources.KindPodDisruptionBudget}
}

// Dependents implements resources.DependentMapper: for tenant Pod p, the tenant budgets in
// its namespace whose selector matches it; for a tenant budget, the other budgets of its
// namespace.
func (resource) Dependents(c *tenant.Cluster, p metav1.Object) []resources.Request {
	pdbs, err := c.Informers.Policy().V1().PodDisruptionBudgets().Lister().PodDisruptionBudgets(p.GetNamespace()).List(labels.Everything())
	if err != nil {
		return nil
	}
	_, isBudget := p.(*policyv1.PodDisruptionBudget)
	var out []resources.Request
	for _, b := range pdbs {
		if isBudget {
			if b.Name == p.GetName() {
				continue
			}
		} else if sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector); err != nil || !sel.Matches(labels.Set(p.GetLabels())) {
			continue
		}
		out = append(out, resources.Request{Tenant: c.Name, Kind: resources.KindPodDisruptionBudget, Namespace: b.Namespace, Name: b.Name})
	}
	return out
}

// Downward implements resources.Resource: a budget that policy.SecondBudget refuses (a Pod of
// its namespace is under an older budget too) is reported (rule disruptionBudget, a Warning
// Event once per generation and older budget, not per resourceVersion: the tenant's status
// changes with every Pod readiness change) and gets no super copy (one synced before is
// deleted); any other is reconciled with the descriptor's Spec, translated by
// policy.SuperBudget.
func (r resource) Downward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	s := r.Spec(env, c)
	if o, err := s.Tenant(ns).Get(name); err == nil && o.DeletionTimestamp.IsZero() {
		if over, d := secondBudget(c, o); d != nil {
			admit.Filtered(c, resources.KindPodDisruptionBudget, o, policy.RuleDisruptionBudget, strconv.FormatInt(o.Generation, 10)+"/"+over, d)
			superNS := resources.SuperNamespace(c, ns)
			return reconcile.DeleteOwnedSuper(ctx, c, s.Super(superNS), s.Client(superNS), name)
		}
		superNS := resources.SuperNamespace(c, ns)
		var sObj *policyv1.PodDisruptionBudget
		if got, err := s.Super(superNS).Get(name); err == nil && conversion.OwnedByTenant(got, c.UID) {
			sObj = got
		}
		_, h := policy.SuperBudget(o, superPods(env, superNS, o.Spec.Selector), drainHold(env, c, superNS, o, sObj))
		switch {
		case h.Report:
			bound := time.Duration(maxBlockingSeconds(c)) * time.Second
			admit.Filtered(c, resources.KindPodDisruptionBudget, o, policy.RuleDisruptionBudget, "maxBlocking/"+h.Since.UTC().Format(time.RFC3339),
				policy.Deny(policy.RuleDisruptionBudget, "PodDisruptionBudget %s/%s has allowed no disruption since %s while a super-cluster node drain waits for its Pods; "+
					"the provider's bound (TenantPolicy disruptionBudgets.maxBlockingSeconds: %s) lets the drain evict one of its Pods (minAvailable %d in the super cluster)",
					o.Namespace, o.Name, h.Since.UTC().Format(time.RFC3339), bound, h.MinAvailable))
		case h.Relaxed: // reported when it was relaxed
		default:
			admit.Filtered(c, resources.KindPodDisruptionBudget, o, policy.RuleDisruptionBudget, "", nil)
		}
		if err := reconcile.Reconcile(ctx, env, c, ns, name, s); err != nil || h.Wait <= 0 {
			return err
		}
		return resources.RequeueAfter{After: h.Wait} // the bound is derived from the super status: look again then
	}
	return reconcile.Reconcile(ctx, env, c, ns, name, s)
}

// maxBlockingSeconds returns tenant c's TenantPolicy disruptionBudgets.maxBlockingSeconds (0:
// off).
func maxBlockingSeconds(c *tenant.Cluster) int32 {
	if d := c.Policy().DisruptionBudgets(); d != nil && d.MaxBlockingSeconds != nil {
		return max(*d.MaxBlockingSeconds, 0)
	}
	return 0
}

// drainHold returns the policy.DrainHold of tenant budget o whose super copy in superNS is
// sObj (or nil): tenant c's bound, and whether one of the super Pods its selector matches is on
// a cordoned super Node (from env's super Node cache). A zero hold (off) when c's policy sets
// no bound.
func drainHold(env *resources.Env, c *tenant.Cluster, superNS string, o, sObj *policyv1.PodDisruptionBudget) policy.DrainHold {
	secs := maxBlockingSeconds(c)
	if secs == 0 {
		return policy.DrainHold{}
	}
	h := policy.DrainHold{Bound: time.Duration(secs) * time.Second, Now: time.Now(), Super: sObj}
	sel, err := metav1.LabelSelectorAsSelector(o.Spec.Selector)
	if err != nil || sObj == nil {
		return h
	}
	pods, err := podcache.ListerOf(env.SuperInformers.Core().V1().Pods().Informer()).Pods(superNS).List(sel)
	if err != nil {
		return h
	}
	nodes := env.SuperNodes.Core().V1().Nodes().Lister()
	for _, p := range pods {
		if p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
			continue
		}
		if n, err := nodes.Get(p.Spec.NodeName); err == nil && n.Spec.Unschedulable {
			h.Draining = true
			break
		}
	}
	return h
}

// Check implements resources.Checker: a budget refused as a second budget is in sync without
// a super copy.
func (r resource) Check(env *resources.Env, c *tenant.Cluster, t, s metav1.Object) resources.Mismatch {
	if o, ok := t.(*policyv1.PodDisruptionBudget); ok && o != nil && o.DeletionTimestamp.IsZero() {
		if _, d := secondBudget(c, o); d == nil {
			return r.Descriptor.Check(env, c, t, s)
		}
		if s == nil {
			return resources.InSync
		}
		return resources.MismatchStaleInSuper
	}
	return r.Descriptor.Check(env, c, t, s)
}

// secondBudget returns the refusal of tenant budget o that keeps it from a super copy, with a
// key naming its cause for the Event's once-per-cause record: policy.SelectorNotCopied
// ("selector"), or policy.SecondBudget over the tenant Pods and budgets of its namespace (from
// tenant c's caches; the older budget's name), or a budget or Pod of the namespace held out
// of the syncer's memory ("held-out/<name>": SecondBudget cannot see what a stub selects).
func secondBudget(c *tenant.Cluster, o *policyv1.PodDisruptionBudget) (string, *policy.Denial) {
	allowed := c.Policy().Metadata().AllowedLabelPrefixes
	if d := policy.SelectorNotCopied(o, func(k string) bool { return !resources.IsSilentKey(k) && policy.KeyAllowed(allowed, k) }); d != nil {
		return "selector", d
	}
	others, err := c.Informers.Policy().V1().PodDisruptionBudgets().Lister().PodDisruptionBudgets(o.Namespace).List(labels.Everything())
	if err != nil || len(others) < 2 {
		return "", nil
	}
	pods, err := podcache.ListerOf(c.Informers.Core().V1().Pods().Informer()).Pods(o.Namespace).List(labels.Everything())
	if err != nil {
		return "", nil
	}
	// A stub (held out of the syncer's memory) shows no selector or labels, while its super
	// copy, left as it was, still selects or carries them: the check waits for it.
	for _, b := range others {
		if b.Name != o.Name && tenant.IsHeldOut(b) {
			return "held-out/" + b.Name, heldOutNeighbour(o, "PodDisruptionBudget", b.Name)
		}
	}
	objs := make([]metav1.Object, len(pods))
	for i, p := range pods {
		if tenant.IsHeldOut(p) {
			return "held-out/" + p.Name, heldOutNeighbour(o, "Pod", p.Name)
		}
		objs[i] = p
	}
	return policy.SecondBudget(o, others, objs)
}

// heldOutNeighbour is the refusal (rule disruptionBudget) of tenant budget o while the kind
// name of its namespace is held out of the syncer's memory.
func heldOutNeighbour(o *policyv1.PodDisruptionBudget, kind, name string) *policy.Denial {
	return policy.Deny(policy.RuleDisruptionBudget, "PodDisruptionBudget %s/%s cannot be checked against %s %s, which the syncer keeps out of its memory (the tenant's limits.maxObjectBytes or maxCachedBytes): "+
		"a budget over the same Pods as another would hold the super cluster's drains, so it is synced once %s is", o.Namespace, o.Name, kind, name, name)
}

// Desired returns the super copy of tenant PodDisruptionBudget o in superNS (existing: the
// current super copy, or nil): its spec translated by policy.SuperBudget for the super Pods in
// superNS its selector matches (read from env's super Pod cache).
func Desired(env *resources.Env, c *tenant.Cluster, o *policyv1.PodDisruptionBudget, superNS string, existing metav1.Object) *policyv1.PodDisruptionBudget {
	sObj, _ := existing.(*policyv1.PodDisruptionBudget)
	if sObj != nil && !conversion.OwnedByTenant(sObj, c.UID) {
		sObj = nil
	}
	spec, _ := policy.SuperBudget(o, superPods(env, superNS, o.Spec.Selector), drainHold(env, c, superNS, o, sObj))
	return &policyv1.PodDisruptionBudget{ObjectMeta: resources.DesiredMeta(c, o, superNS, existing), Spec: spec}
}

// superPods returns the number of super Pods in superNS that selector matches, as the super
// disruption controller counts them for an integer minAvailable (every phase; a nil selector
// matches none).
func superPods(env *resources.Env, superNS string, selector *metav1.LabelSelector) int32 {
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return 0
	}
	pods, err := podcache.ListerOf(env.SuperInformers.Core().V1().Pods().Informer()).Pods(superNS).List(sel)
	if err != nil {
		return 0
	}
	return int32(len(pods))
}

// Equal reports whether the super PodDisruptionBudget has the desired spec and metadata.
func Equal(want, have *policyv1.PodDisruptionBudget) bool {
	return resources.MetaEqual(want, have) && equality.Semantic.DeepEqual(want.Spec, have.Spec)
}
