package v1alpha1

// NetworkPolicy is where a tenant may point Services and Ingresses.
type NetworkPolicy struct {
	// AllowedEndpointCIDRs lists address ranges that Endpoints and EndpointSlices of
	// selector-less tenant Services may name besides the tenant's own Pods' IPs (rule
	// endpointAddress). Built-in default: none (only the tenant's own Pod IPs).
	// +optional
	AllowedEndpointCIDRs []string `json:"allowedEndpointCIDRs,omitempty"`
	// AllowedIngressClasses lists the IngressClass names a tenant Ingress may use (rule
	// ingressClass). Built-in default: none.
	// +optional
	AllowedIngressClasses []string `json:"allowedIngressClasses,omitempty"`
	// AllowedIngressHosts lists the host names a tenant Ingress may claim; "*.example.com"
	// matches every name below example.com (rule ingressHost). Built-in default: none.
	// +optional
	AllowedIngressHosts []string `json:"allowedIngressHosts,omitempty"`
}
