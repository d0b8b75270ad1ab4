package poddisruptionbudget

import (
	"context"
	"strconv"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs PodDisruptionBudgets downward (it is also their remediation check); a
// budget is reconciled again when a Pod it selects changes (resources.DependentMapper).
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

// DependsOn implements resources.DependentMapper: a budget depends on its Pods.
func (resource) DependsOn() []resources.Kind { return []resources.Kind{resources.KindPod} }

// Dependents implements resources.DependentMapper: the tenant budgets in tenant Pod p's
// namespace whose selector matches it.
func (resource) Dependents(c *tenant.Cluster, p metav1.Object) []resources.Request {
	pdbs, err := c.Informers.Policy().V1().PodDisruptionBudgets().Lister().PodDisruptionBudgets(p.GetNamespace()).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []resources.Request
	for _, b := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(p.GetLabels())) {
			continue
		}
		out = append(out, resources.Request{Tenant: c.Name, Kind: resources.KindPodDisruptionBudget, Namespace: b.Namespace, Name: b.Name})
	}
	return out
}

// Downward implements resources.Resource: Reconcile with the descriptor's Spec, reporting
// what the translation changed (rule disruptionBudget) once per generation (not per
// resourceVersion: the tenant's status changes with every Pod readiness change) and policy.
func (r resource) Downward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	s := r.Spec(env, c)
	s.Desired = func(o *policyv1.PodDisruptionBudget, superNS string, existing *policyv1.PodDisruptionBudget, has bool) *policyv1.PodDisruptionBudget {
		var ex metav1.Object
		if has {
			ex = existing
		}
		want, d := desired(env, c, o, superNS, ex)
		resources.Filtered(c, resources.KindPodDisruptionBudget, o, policy.RuleDisruptionBudget, strconv.FormatInt(o.Generation, 10), d)
		return want
	}
	return reconcile.Reconcile(ctx, env, c, ns, name, s)
}

// Desired returns the super copy of tenant PodDisruptionBudget o in superNS (existing: the
// current super copy, or nil): its spec
// translated by policy.SuperBudget for the super Pods in superNS its selector matches (read
// from env's super Pod cache).
func Desired(env *resources.Env, c *tenant.Cluster, o *policyv1.PodDisruptionBudget, superNS string, existing metav1.Object) *policyv1.PodDisruptionBudget {
	want, _ := desired(env, c, o, superNS, existing)
	return want
}

// desired is Desired, with the disruptionBudget report of the translation.
func desired(env *resources.Env, c *tenant.Cluster, o *policyv1.PodDisruptionBudget, superNS string, existing metav1.Object) (*policyv1.PodDisruptionBudget, *policy.Denial) {
	spec, d := policy.SuperBudget(c.Policy().DisruptionBudgets(), o, superPods(env, superNS, o.Spec.Selector))
	return &policyv1.PodDisruptionBudget{ObjectMeta: resources.DesiredMeta(c, o, superNS, existing), Spec: spec}, d
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
