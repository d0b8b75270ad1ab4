package serviceaccount

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// DefaultServiceAccount is created in every namespace by each cluster's own
// controller-manager; the tenant's is never synced (the super namespace gets its own).
const DefaultServiceAccount = "default"

// Resource syncs ServiceAccounts downward; it is also their remediation check.
var Resource = &reconcile.Descriptor[*corev1.ServiceAccount]{
	Name:     resources.KindServiceAccount,
	Resource: corev1.Resource("serviceaccounts"),
	Informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
		return f.Core().V1().ServiceAccounts().Informer()
	},
	Client: func(env *resources.Env, ns string) reconcile.Writer[*corev1.ServiceAccount] {
		return env.Super.CoreV1().ServiceAccounts(ns)
	},
	Skip:    func(o *corev1.ServiceAccount) bool { return o.Name == DefaultServiceAccount },
	Desired: Desired,
	Equal:   Equal,
}

// Desired returns the super copy of tenant ServiceAccount o in superNS (existing: the current
// super copy, or nil). Token Secrets are per cluster: the list of tenant token Secrets is not
// copied.
func Desired(_ *resources.Env, c *tenant.Cluster, o *corev1.ServiceAccount, superNS string, existing metav1.Object) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		ObjectMeta:                   resources.DesiredMeta(c, o, superNS, existing),
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
