package service

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/tenant"
)

func svc(typ corev1.ServiceType, clusterIP string) *corev1.Service {
	single := corev1.IPFamilyPolicySingleStack
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default", UID: "svc-uid"},
		Spec: corev1.ServiceSpec{
			Type: typ, ClusterIP: clusterIP, ClusterIPs: []string{clusterIP},
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}, IPFamilyPolicy: &single,
			Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, NodePort: 30001}},
		},
	}
}

func TestDesiredDropsTenantAllocations(t *testing.T) {
	c := &tenant.Cluster{Name: "t", UID: "u"}
	cases := map[string]struct {
		in            *corev1.Service
		wantClusterIP string
	}{
		"tenant default/kubernetes with clusterIPs": {in: svc(corev1.ServiceTypeClusterIP, "10.0.0.1"), wantClusterIP: ""},
		"headless stays headless":                   {in: svc(corev1.ServiceTypeClusterIP, corev1.ClusterIPNone), wantClusterIP: corev1.ClusterIPNone},
		"node port":                                 {in: svc(corev1.ServiceTypeNodePort, "10.0.0.9"), wantClusterIP: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Desired(c, tc.in, "t-abc-default", nil)
			if got.Spec.ClusterIP != tc.wantClusterIP {
				t.Errorf("clusterIP = %q, want %q", got.Spec.ClusterIP, tc.wantClusterIP)
			}
			if tc.wantClusterIP == "" && len(got.Spec.ClusterIPs) != 0 {
				t.Errorf("clusterIPs copied: %v", got.Spec.ClusterIPs)
			}
			if got.Spec.Ports[0].NodePort != 0 {
				t.Errorf("nodePort copied: %d", got.Spec.Ports[0].NodePort)
			}
			if got.Spec.IPFamilies != nil {
				t.Errorf("ipFamilies copied: %v", got.Spec.IPFamilies)
			}
		})
	}
}

func TestDesiredKeepsSuperAllocations(t *testing.T) {
	c := &tenant.Cluster{Name: "t", UID: "u"}
	tenantSvc := svc(corev1.ServiceTypeNodePort, "10.0.0.9")
	super := Desired(c, tenantSvc, "t-abc-default", nil)
	super.Spec.ClusterIP, super.Spec.ClusterIPs = "10.96.3.4", []string{"10.96.3.4"}
	super.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	super.Spec.Ports[0].NodePort = 31999
	want := Desired(c, tenantSvc, "t-abc-default", super)
	if !Equal(want, super) {
		t.Fatalf("an unchanged tenant Service would update the super Service: want %+v, have %+v", want.Spec, super.Spec)
	}
	tenantSvc.Spec.Selector = map[string]string{"app": "new"}
	want = Desired(c, tenantSvc, "t-abc-default", super)
	if Equal(want, super) {
		t.Fatal("a selector change is not detected")
	}
	if want.Spec.ClusterIP != "10.96.3.4" || want.Spec.Ports[0].NodePort != 31999 {
		t.Errorf("super allocations not kept: %+v", want.Spec)
	}
}

func TestDesiredDropsExternalIPs(t *testing.T) {
	in := svc(corev1.ServiceTypeClusterIP, "10.0.0.9")
	in.Spec.ExternalIPs = []string{"8.8.8.8"}
	in.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster // defaulted by the tenant apiserver
	got := Desired(&tenant.Cluster{Name: "t", UID: "u"}, in, "ns", nil)
	if len(got.Spec.ExternalIPs) != 0 || got.Spec.ExternalTrafficPolicy != "" {
		t.Fatalf("externalIPs %v externalTrafficPolicy %q", got.Spec.ExternalIPs, got.Spec.ExternalTrafficPolicy)
	}
}
