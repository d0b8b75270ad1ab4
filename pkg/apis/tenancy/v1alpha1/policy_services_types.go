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
	// MaxSharedClusterIPs caps how many of the tenant's super Services hold a ClusterIP the
	// super cluster allocated from its shared Service range (rule sharedClusterIP): every
	// Service whose ClusterIPs are not all inside the Tenant's spec.serviceCIDRs (a Tenant
	// without spec.serviceCIDRs: every Service), or whose own addresses the super cluster
	// refused. Headless and ExternalName Services hold none. A Service over the cap gets no
	// super copy, a PolicyDenied Warning Event and the condition
	// tenancy.vcsyncer.io/Synced=False (reason PolicyDenied); it is tried again when it or the
	// policy changes, and by remediation scans (so once others are deleted). Lowering it never
	// removes super Services already created. Built-in default: 100.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxSharedClusterIPs *int32 `json:"maxSharedClusterIPs,omitempty"`
}

// MetadataPolicy decides which tenant label and annotation keys reach super objects. Keys
// that do not match are not copied (rule metadataKey); the object itself is still synced.
type MetadataPolicy struct {
	// AllowedLabelPrefixes: a label key is copied when it starts with one of these entries
	// that end in "/" (a whole domain) or equals one of the others (one key). The entry ""
	// stands for plain keys: no prefix and no dot ("app", not example.com/app, not
	// io.katacontainers.config.hypervisor.path, a container-runtime setting). Built-in
	// default: "", app.kubernetes.io/, helm.sh/, apps.kubernetes.io/pod-index,
	// statefulset.kubernetes.io/pod-name, controller-revision-hash, pod-template-hash,
	// batch.kubernetes.io/job-name, batch.kubernetes.io/controller-uid,
	// batch.kubernetes.io/job-completion-index, kubernetes.io/name (the informational label
	// of cluster add-ons' Services, such as kube-dns). Super Pods keep only these labels, so Service,
	// NetworkPolicy and PodDisruptionBudget selectors should use them. Keys in the syncer's
	// domain (tenancy.vcsyncer.io/) are never copied.
	// +optional
	AllowedLabelPrefixes []string `json:"allowedLabelPrefixes,omitempty"`
	// AllowedAnnotationPrefixes: as AllowedLabelPrefixes, for annotations. Built-in default:
	// "", kubectl.kubernetes.io/restartedAt, kubectl.kubernetes.io/default-container,
	// batch.kubernetes.io/job-completion-index. Annotations that the super cluster's own
	// tools act on (prometheus.io/ scrape settings, Helm's meta.helm.sh/ release ownership,
	// app.kubernetes.io/ and helm.sh/ keys) are not copied unless listed here; the labels of
	// those domains are (AllowedLabelPrefixes), since selectors use them. Controller annotations (ingress-nginx,
	// cloud load balancers, cert-manager) are best allowed key by key: a whole
	// nginx.ingress.kubernetes.io/ prefix would pass configuration snippets to a controller
	// shared by every tenant. An Ingress is refused as a whole when its annotations are not all
	// allowed (rule ingressSnippet for *-snippet keys, metadataKey otherwise).
	// +optional
	AllowedAnnotationPrefixes []string `json:"allowedAnnotationPrefixes,omitempty"`
	// AllowedNamespaceLabelPrefixes: tenant namespace label keys that are also copied to the
	// super namespace as they are (matched as in AllowedLabelPrefixes). Every tenant namespace
	// label reaches its super namespace under a key of the syncer's
	// (ns.tenancy.vcsyncer.io/<key>, or <prefix>.ns.tenancy.vcsyncer.io/<name> for
	// <prefix>/<name>), which the tenant's NetworkPolicies' namespaceSelectors are translated
	// to; a key listed here is set as it is too, where super-cluster NetworkPolicies,
	// webhooks and policy engines that select namespaces by it act on it. Built-in default:
	// none.
	// +optional
	AllowedNamespaceLabelPrefixes []string `json:"allowedNamespaceLabelPrefixes,omitempty"`
}
