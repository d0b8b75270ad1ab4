package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultPolicyName is the name of the TenantPolicy that applies to every Tenant without
// spec.policyName, and whose fields every other TenantPolicy inherits where it leaves them unset.
const DefaultPolicyName = "default"

// TenantPolicySpec is what tenants may pass to the super cluster. Every field is optional: an
// unset field (null, omitted) inherits the value of the TenantPolicy named "default", and where
// that leaves it unset, the syncer's built-in default (documented on each field; see
// docs/security.md). An empty list is not unset: it allows nothing.
type TenantPolicySpec struct {
	// Pods: volumes, credentials, tolerations, node placement, runtime and scheduler.
	// +optional
	Pods *PodPolicy `json:"pods,omitempty"`
	// Services: types and load-balancer settings.
	// +optional
	Services *ServicePolicy `json:"services,omitempty"`
	// Metadata: which label and annotation keys are copied to super objects.
	// +optional
	Metadata *MetadataPolicy `json:"metadata,omitempty"`
	// Network: Endpoints addresses and Ingress classes and hosts.
	// +optional
	Network *NetworkPolicy `json:"network,omitempty"`
	// Storage: claims' data sources.
	// +optional
	Storage *StoragePolicy `json:"storage,omitempty"`
	// Limits: ResourceQuota and LimitRange of the tenant's super namespaces, object size and
	// count caps.
	// +optional
	Limits *LimitsPolicy `json:"limits,omitempty"`
	// DisruptionBudgets: whether a PodDisruptionBudget may block every eviction.
	// +optional
	DisruptionBudgets *DisruptionBudgetPolicy `json:"disruptionBudgets,omitempty"`
	// Kubelet: what the tenant's users may do through the kubelet API of its virtual Nodes
	// (kubectl exec, attach, port-forward; logs are always served) and how many streams
	// they may hold open.
	// +optional
	Kubelet *KubeletPolicy `json:"kubelet,omitempty"`
}

// KubeletPolicy is what a tenant's apiserver may ask of vc-syncer's kubelet API (the address
// the tenant's virtual Nodes advertise) for the tenant's own synced Pods. Container logs are
// always served.
type KubeletPolicy struct {
	// AllowExec lets the tenant's users run commands in their Pods' containers (kubectl exec,
	// cp, the exec probes of kubectl debug). False: every exec is refused with 403. A tenant
	// writes its own Pod specs, so a shell as a container's entrypoint gives the same through
	// attach, and a shell server through port-forward: switch those off too to keep users out
	// of the containers. Sessions open when the policy changes run until they end. Built-in
	// default: true.
	// +optional
	AllowExec *bool `json:"allowExec,omitempty"`
	// AllowAttach lets the tenant's users attach to their containers' standard streams
	// (kubectl attach, run -i). False: refused with 403. Built-in default: true.
	// +optional
	AllowAttach *bool `json:"allowAttach,omitempty"`
	// AllowPortForward lets the tenant's users forward ports of their Pods (kubectl
	// port-forward). False: refused with 403. Built-in default: true.
	// +optional
	AllowPortForward *bool `json:"allowPortForward,omitempty"`
	// MaxStreams bounds the requests the kubelet API forwards for the tenant at a time (log
	// reads, logs -f, exec, attach and port-forward sessions); one more is answered 429 with
	// a message naming the limit. 0 or unset: the syncer's --kubelet-max-streams-per-tenant
	// (default 32), which also caps this value.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxStreams *int32 `json:"maxStreams,omitempty"`
}

// TenantPolicy is a cluster-scoped set of rules for what Tenants may pass to the super cluster.
// The one named "default" applies to Tenants without spec.policyName; a Tenant naming another
// gets that policy over "default", field by field.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=vctp
type TenantPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec TenantPolicySpec `json:"spec,omitempty"`
}

// TenantPolicyList is a list of TenantPolicies.
//
// +kubebuilder:object:root=true
type TenantPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TenantPolicy `json:"items"`
}
