// Package poddisruptionbudget syncs PodDisruptionBudgets (policy/v1) downward (tenant → super).
// It is opt-in: syncer.Options.OptInKinds, flag --opt-in-kinds=PodDisruptionBudget.
//
// # Translation
//
// The spec is copied unchanged: its selector is namespace-local and the super Pods keep the
// tenant Pods' labels in the mapped namespace, so the super copy guards the same Pods against
// evictions in the super cluster (node drains). The status is not copied up: the tenant's own
// disruption controller computes it from the tenant Pods, whose statuses the syncer keeps
// current.
package poddisruptionbudget

import (
	"context"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/syncer/downward"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs PodDisruptionBudgets.
type Resource struct{}

var _ resources.Resource = Resource{}

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

// Upward implements resources.Resource; PodDisruptionBudgets have no upward path.
func (Resource) Upward(context.Context, *resources.Env, *tenant.Cluster, string, string) error {
	return nil
}

// Downward implements resources.Resource.
func (Resource) Downward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	tl := c.Informers.Policy().V1().PodDisruptionBudgets().Lister()
	sl := env.SuperInformers.Policy().V1().PodDisruptionBudgets().Lister()
	return downward.Reconcile(ctx, env, c, ns, name, downward.Spec[*policyv1.PodDisruptionBudget]{
		Kind:   resources.KindPodDisruptionBudget,
		Tenant: func(ns string) downward.Getter[*policyv1.PodDisruptionBudget] { return tl.PodDisruptionBudgets(ns) },
		Super:  func(ns string) downward.Getter[*policyv1.PodDisruptionBudget] { return sl.PodDisruptionBudgets(ns) },
		Client: func(ns string) downward.Writer[*policyv1.PodDisruptionBudget] {
			return env.Super.PolicyV1().PodDisruptionBudgets(ns)
		},
		Desired: func(o *policyv1.PodDisruptionBudget, superNS string, existing *policyv1.PodDisruptionBudget, has bool) *policyv1.PodDisruptionBudget {
			return Desired(c, o, superNS, existing, has)
		},
		Equal: Equal,
	})
}

// Desired returns the super copy of tenant PodDisruptionBudget o in superNS: its spec unchanged.
func Desired(c *tenant.Cluster, o *policyv1.PodDisruptionBudget, superNS string, existing *policyv1.PodDisruptionBudget, has bool) *policyv1.PodDisruptionBudget {
	var ex metav1.Object
	if has {
		ex = existing
	}
	return &policyv1.PodDisruptionBudget{ObjectMeta: resources.DesiredMeta(c, o, superNS, ex), Spec: *o.Spec.DeepCopy()}
}

// Equal reports whether the super PodDisruptionBudget has the desired spec and metadata.
func Equal(want, have *policyv1.PodDisruptionBudget) bool {
	return resources.MetaEqual(want, have) && equality.Semantic.DeepEqual(want.Spec, have.Spec)
}
