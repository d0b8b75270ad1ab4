package policy

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

func TestCheckService(t *testing.T) {
	class := "example.com/internal"
	open := Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Services: &tenancyv1alpha1.ServicePolicy{
		AllowedTypes:            []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName},
		AllowLocalTrafficPolicy: ptr(true), AllowLoadBalancerIP: ptr(true), AllowedLoadBalancerClasses: []string{class}}})
	for name, tc := range map[string]struct {
		pol  *Effective
		spec corev1.ServiceSpec
		want Rule
	}{
		"ClusterIP":                {spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}},
		"type defaulted":           {spec: corev1.ServiceSpec{}},
		"headless":                 {spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone}},
		"NodePort":                 {spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort}, want: RuleServiceType},
		"LoadBalancer":             {spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}, want: RuleServiceType},
		"ExternalName":             {spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}, want: RuleServiceType},
		"NodePort, not in open":    {pol: open, spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort}, want: RuleServiceType},
		"ExternalName when open":   {pol: open, spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}},
		"Local, default":           {spec: corev1.ServiceSpec{ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal}, want: RuleExternalTrafficPolicy},
		"Local when open":          {pol: open, spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal}},
		"Cluster traffic policy":   {spec: corev1.ServiceSpec{ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster}},
		"loadBalancerIP":           {spec: corev1.ServiceSpec{LoadBalancerIP: "203.0.113.1"}, want: RuleLoadBalancerIP},
		"loadBalancerIP when open": {pol: open, spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerIP: "203.0.113.1"}},
		"loadBalancerClass":        {spec: corev1.ServiceSpec{LoadBalancerClass: &class}, want: RuleLoadBalancerClass},
		"allowed class":            {pol: open, spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class}},
		"another class": {pol: open, spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: ptr("metallb.io/other")},
			want: RuleLoadBalancerClass},
	} {
		t.Run(name, func(t *testing.T) {
			pol := tc.pol
			if pol == nil {
				pol = Default()
			}
			d := CheckService(pol.Services(), &corev1.Service{Spec: tc.spec})
			switch {
			case tc.want == "" && d != nil:
				t.Errorf("refused: %v", d.Error())
			case tc.want != "" && (d == nil || d.Rule != tc.want):
				t.Errorf("CheckService = %v, want rule %s", d, tc.want)
			}
		})
	}
}
