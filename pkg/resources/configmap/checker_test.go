package configmap

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/resources"
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
	cases := map[string]struct {
		mutate func(tc, sc *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap)
		want   resources.Mismatch
	}{
		"in sync": {want: resources.InSync},
		"missing": {mutate: func(tc, _ *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap) { return tc, nil }, want: resources.MismatchMissingInSuper},
		"root CA missing": {mutate: func(tc, _ *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap) {
			tc.Name = RootCAConfigMap
			return tc, nil
		}, want: resources.InSync},
		"data edited in super": {
			mutate: func(tc, sc *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap) {
				sc.Data = map[string]string{"k": "w"}
				return tc, sc
			},
			want: resources.MismatchContentDiffers,
		},
		"data changed in tenant": {
			mutate: func(tc, sc *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap) {
				tc.Data = map[string]string{"k2": "v"}
				return tc, sc
			},
			want: resources.MismatchContentDiffers,
		},
		"tenant label removed": {
			mutate: func(tc, sc *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap) { tc.Labels = nil; return tc, sc },
			want:   resources.MismatchContentDiffers,
		},
		"stale copy of a recreated tenant ConfigMap": {
			mutate: func(tc, sc *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap) { tc.UID = "new"; return tc, sc },
			want:   resources.MismatchStaleInSuper,
		},
		"tenant being deleted": {
			mutate: func(tc, sc *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap) {
				tc.DeletionTimestamp = &now
				return tc, sc
			},
			want: resources.MismatchStaleInSuper,
		},
		"tenant being deleted, super gone": {
			mutate: func(tc, _ *corev1.ConfigMap) (*corev1.ConfigMap, *corev1.ConfigMap) {
				tc.DeletionTimestamp = &now
				return tc, nil
			},
			want: resources.InSync,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tObj, sObj := build()
			if tc.mutate != nil {
				tObj, sObj = tc.mutate(tObj, sObj)
			}
			var s metav1.Object
			if sObj != nil {
				s = sObj
			}
			if got := (Resource).Check(nil, c, tObj, s); got != tc.want {
				t.Errorf("Check = %q, want %q", got, tc.want)
			}
		})
	}
}
