// Package serviceaccount syncs ServiceAccounts downward (tenant → super).
package serviceaccount

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// DefaultServiceAccount is created in every namespace by each cluster's own
// controller-manager; the tenant's is never synced (the super namespace gets its own).
const DefaultServiceAccount = "default"

// Resource syncs ServiceAccounts.
type Resource struct{}

var _ resources.Resource = Resource{}

// Kind implements resources.Resource.
func (Resource) Kind() resources.Kind { return resources.KindServiceAccount }

// TenantInformer implements resources.Resource.
func (Resource) TenantInformer(c *tenant.Cluster) cache.SharedIndexInformer {
	return c.Informers.Core().V1().ServiceAccounts().Informer()
}

// SuperInformer implements resources.Resource.
func (Resource) SuperInformer(env *resources.Env) cache.SharedIndexInformer {
	return env.SuperInformers.Core().V1().ServiceAccounts().Informer()
}

// Upward implements resources.Resource; ServiceAccounts have no upward path.
func (Resource) Upward(context.Context, *resources.Env, *tenant.Cluster, string, string) error {
	return nil
}

// Downward implements resources.Resource.
func (Resource) Downward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	tl := c.Informers.Core().V1().ServiceAccounts().Lister()
	sl := env.SuperInformers.Core().V1().ServiceAccounts().Lister()
	return reconcile.Reconcile(ctx, env, c, ns, name, reconcile.Spec[*corev1.ServiceAccount]{
		Kind:   resources.KindServiceAccount,
		Tenant: func(ns string) reconcile.Getter[*corev1.ServiceAccount] { return tl.ServiceAccounts(ns) },
		Super:  func(ns string) reconcile.Getter[*corev1.ServiceAccount] { return sl.ServiceAccounts(ns) },
		Client: func(ns string) reconcile.Writer[*corev1.ServiceAccount] {
			return env.Super.CoreV1().ServiceAccounts(ns)
		},
		Skip: func(o *corev1.ServiceAccount) bool { return o.Name == DefaultServiceAccount },
		Desired: func(o *corev1.ServiceAccount, superNS string, existing *corev1.ServiceAccount, has bool) *corev1.ServiceAccount {
			return Desired(c, o, superNS, existing, has)
		},
		Equal: Equal,
	})
}

// Desired returns the super copy of tenant ServiceAccount o in superNS.
func Desired(c *tenant.Cluster, o *corev1.ServiceAccount, superNS string, existing *corev1.ServiceAccount, has bool) *corev1.ServiceAccount {
	var ex metav1.Object
	if has {
		ex = existing
	}
	return &corev1.ServiceAccount{
		ObjectMeta: resources.DesiredMeta(c, o, superNS, ex),
		// Token Secrets are per cluster: the list of tenant token Secrets is not copied.
		ImagePullSecrets:             o.ImagePullSecrets,
		AutomountServiceAccountToken: o.AutomountServiceAccountToken,
	}
}

// Equal reports whether the super ServiceAccount has the desired content.
func Equal(want, have *corev1.ServiceAccount) bool {
	return resources.MetaEqual(want, have) &&
		equality.Semantic.DeepEqual(want.ImagePullSecrets, have.ImagePullSecrets) &&
		equality.Semantic.DeepEqual(want.AutomountServiceAccountToken, have.AutomountServiceAccountToken)
}
