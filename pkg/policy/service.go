package policy

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// CheckService returns the first rule of p that tenant Service svc breaks, or nil when the
// super cluster may have a copy of it. The rules, in order:
//
//   - serviceType: spec.type ("" is ClusterIP, as the apiserver defaults it; a headless
//     ClusterIP Service is a ClusterIP Service) must be in p.AllowedTypes.
//   - externalTrafficPolicy: Local only when p.AllowLocalTrafficPolicy (it opens a health-check
//     node port on every node and keeps client source addresses).
//   - loadBalancerIP: spec.loadBalancerIP only when p.AllowLoadBalancerIP (a tenant would pick
//     an address of the shared load-balancer pools, possibly another tenant's).
//   - loadBalancerClass: spec.loadBalancerClass must be in p.AllowedLoadBalancerClasses.
func CheckService(p *tenancyv1alpha1.ServicePolicy, svc *corev1.Service) *Denial {
	typ := svc.Spec.Type
	if typ == "" {
		typ = corev1.ServiceTypeClusterIP
	}
	if !slices.Contains(p.AllowedTypes, typ) {
		return Deny(RuleServiceType, "Service %s/%s has type %s; allowed: %s; a TenantPolicy's services.allowedTypes allows more",
			svc.Namespace, svc.Name, typ, namesOrNone(serviceTypes(p.AllowedTypes)))
	}
	if svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal && !flagOn(p.AllowLocalTrafficPolicy) {
		return Deny(RuleExternalTrafficPolicy, "Service %s/%s has externalTrafficPolicy Local; a TenantPolicy's services.allowLocalTrafficPolicy allows it",
			svc.Namespace, svc.Name)
	}
	if svc.Spec.LoadBalancerIP != "" && !flagOn(p.AllowLoadBalancerIP) {
		return Deny(RuleLoadBalancerIP, "Service %s/%s asks for loadBalancerIP %s; a TenantPolicy's services.allowLoadBalancerIP allows it",
			svc.Namespace, svc.Name, svc.Spec.LoadBalancerIP)
	}
	if c := svc.Spec.LoadBalancerClass; c != nil && !slices.Contains(p.AllowedLoadBalancerClasses, *c) {
		return Deny(RuleLoadBalancerClass, "Service %s/%s has loadBalancerClass %s; allowed: %s; a TenantPolicy's services.allowedLoadBalancerClasses allows more",
			svc.Namespace, svc.Name, *c, namesOrNone(p.AllowedLoadBalancerClasses))
	}
	return nil
}

func serviceTypes(ts []corev1.ServiceType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

func flagOn(b *bool) bool { return b != nil && *b }

// namesOrNone joins items with ", ", or returns "none".
func namesOrNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}
