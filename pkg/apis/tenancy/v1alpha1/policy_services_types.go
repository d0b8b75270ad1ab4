package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
)

// ServicePolicy is what a tenant Service may ask of the super cluster.
type ServicePolicy struct {
	// AllowedTypes lists the Service types a tenant may sync (rule serviceType). Built-in
	// default: ClusterIP. NodePort and LoadBalancer take shared node ports and cloud load
	// balancers; ExternalName makes super DNS answer with a name the tenant chose.
	// +optional
	AllowedTypes []corev1.ServiceType `json:"allowedTypes,omitempty"`
	// AllowLocalTrafficPolicy allows externalTrafficPolicy: Local (rule externalTrafficPolicy).
	// Built-in default: false.
	// +optional
	AllowLocalTrafficPolicy *bool `json:"allowLocalTrafficPolicy,omitempty"`
	// AllowLoadBalancerIP allows spec.loadBalancerIP (rule loadBalancerIP). Built-in default:
	// false.
	// +optional
	AllowLoadBalancerIP *bool `json:"allowLoadBalancerIP,omitempty"`
	// AllowedLoadBalancerClasses lists the loadBalancerClass values a Service may name (rule
	// loadBalancerClass). Built-in default: none.
	// +optional
	AllowedLoadBalancerClasses []string `json:"allowedLoadBalancerClasses,omitempty"`
}

// MetadataPolicy decides which tenant label and annotation keys reach super objects. Keys
// that do not match are not copied (rule metadataKey); the object itself is still synced.
type MetadataPolicy struct {
	// AllowedLabelPrefixes: a label key is copied when it starts with one of these. The entry
	// "" stands for keys without a prefix (no "/"). Built-in default: "", app.kubernetes.io/,
	// helm.sh/, apps.kubernetes.io/pod-index, statefulset.kubernetes.io/pod-name,
	// controller-revision-hash, pod-template-hash.
	// +optional
	AllowedLabelPrefixes []string `json:"allowedLabelPrefixes,omitempty"`
	// AllowedAnnotationPrefixes: as AllowedLabelPrefixes, for annotations. Built-in default:
	// "", app.kubernetes.io/, helm.sh/, meta.helm.sh/, kubectl.kubernetes.io/restartedAt,
	// prometheus.io/.
	// +optional
	AllowedAnnotationPrefixes []string `json:"allowedAnnotationPrefixes,omitempty"`
}
