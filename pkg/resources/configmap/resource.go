package configmap

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

// RootCAConfigMap is published into every namespace by each cluster's own controller-manager;
// the tenant's copy is never synced (the super cluster has its own).
const RootCAConfigMap = "kube-root-ca.crt"

// Resource syncs ConfigMaps downward; it is also their remediation check.
var Resource = &reconcile.Descriptor[*corev1.ConfigMap]{
	Name:     resources.KindConfigMap,
	Resource: corev1.Resource("configmaps"),
	Informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
		return f.Core().V1().ConfigMaps().Informer()
	},
	Client: func(env *resources.Env, ns string) reconcile.Writer[*corev1.ConfigMap] {
		return env.Super.CoreV1().ConfigMaps(ns)
	},
	Skip:    func(o *corev1.ConfigMap) bool { return o.Name == RootCAConfigMap },
	Refuse:  Refuse,
	Desired: Desired,
	Equal:   Equal,
}

// Refuse returns the refusal of tenant ConfigMap o, or nil: a stub that the tenant caches hold
// in its place (tenant.HeldBytes: over limits.maxObjectBytes or limits.maxCachedBytes), or
// an object over limits.maxObjectBytes (its whole size, policy.ObjectBytes).
func Refuse(c *tenant.Cluster, o *corev1.ConfigMap) *policy.Denial {
	what := fmt.Sprintf("ConfigMap %s/%s", o.Namespace, o.Name)
	if d := c.Held.HeldOutDenial(c.Policy().Limits(), o, what); d != nil {
		return d
	}
	return policy.CheckObjectBytes(c.Policy().Limits(), what, policy.ObjectBytes(o))
}

// Desired returns the super copy of tenant ConfigMap o in superNS (existing: the current
// super copy, or nil).
func Desired(_ *resources.Env, c *tenant.Cluster, o *corev1.ConfigMap, superNS string, existing metav1.Object) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: resources.DesiredMeta(c, o, superNS, existing),
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
