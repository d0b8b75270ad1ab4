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

// clusterWithRange returns a tenant whose provider gave its apiserver the Service range cidr
// ("" for none).
func clusterWithRange(t *testing.T, cidr string) *tenant.Cluster {
	c := &tenant.Cluster{Name: "t", UID: "u"}
	if cidr != "" {
		if err := c.SetServiceCIDRs([]string{cidr}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// A new super copy asks for the tenant's ClusterIPs when the Tenant's range holds them (never
// outside it), and for the tenant's node ports and health-check node port.
func TestDesiredRequestsTenantAllocations(t *testing.T) {
	lbLocal := func(ip string) *corev1.Service {
		s := svc(corev1.ServiceTypeLoadBalancer, ip)
		s.Spec.ExternalTrafficPolicy, s.Spec.HealthCheckNodePort = corev1.ServiceExternalTrafficPolicyLocal, 32603
		return s
	}
	clusterWithStalePort := svc(corev1.ServiceTypeClusterIP, "10.96.1.7")
	cases := map[string]struct {
		cidr          string
		in            *corev1.Service
		wantClusterIP string
		wantNodePort  int32
		wantHCNP      int32
	}{
		"ClusterIP inside the tenant's range":     {cidr: "10.96.1.0/24", in: svc(corev1.ServiceTypeClusterIP, "10.96.1.9"), wantClusterIP: "10.96.1.9"},
		"ClusterIP outside the tenant's range":    {cidr: "10.96.1.0/24", in: svc(corev1.ServiceTypeClusterIP, "10.96.2.9")},
		"ClusterIP of a tenant without a range":   {in: svc(corev1.ServiceTypeClusterIP, "10.0.0.1")},
		"a range given in non-canonical form":     {cidr: "10.96.1.77/24", in: svc(corev1.ServiceTypeClusterIP, "10.96.1.9"), wantClusterIP: "10.96.1.9"},
		"headless stays headless":                 {cidr: "10.96.1.0/24", in: svc(corev1.ServiceTypeClusterIP, corev1.ClusterIPNone), wantClusterIP: corev1.ClusterIPNone},
		"NodePort: its node port":                 {cidr: "10.96.1.0/24", in: svc(corev1.ServiceTypeNodePort, "10.96.1.9"), wantClusterIP: "10.96.1.9", wantNodePort: 30001},
		"LoadBalancer Local: health-check port":   {cidr: "10.96.1.0/24", in: lbLocal("10.96.1.9"), wantClusterIP: "10.96.1.9", wantNodePort: 30001, wantHCNP: 32603},
		"ClusterIP type: no node port":            {cidr: "10.96.1.0/24", in: clusterWithStalePort, wantClusterIP: "10.96.1.7"},
		"NodePort without a range: node port too": {in: svc(corev1.ServiceTypeNodePort, "10.0.0.9"), wantNodePort: 30001},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Desired(clusterWithRange(t, tc.cidr), tc.in, "t-abc-default", nil)
			if got.Spec.ClusterIP != tc.wantClusterIP {
				t.Errorf("clusterIP = %q, want %q", got.Spec.ClusterIP, tc.wantClusterIP)
			}
			if tc.wantClusterIP == "" && len(got.Spec.ClusterIPs) != 0 {
				t.Errorf("clusterIPs copied: %v", got.Spec.ClusterIPs)
			}
			if tc.wantClusterIP != "" && (len(got.Spec.ClusterIPs) != 1 || got.Spec.ClusterIPs[0] != tc.wantClusterIP) {
				t.Errorf("clusterIPs = %v, want [%s]", got.Spec.ClusterIPs, tc.wantClusterIP)
			}
			if got.Spec.Ports[0].NodePort != tc.wantNodePort {
				t.Errorf("nodePort = %d, want %d", got.Spec.Ports[0].NodePort, tc.wantNodePort)
			}
			if got.Spec.HealthCheckNodePort != tc.wantHCNP {
				t.Errorf("healthCheckNodePort = %d, want %d", got.Spec.HealthCheckNodePort, tc.wantHCNP)
			}
			if got.Spec.IPFamilies != nil {
				t.Errorf("ipFamilies copied: %v", got.Spec.IPFamilies)
			}
		})
	}
}

// On update the super copy keeps what cannot change there (ClusterIPs, a health-check node
// port) and asks for the tenant's node ports, so a node port the syncer wrote back into the
// tenant, or one the tenant changed, is what the super copy asks for.
func TestDesiredKeepsSuperAllocations(t *testing.T) {
	c := clusterWithRange(t, "10.96.1.0/24")
	tenantSvc := svc(corev1.ServiceTypeLoadBalancer, "10.96.1.9")
	tenantSvc.Spec.ExternalTrafficPolicy, tenantSvc.Spec.HealthCheckNodePort = corev1.ServiceExternalTrafficPolicyLocal, 32603
	super := Desired(c, tenantSvc, "t-abc-default", nil)
	super.Spec.ClusterIP, super.Spec.ClusterIPs = "10.96.3.4", []string{"10.96.3.4"} // the tenant's was taken
	super.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	super.Spec.HealthCheckNodePort = 30679 // likewise
	want := Desired(c, tenantSvc, "t-abc-default", super)
	if !Equal(want, super) {
		t.Fatalf("an unchanged tenant Service would update the super Service: want %+v, have %+v", want.Spec, super.Spec)
	}
	tenantSvc.Spec.Selector = map[string]string{"app": "new"}
	tenantSvc.Spec.Ports[0].NodePort = 31999
	want = Desired(c, tenantSvc, "t-abc-default", super)
	if Equal(want, super) {
		t.Fatal("a selector change is not detected")
	}
	if want.Spec.ClusterIP != "10.96.3.4" || want.Spec.HealthCheckNodePort != 30679 || want.Spec.Ports[0].NodePort != 31999 {
		t.Errorf("want super ClusterIP and health-check port and the tenant's node port: %+v", want.Spec)
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
