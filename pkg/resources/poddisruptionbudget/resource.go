// Package poddisruptionbudget syncs PodDisruptionBudgets (policy/v1) downward (tenant → super).
// It is opt-in: syncer.Options.OptInKinds, flag --opt-in-kinds=PodDisruptionBudget.
//
// # Translation
//
// The selector is copied unchanged: it is namespace-local and the super Pods keep the tenant
// Pods' labels (those the metadata allowlist passes) in the mapped namespace, so the super copy
// guards the same Pods against evictions in the super cluster (node drains).
//
// The budget is translated (policy.SuperBudget): super Pods have no owner references, so the
// super disruption controller cannot count the expected Pods of a maxUnavailable or
// percentage budget and would allow no eviction at all. The super copy has an integer
// minAvailable equal to the tenant's status.desiredHealthy (computed by the tenant's own
// disruption controller with the tenant's Deployments and StatefulSets) and
// unhealthyPodEvictionPolicy AlwaysAllow. A budget that allows no disruption with all its Pods
// healthy is synced allowing one, and reported (rule disruptionBudget), unless the tenant's
// policy sets disruptionBudgets.allowBlocking. The super copy follows the tenant's status
// (every status change is an update event) and the tenant's Pods (DependentMapper on Pods:
// the count of super Pods the selector matches bounds the budget).
//
// The status is not copied up: the tenant's own disruption controller computes it from the
// tenant Pods, whose statuses the syncer keeps current.
package poddisruptionbudget

import (
	"context"
	"strconv"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs PodDisruptionBudgets.
type Resource struct{}

var (
	_ resources.Resource        = Resource{}
	_ resources.DependentMapper = Resource{}
)

// Kind implements resources.Resource.
func (Resource) Kind() resources.Kind { return resources.KindPodDisruptionBudget }

// TenantInformer implements resources.Resource.
func (Resource) TenantInformer(c *tenant.Cluster) cache.SharedIndexInformer {
	return c.Informers.Policy().V1().PodDisruptionBudgets().Informer()
}

// SuperInformer implements resources.Resource.
func (Resource) SuperInformer(env *resources.Env) cache.SharedIndexInformer {
	return env.SuperInformers.Policy().V1().PodDisruptionBudgets().Informer()
}

// DependsOn implements resources.DependentMapper: a budget depends on its Pods.
func (Resource) DependsOn() []resources.Kind { return []resources.Kind{resources.KindPod} }

// Dependents implements resources.DependentMapper: the tenant budgets in tenant Pod p's
// namespace whose selector matches it.
func (Resource) Dependents(c *tenant.Cluster, p metav1.Object) []resources.Request {
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

// Upward implements resources.Resource; PodDisruptionBudgets have no upward path.
func (Resource) Upward(context.Context, *resources.Env, *tenant.Cluster, string, string) error {
	return nil
}

// Downward implements resources.Resource.
func (Resource) Downward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	tl := c.Informers.Policy().V1().PodDisruptionBudgets().Lister()
	sl := env.SuperInformers.Policy().V1().PodDisruptionBudgets().Lister()
	return reconcile.Reconcile(ctx, env, c, ns, name, reconcile.Spec[*policyv1.PodDisruptionBudget]{
		Kind:   resources.KindPodDisruptionBudget,
		Tenant: func(ns string) reconcile.Getter[*policyv1.PodDisruptionBudget] { return tl.PodDisruptionBudgets(ns) },
		Super:  func(ns string) reconcile.Getter[*policyv1.PodDisruptionBudget] { return sl.PodDisruptionBudgets(ns) },
		Client: func(ns string) reconcile.Writer[*policyv1.PodDisruptionBudget] {
			return env.Super.PolicyV1().PodDisruptionBudgets(ns)
		},
		Desired: func(o *policyv1.PodDisruptionBudget, superNS string, existing *policyv1.PodDisruptionBudget, has bool) *policyv1.PodDisruptionBudget {
			want, d := desired(env, c, o, superNS, existing, has)
			// Reported once per generation (not per resourceVersion: the tenant's status
			// changes with every Pod readiness change) and policy.
			resources.Filtered(c, resources.KindPodDisruptionBudget, o, policy.RuleDisruptionBudget, strconv.FormatInt(o.Generation, 10), d)
			return want
		},
		Equal: Equal,
	})
}

// Desired returns the super copy of tenant PodDisruptionBudget o in superNS: its spec
// translated by policy.SuperBudget for the super Pods in superNS its selector matches (read
// from env's super Pod cache).
func Desired(env *resources.Env, c *tenant.Cluster, o *policyv1.PodDisruptionBudget, superNS string, existing *policyv1.PodDisruptionBudget, has bool) *policyv1.PodDisruptionBudget {
	want, _ := desired(env, c, o, superNS, existing, has)
	return want
}

// desired is Desired, with the disruptionBudget report of the translation.
func desired(env *resources.Env, c *tenant.Cluster, o *policyv1.PodDisruptionBudget, superNS string, existing *policyv1.PodDisruptionBudget, has bool) (*policyv1.PodDisruptionBudget, *policy.Denial) {
	var ex metav1.Object
	if has {
		ex = existing
	}
	spec, d := policy.SuperBudget(c.Policy().DisruptionBudgets(), o, superPods(env, superNS, o.Spec.Selector))
	return &policyv1.PodDisruptionBudget{ObjectMeta: resources.DesiredMeta(c, o, superNS, ex), Spec: spec}, d
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
