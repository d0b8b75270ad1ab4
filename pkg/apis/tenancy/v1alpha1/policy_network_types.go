package v1alpha1

// NetworkPolicy is where a tenant may point Services and Ingresses.
type NetworkPolicy struct {
	// AllowedEndpointCIDRs lists address ranges that Endpoints and EndpointSlices of
	// selector-less tenant Services may name besides the IPs of the tenant's own running Pods
	// (rule endpointAddress; an object naming any other address is refused as a whole).
	// Loopback, link-local (169.254.0.0/16, fe80::/10) and multicast addresses are refused even
	// inside these ranges; FQDN EndpointSlices always. Built-in default: none (only the
	// tenant's own Pod IPs).
	// +optional
	AllowedEndpointCIDRs []string `json:"allowedEndpointCIDRs,omitempty"`
	// AllowedIngressClasses lists the IngressClass names a tenant Ingress may use, in
	// spec.ingressClassName or the legacy kubernetes.io/ingress.class annotation; an Ingress
	// naming no class (the super cluster's default) is refused (rule ingressClass). Built-in
	// default: none (every Ingress is refused).
	// +optional
	AllowedIngressClasses []string `json:"allowedIngressClasses,omitempty"`
	// AllowedIngressHosts lists the host names a tenant Ingress may claim in rules[].host and
	// tls[].hosts; "*.example.com" matches every name one or more labels below example.com
	// (not example.com itself); "*" matches every name, and only it allows a rule without
	// host or a spec.defaultBackend, which claim every name (rule ingressHost). Built-in
	// default: none.
	// +optional
	AllowedIngressHosts []string `json:"allowedIngressHosts,omitempty"`
}
