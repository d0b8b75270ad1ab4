package namespace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func TestCheck(t *testing.T) {
	c := withLimitRange(&tenant.Cluster{Name: "t", UID: "u"})
	now := metav1.Now()
	var env *resources.Env
	build := func() (*corev1.Namespace, *corev1.Namespace) {
		cs := fake.NewClientset()
		env = &resources.Env{Super: cs, SuperInformers: informers.NewSharedInformerFactory(cs, 0)}
		tns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "ns-uid"}}
		sns := resources.DesiredNamespace(&resources.Env{}, c, tns, nil)
		sns.UID = "super-ns-uid"
		sns.Labels["added-by-admins"] = "kept" // never compared
		quotas, limits := admit.BoundsInformers(env)
		if err := quotas.GetIndexer().Add(admit.DesiredQuota(c, sns)); err != nil {
			t.Fatal(err)
		}
		if err := limits.GetIndexer().Add(admit.DesiredLimitRange(c, sns)); err != nil {
			t.Fatal(err)
		}
		return tns, sns
	}
	cases := map[string]restest.CheckCase[*corev1.Namespace]{
		"in sync": {Want: resources.InSync},
		"quota missing": {
			Mutate: func(tns, sns *corev1.Namespace) (*corev1.Namespace, *corev1.Namespace) {
				quotas, _ := admit.BoundsInformers(env)
				_ = quotas.GetIndexer().Delete(admit.DesiredQuota(c, sns))
				return tns, sns
			},
			Want: resources.MismatchContentDiffers,
		},
		"limit range edited": {
			Mutate: func(tns, sns *corev1.Namespace) (*corev1.Namespace, *corev1.Namespace) {
				_, limits := admit.BoundsInformers(env)
				lr := admit.DesiredLimitRange(c, sns)
				lr.Spec.Limits[0].Default = nil
				_ = limits.GetIndexer().Update(lr)
				return tns, sns
			},
			Want: resources.MismatchContentDiffers,
		},
		"missing": {
			Mutate: func(tns, _ *corev1.Namespace) (*corev1.Namespace, *corev1.Namespace) { return tns, nil },
			Want:   resources.MismatchMissingInSuper,
		},
		"super namespace terminating, tenant not: the reconciler waits": {
			Mutate: func(tns, sns *corev1.Namespace) (*corev1.Namespace, *corev1.Namespace) {
				sns.DeletionTimestamp = &now
				return tns, sns
			},
			Want: resources.InSync,
		},
		"tenant namespace terminating, super live": {
			Mutate: func(tns, sns *corev1.Namespace) (*corev1.Namespace, *corev1.Namespace) {
				tns.DeletionTimestamp = &now
				return tns, sns
			},
			Want: resources.MismatchStaleInSuper,
		},
		"tenant namespace recreated": {
			Mutate: func(tns, sns *corev1.Namespace) (*corev1.Namespace, *corev1.Namespace) {
				tns.UID = "new"
				return tns, sns
			},
			Want: resources.MismatchStaleInSuper,
		},
	}
	restest.RunCheckCases(t, func(t, s metav1.Object) resources.Mismatch { return (Resource).Check(env, c, t, s) }, build, cases)
}
