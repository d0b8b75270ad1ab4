package service

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func TestCheck(t *testing.T) {
	c := &tenant.Cluster{Name: "t", UID: "u"}
	// build returns a tenant LoadBalancer Service and its super copy as the super cluster
	// allocated it (its own clusterIP; the tenant's node port), with the same load-balancer
	// status.
	build := func() (*corev1.Service, *corev1.Service) {
		ts := svc(corev1.ServiceTypeLoadBalancer, "10.0.0.9")
		ts.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}}
		ss := Desired(c, ts, resources.SuperNamespace(c, ts.Namespace), nil)
		ss.UID = "super-uid"
		ss.Spec.ClusterIP, ss.Spec.ClusterIPs = "10.96.0.5", []string{"10.96.0.5"}
		ss.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		ss.Spec.Ports[0].NodePort = ts.Spec.Ports[0].NodePort
		ss.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}}
		return ts, ss
	}
	cases := map[string]struct {
		mutate func(ts, ss *corev1.Service)
		want   resources.Mismatch
	}{
		"in sync (super allocations kept)": {want: resources.InSync},
		"port changed in the tenant": {
			mutate: func(ts, _ *corev1.Service) { ts.Spec.Ports[0].Port = 8443 },
			want:   resources.MismatchContentDiffers,
		},
		"node port differs from the tenant's": {
			mutate: func(_, ss *corev1.Service) { ss.Spec.Ports[0].NodePort = 31000 },
			want:   resources.MismatchContentDiffers,
		},
		"selector edited in the super cluster": {
			mutate: func(_, ss *corev1.Service) { ss.Spec.Selector = map[string]string{"app": "evil"} },
			want:   resources.MismatchContentDiffers,
		},
		"load-balancer status not copied up": {
			mutate: func(_, ss *corev1.Service) {
				ss.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.51.100.1"}}
			},
			want: resources.MismatchStatusDiffers,
		},
		"stale copy": {
			mutate: func(ts, _ *corev1.Service) { ts.UID = "recreated" },
			want:   resources.MismatchStaleInSuper,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ts, ss := build()
			if tc.mutate != nil {
				tc.mutate(ts, ss)
			}
			if got := (Resource).Check(nil, c, ts, ss); got != tc.want {
				t.Errorf("Check = %q, want %q", got, tc.want)
			}
		})
	}
	ts, _ := build()
	if got := (Resource).Check(nil, c, ts, nil); got != resources.MismatchMissingInSuper {
		t.Errorf("Check without super copy = %q", got)
	}
	now := metav1.Now()
	ts.DeletionTimestamp = &now
	if got := (Resource).Check(nil, c, ts, nil); got != resources.InSync {
		t.Errorf("Check of a deleted tenant Service without super copy = %q", got)
	}
}
