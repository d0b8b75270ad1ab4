package policy

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Rules of the super cluster's Service addresses.
const (
	// RuleExternalIPs: spec.externalIPs of a tenant Service are never copied to its super copy
	// (CVE-2020-8554: they would let the tenant capture traffic to any address on every
	// node); the Service is synced without them and the drop is reported (a filtering rule).
	RuleExternalIPs Rule = "externalIPs"
	// RuleSharedClusterIP: a tenant Service whose super copy would take a ClusterIP from the
	// super cluster's shared Service range is refused while the tenant holds
	// services.maxSharedClusterIPs such addresses.
	RuleSharedClusterIP Rule = "sharedClusterIP"
)

// DefaultMaxSharedClusterIPs is the built-in services.maxSharedClusterIPs.
const DefaultMaxSharedClusterIPs = 100

// ExternalIPsDenial returns the report of tenant Service svc's spec.externalIPs dropped from
// its super copy (rule externalIPs), or nil when it has none. No policy field allows them.
func ExternalIPsDenial(svc *corev1.Service) *Denial {
	if len(svc.Spec.ExternalIPs) == 0 {
		return nil
	}
	return Deny(RuleExternalIPs, "Service %s/%s has externalIPs %s; they are not copied to the super cluster, "+
		"where they would capture traffic to those addresses on every node (CVE-2020-8554); the Service is synced without them",
		svc.Namespace, svc.Name, strings.Join(svc.Spec.ExternalIPs, ", "))
}

// SharedClusterIPDenial returns the refusal of tenant Service svc whose super copy would take
// a ClusterIP from the super cluster's shared range while the tenant holds held such addresses
// and its policy allows max (rule sharedClusterIP), or nil when held < max.
func SharedClusterIPDenial(svc *corev1.Service, held, max int) *Denial {
	if held < max {
		return nil
	}
	return Deny(RuleSharedClusterIP, "Service %s/%s would take a ClusterIP from the super cluster's shared Service range "+
		"(its ClusterIP is outside the Tenant's spec.serviceCIDRs, or the super cluster refused it); the tenant holds %d such addresses "+
		"and its policy allows %d; the Service has no copy in the super cluster until this changes; "+
		"a TenantPolicy's services.maxSharedClusterIPs allows more", svc.Namespace, svc.Name, held, max)
}
