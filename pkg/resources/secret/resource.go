// Package secret syncs Secrets downward (tenant → super). A Secret whose data is larger than
// the tenant policy's limits.maxObjectBytes is refused (rule objectSize): it has no super copy.
package secret

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs Secrets.
type Resource struct{}

var _ resources.Resource = Resource{}

// Kind implements resources.Resource.
func (Resource) Kind() resources.Kind { return resources.KindSecret }

// TenantInformer implements resources.Resource.
func (Resource) TenantInformer(c *tenant.Cluster) cache.SharedIndexInformer {
	return c.Informers.Core().V1().Secrets().Informer()
}

// SuperInformer implements resources.Resource.
func (Resource) SuperInformer(env *resources.Env) cache.SharedIndexInformer {
	return env.SuperInformers.Core().V1().Secrets().Informer()
}

// Upward implements resources.Resource; Secrets have no upward path.
func (Resource) Upward(context.Context, *resources.Env, *tenant.Cluster, string, string) error {
	return nil
}

// Downward implements resources.Resource.
func (Resource) Downward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	tl := c.Informers.Core().V1().Secrets().Lister()
	sl := env.SuperInformers.Core().V1().Secrets().Lister()
	if o, err := tl.Secrets(ns).Get(name); err == nil && o.DeletionTimestamp.IsZero() && !Skip(o) {
		// limits.maxObjectBytes: an oversized object has no super copy (an existing one goes).
		if d := policy.CheckObjectBytes(c.Policy().Limits(), fmt.Sprintf("Secret %s/%s", ns, name), policy.SecretBytes(o)); d != nil {
			superNS := resources.SuperNamespace(c, ns)
			return reconcile.Refuse(ctx, c, resources.KindSecret, o, sl.Secrets(superNS), env.Super.CoreV1().Secrets(superNS), d)
		}
		resources.Admitted(c, resources.KindSecret, ns, name)
	}
	return reconcile.Reconcile(ctx, env, c, ns, name, reconcile.Spec[*corev1.Secret]{
		Kind:   resources.KindSecret,
		Tenant: func(ns string) reconcile.Getter[*corev1.Secret] { return tl.Secrets(ns) },
		Super:  func(ns string) reconcile.Getter[*corev1.Secret] { return sl.Secrets(ns) },
		Client: func(ns string) reconcile.Writer[*corev1.Secret] { return env.Super.CoreV1().Secrets(ns) },
		Skip:   Skip,
		Desired: func(o *corev1.Secret, superNS string, existing *corev1.Secret, has bool) *corev1.Secret {
			return Desired(c, o, superNS, existing, has)
		},
		Equal: Equal,
	})
}

// Desired returns the super copy of tenant Secret o in superNS.
func Desired(c *tenant.Cluster, o *corev1.Secret, superNS string, existing *corev1.Secret, has bool) *corev1.Secret {
	var ex metav1.Object
	if has {
		ex = existing
	}
	return &corev1.Secret{
		ObjectMeta: resources.DesiredMeta(c, o, superNS, ex),
		Type:       o.Type,
		Data:       o.Data,
		Immutable:  o.Immutable,
	}
}

// Skip reports Secrets that are never synced: service-account token Secrets hold tenant
// credentials minted by the tenant's controller-manager, and the super cluster's token
// controller would reject or rewrite them.
func Skip(o *corev1.Secret) bool { return o.Type == corev1.SecretTypeServiceAccountToken }

// Equal reports whether the super Secret has the desired content.
func Equal(want, have *corev1.Secret) bool {
	return resources.MetaEqual(want, have) &&
		equality.Semantic.DeepEqual(want.Data, have.Data) &&
		want.Type == have.Type &&
		equality.Semantic.DeepEqual(want.Immutable, have.Immutable)
}
