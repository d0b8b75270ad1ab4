// Package configmap syncs ConfigMaps downward (tenant → super). A ConfigMap whose data and
// binaryData are larger than the tenant policy's limits.maxObjectBytes is refused (rule
// objectSize): it has no super copy.
package configmap

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

// RootCAConfigMap is published into every namespace by each cluster's own controller-manager;
// the tenant's copy is never synced (the super cluster has its own).
const RootCAConfigMap = "kube-root-ca.crt"

// Resource syncs ConfigMaps.
type Resource struct{}

var _ resources.Resource = Resource{}

// Kind implements resources.Resource.
func (Resource) Kind() resources.Kind { return resources.KindConfigMap }

// TenantInformer implements resources.Resource.
func (Resource) TenantInformer(c *tenant.Cluster) cache.SharedIndexInformer {
	return c.Informers.Core().V1().ConfigMaps().Informer()
}

// SuperInformer implements resources.Resource.
func (Resource) SuperInformer(env *resources.Env) cache.SharedIndexInformer {
	return env.SuperInformers.Core().V1().ConfigMaps().Informer()
}

// Upward implements resources.Resource; ConfigMaps have no upward path.
func (Resource) Upward(context.Context, *resources.Env, *tenant.Cluster, string, string) error {
	return nil
}

// Downward implements resources.Resource.
func (Resource) Downward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	tl := c.Informers.Core().V1().ConfigMaps().Lister()
	sl := env.SuperInformers.Core().V1().ConfigMaps().Lister()
	if o, err := tl.ConfigMaps(ns).Get(name); err == nil && o.DeletionTimestamp.IsZero() && o.Name != RootCAConfigMap {
		// limits.maxObjectBytes: an oversized object has no super copy (an existing one goes).
		if d := policy.CheckObjectBytes(c.Policy().Limits(), fmt.Sprintf("ConfigMap %s/%s", ns, name), policy.ConfigMapBytes(o)); d != nil {
			superNS := resources.SuperNamespace(c, ns)
			return reconcile.Refuse(ctx, c, resources.KindConfigMap, o, sl.ConfigMaps(superNS), env.Super.CoreV1().ConfigMaps(superNS), d)
		}
		resources.Admitted(c, resources.KindConfigMap, ns, name)
	}
	return reconcile.Reconcile(ctx, env, c, ns, name, reconcile.Spec[*corev1.ConfigMap]{
		Kind:   resources.KindConfigMap,
		Tenant: func(ns string) reconcile.Getter[*corev1.ConfigMap] { return tl.ConfigMaps(ns) },
		Super:  func(ns string) reconcile.Getter[*corev1.ConfigMap] { return sl.ConfigMaps(ns) },
		Client: func(ns string) reconcile.Writer[*corev1.ConfigMap] { return env.Super.CoreV1().ConfigMaps(ns) },
		Skip:   func(o *corev1.ConfigMap) bool { return o.Name == RootCAConfigMap },
		Desired: func(o *corev1.ConfigMap, superNS string, existing *corev1.ConfigMap, has bool) *corev1.ConfigMap {
			return Desired(c, o, superNS, existing, has)
		},
		Equal: Equal,
	})
}

// Desired returns the super copy of tenant ConfigMap o in superNS.
func Desired(c *tenant.Cluster, o *corev1.ConfigMap, superNS string, existing *corev1.ConfigMap, has bool) *corev1.ConfigMap {
	var ex metav1.Object
	if has {
		ex = existing
	}
	return &corev1.ConfigMap{
		ObjectMeta: resources.DesiredMeta(c, o, superNS, ex),
		Data:       o.Data,
		BinaryData: o.BinaryData,
		Immutable:  o.Immutable,
	}
}

// Equal reports whether the super ConfigMap has the desired content.
func Equal(want, have *corev1.ConfigMap) bool {
	return resources.MetaEqual(want, have) &&
		equality.Semantic.DeepEqual(want.Data, have.Data) &&
		equality.Semantic.DeepEqual(want.BinaryData, have.BinaryData) &&
		equality.Semantic.DeepEqual(want.Immutable, have.Immutable)
}
