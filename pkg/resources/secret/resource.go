package secret

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs Secrets downward; it is also their remediation check.
var Resource = &reconcile.Descriptor[*corev1.Secret]{
	Name:     resources.KindSecret,
	Resource: corev1.Resource("secrets"),
	Informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
		return f.Core().V1().Secrets().Informer()
	},
	Client: func(env *resources.Env, ns string) reconcile.Writer[*corev1.Secret] {
		return env.Super.CoreV1().Secrets(ns)
	},
	Skip:    Skip,
	Refuse:  Refuse,
	Desired: Desired,
	Equal:   Equal,
}

// Refuse returns the refusal of tenant Secret o, or nil: a stub that the tenant caches hold in
// its place (tenant.HeldBytes: over limits.maxObjectBytes or limits.maxCachedBytes), or an
// object over limits.maxObjectBytes (its whole size, policy.ObjectBytes).
func Refuse(c *tenant.Cluster, o *corev1.Secret) *policy.Denial {
	what := fmt.Sprintf("Secret %s/%s", o.Namespace, o.Name)
	if d := c.Held.HeldOutDenial(c.Policy().Limits(), o, what); d != nil {
		return d
	}
	return policy.CheckObjectBytes(c.Policy().Limits(), what, policy.ObjectBytes(o))
}

// Desired returns the super copy of tenant Secret o in superNS (existing: the current super
// copy, or nil).
func Desired(_ *resources.Env, c *tenant.Cluster, o *corev1.Secret, superNS string, existing metav1.Object) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: resources.DesiredMeta(c, o, superNS, existing),
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
