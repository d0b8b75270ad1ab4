package ingress

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func TestCheck(t *testing.T) {
	c := &tenant.Cluster{Name: "t", UID: "u"}
	class := "nginx"
	build := func() (*networkingv1.Ingress, *networkingv1.Ingress) {
		ti := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "ing-uid"},
			Spec: networkingv1.IngressSpec{IngressClassName: &class}}
		return ti, Desired(nil, c, ti, "t-abc-shop", nil)
	}
	now := metav1.Now()
	for name, tc := range map[string]struct {
		mutate func(ti, si *networkingv1.Ingress) (metav1.Object, metav1.Object)
		want   resources.Mismatch
	}{
		"in sync": {mutate: func(ti, si *networkingv1.Ingress) (metav1.Object, metav1.Object) { return ti, si }, want: resources.InSync},
		"missing": {mutate: func(ti, _ *networkingv1.Ingress) (metav1.Object, metav1.Object) { return ti, nil }, want: resources.MismatchMissingInSuper},
		"spec drifted in super": {mutate: func(ti, si *networkingv1.Ingress) (metav1.Object, metav1.Object) {
			other := "traefik"
			si.Spec.IngressClassName = &other
			return ti, si
		}, want: resources.MismatchContentDiffers},
		"super annotation added by others": {mutate: func(ti, si *networkingv1.Ingress) (metav1.Object, metav1.Object) {
			si.Annotations["lb.example.com/id"] = "1"
			return ti, si
		}, want: resources.InSync},
		"tenant deleting, super live": {mutate: func(ti, si *networkingv1.Ingress) (metav1.Object, metav1.Object) {
			ti.DeletionTimestamp = &now
			return ti, si
		}, want: resources.MismatchStaleInSuper},
	} {
		ti, si := build()
		tobj, sobj := tc.mutate(ti, si)
		var s metav1.Object
		if sobj != nil && sobj.(*networkingv1.Ingress) != nil {
			s = sobj
		}
		if got := (Resource).Check(nil, c, tobj, s); got != tc.want {
			t.Errorf("%s: Check = %q, want %q", name, got, tc.want)
		}
	}
}
