package configmap

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func TestCheck(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "tenant-uid"}
	now := metav1.Now()
	build := func() (*corev1.ConfigMap, *corev1.ConfigMap) {
		tc := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "shop", UID: "cm-uid", Labels: map[string]string{"a": "1"}},
			Data:       map[string]string{"k": "v"},
		}
		sc := Desired(nil, c, tc, resources.SuperNamespace(c, "shop"), nil)
		sc.UID = "super-uid"
		sc.Annotations["added-in-super"] = "kept"
		return tc, sc
	}
	cases := map[string]restest.CheckCase[*corev1.ConfigMap]{
		"in sync": {Want: resources.InSync},
		"missing": {Mutate: func(tc, _ *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap) { return tc, nil }, Want: resources.MismatchMissingInSuper},
		"root CA missing": {Mutate: func(tc, _ *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap) {
			tc.Name = RootCAConfigMap
			return tc, nil
		}, Want: resources.InSync},
		"data edited in super": {
			Mutate: func(tc, sc *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap) {
				sc.Data = map[string]string{"k": "w"}
				return tc, sc
			},
			Want: resources.MismatchContentDiffers,
		},
		"data changed in tenant": {
			Mutate: func(tc, sc *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap) {
				tc.Data = map[string]string{"k2": "v"}
				return tc, sc
			},
			Want: resources.MismatchContentDiffers,
		},
		"tenant label removed": {
			Mutate: func(tc, sc *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap) { tc.Labels = nil; return tc, sc },
			Want:   resources.MismatchContentDiffers,
		},
		"stale copy of a recreated tenant ConfigMap": {
			Mutate: func(tc, sc *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap) { tc.UID = "new"; return tc, sc },
			Want:   resources.MismatchStaleInSuper,
		},
		"tenant being deleted": {
			Mutate: func(tc, sc *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap) {
				tc.DeletionTimestamp = &now
				return tc, sc
			},
			Want: resources.MismatchStaleInSuper,
		},
		"tenant being deleted, super gone": {
			Mutate: func(tc, _ *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap) {
				tc.DeletionTimestamp = &now
				return tc, nil
			},
			Want: resources.InSync,
		},
	}
	restest.RunCheckCases(t, func(t, s metav1.Object) resources.Mismatch { return (Resource).Check(nil, c, t, s) }, build, cases)
}
