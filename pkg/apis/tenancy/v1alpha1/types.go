package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SecretKeyRef names one key of a Secret in the super cluster.
type SecretKeyRef struct {
	// Namespace of the Secret. The syncer only reads Secrets in the namespace given by its
	// --kubeconfig-namespace flag (defaults to vc-syncer-system); other namespaces are
	// reported as SecretNamespaceNotWatched.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Key in the Secret's data that holds the kubeconfig. Defaults to "kubeconfig".
	// +optional
	// +kubebuilder:default=kubeconfig
	Key string `json:"key,omitempty"`
}

// TenantSpec is the desired state of a Tenant.
type TenantSpec struct {
	// KubeconfigSecretRef names the Secret key holding a self-contained kubeconfig (embedded
	// certificates or tokens, no file paths) for the tenant's kube-apiserver.
	KubeconfigSecretRef SecretKeyRef `json:"kubeconfigSecretRef"`
	// Weight is the tenant's share of the syncer's workers relative to other tenants when
	// queues are saturated. Defaults to 1; between 1 and 1000. Used by the fair queues of both
	// pipelines (pkg/fairqueue); changes take effect without a restart.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Weight int32 `json:"weight,omitempty"`
	// Paused stops syncing this tenant (its informers are stopped) while keeping its objects
	// in the super cluster.
	// +optional
	// +kubebuilder:default=false
	Paused bool `json:"paused,omitempty"`
	// PolicyName names the TenantPolicy whose rules apply to this tenant, over those of the
	// TenantPolicy named "default". Empty: the "default" TenantPolicy alone; where that does
	// not exist, the built-in defaults. A named policy that does not exist is reported as
	// condition PolicyValid=False and the built-in defaults apply (they are the strictest).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	PolicyName string `json:"policyName,omitempty"`
	// ServiceCIDRs are the Service IP ranges of the tenant's kube-apiserver (its
	// --service-cluster-ip-range: one CIDR, or one per IP family), which the provider carves
	// out of the super cluster's Service range, distinct for every tenant. The super copy of a
	// tenant Service then requests the tenant's own ClusterIPs, so the address the tenant shows
	// is the one its Pods reach in the super cluster. Only addresses inside these ranges are
	// requested (a tenant never obtains a super address outside the range it was given); a
	// Service whose address is outside them, or that the super cluster refuses (already
	// allocated, not in its range), gets a super-allocated ClusterIP and the tenant Service a
	// Warning Event and the condition tenancy.vcsyncer.io/Synced=False (reason
	// ClusterIPMismatch). Empty: every super copy gets a super-allocated ClusterIP (reported
	// the same way). Changing it affects Services created afterwards (a ClusterIP is immutable).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:items:XValidation:rule="isCIDR(self)",message="must be a CIDR such as 10.96.16.0/20"
	ServiceCIDRs []string `json:"serviceCIDRs,omitempty"`
	// KubeletClientCA is a PEM bundle of the CA certificates that sign the tenant
	// kube-apiserver's kubelet client certificate (its --kubelet-client-certificate), and
	// should sign nothing else the tenant's users hold. vc-syncer's kubelet API (the address
	// the tenant's virtual Nodes advertise, `vc-syncer run --kubelet-bind-address`) attributes
	// a request to this tenant only when its TLS client certificate verifies against this
	// bundle and against no other Tenant's; it then serves logs and exec of this tenant's own
	// synced Pods only. Empty: every kubelet request of the tenant's apiserver (kubectl logs,
	// exec, attach, port-forward) is refused with 401.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	KubeletClientCA string `json:"kubeletClientCA,omitempty"`
}

// TenantPhase is a one-word summary of a Tenant's state.
type TenantPhase string

// Tenant phases.
const (
	// TenantPending: the kubeconfig Secret is missing or invalid.
	TenantPending TenantPhase = "Pending"
	// TenantConnecting: the kubeconfig is valid; the syncer is reaching the tenant apiserver
	// or filling its caches.
	TenantConnecting TenantPhase = "Connecting"
	// TenantRunning: caches have synced and the tenant is being synced.
	TenantRunning TenantPhase = "Running"
	// TenantUnreachable: the tenant apiserver cannot be reached (no answer, a network error,
	// a timeout or a 5xx).
	TenantUnreachable TenantPhase = "Unreachable"
	// TenantUnauthorized: the tenant apiserver answers but refuses the kubeconfig's
	// credentials (401 or 403).
	TenantUnauthorized TenantPhase = "Unauthorized"
	// TenantDuplicateControlPlane: the tenant apiserver answers, but another Tenant already
	// syncs the same control plane (same kube-system namespace UID); this one is refused until
	// one of the two is removed.
	TenantDuplicateControlPlane TenantPhase = "DuplicateControlPlane"
	// TenantSuspended: the tenant has more objects than its policy's
	// limits.maxCachedObjects; the syncer does not watch it (nothing of it is synced, its
	// super objects are kept) and counts its objects again with backoff.
	TenantSuspended TenantPhase = "Suspended"
	// TenantPaused: spec.paused is true.
	TenantPaused TenantPhase = "Paused"
	// TenantTerminating: the Tenant is being deleted and its super-cluster objects cleaned up.
	TenantTerminating TenantPhase = "Terminating"
)

// Condition types of a Tenant.
const (
	// ConditionKubeconfigValid is True when the referenced Secret exists and holds a usable
	// kubeconfig. It is False with reason InlineCredentialsRequired when the kubeconfig's
	// current context uses tokenFile, exec, auth-provider, file paths, proxy-url, basic
	// authentication or impersonation (pkg/tenant.CheckInlineCredentials).
	ConditionKubeconfigValid = "KubeconfigValid"
	// ConditionConnected is True when the tenant apiserver answered the last health check.
	ConditionConnected = "Connected"
	// ConditionSynced is True when the syncer's informer caches for the tenant have synced
	// and its events are being processed.
	ConditionSynced = "Synced"
	// ConditionPolicyValid is True when the TenantPolicy named by spec.policyName exists (or
	// none is named).
	ConditionPolicyValid = "PolicyValid"
	// ConditionWithinMemoryBound is True while the syncer holds every Secret and ConfigMap of
	// the tenant in its caches, and False (reason MemoryBoundReached) while some are kept out
	// because they are over the policy's limits.maxObjectBytes or would take the bytes held
	// over limits.maxCachedBytes: those are not synced (each has a PolicyDenied Event). It is
	// False with reason TooManyObjects while the tenant has more objects than
	// limits.maxCachedObjects and its sync is suspended.
	ConditionWithinMemoryBound = "WithinMemoryBound"
	// ConditionKubeletClientCAValid is False when spec.kubeletClientCA is not a PEM bundle of
	// CA certificates (reason InvalidKubeletClientCA) or holds a CA (same public key) that
	// another Tenant's spec.kubeletClientCA holds too (reason SharedKubeletClientCA): the
	// kubelet API then attributes no request to this tenant (401), and for a shared CA none
	// to the other tenant either. True (reason Valid, or NotSet without a CA) otherwise.
	ConditionKubeletClientCAValid = "KubeletClientCAValid"
)

// TenantStatus is the observed state of a Tenant.
type TenantStatus struct {
	// ObservedGeneration is the metadata.generation the status was computed for.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase summarises the conditions: Pending (kubeconfig missing or invalid), Connecting,
	// Unreachable (the tenant apiserver does not answer: network error, timeout or 5xx),
	// Unauthorized (it answers but refuses the kubeconfig's credentials), DuplicateControlPlane
	// (it answers, but another Tenant already syncs the same control plane), Running (caches
	// synced, objects are being synced), Paused, or Terminating.
	// +optional
	Phase TenantPhase `json:"phase,omitempty"`
	// Conditions: KubeconfigValid, Connected, Synced and PolicyValid, with a reason and a
	// message each.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// SuperNamespacePrefix is the prefix of every super-cluster namespace holding this
	// tenant's objects: "<tenant>-<6 hex of sha256(tenant UID)>-".
	// +optional
	SuperNamespacePrefix string `json:"superNamespacePrefix,omitempty"`
	// LagSeconds is the larger of DownwardLagSeconds and UpwardLagSeconds: how long, in whole
	// seconds, the tenant's oldest unfinished request has waited. Absent while the syncer does
	// not run the tenant (Pending, Paused, Terminating) or has not measured it yet.
	// +optional
	// +kubebuilder:validation:Minimum=0
	LagSeconds *int64 `json:"lagSeconds,omitempty"`
	// DownwardLagSeconds is how long, in whole seconds, the tenant's oldest request of the
	// downward pipeline (tenant to super cluster) has waited: in the queue for a worker, or,
	// after a failed reconcile, since its first failure. Values under 5 s are written as 0,
	// and the value is rewritten (at most every 10 s) only when it changed by at least 5 s and
	// a quarter.
	// +optional
	// +kubebuilder:validation:Minimum=0
	DownwardLagSeconds *int64 `json:"downwardLagSeconds,omitempty"`
	// UpwardLagSeconds is DownwardLagSeconds for the upward pipeline (statuses, super
	// cluster to tenant).
	// +optional
	// +kubebuilder:validation:Minimum=0
	UpwardLagSeconds *int64 `json:"upwardLagSeconds,omitempty"`
	// Shard is the syncer replica (shard, `vc-syncer run --sharding`) that syncs this tenant.
	// Empty without sharding, and while the tenant moves between shards.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Shard string `json:"shard,omitempty"`
	// LastShard is the shard that synced the tenant before it moved; its checkpoint holds the
	// tenant's state, which the next shard resumes from.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	LastShard string `json:"lastShard,omitempty"`
}

// Tenant registers one tenant control plane with the syncer.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=vct
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 40 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="a Tenant name must be a DNS label of at most 40 characters (it prefixes super-cluster namespaces)"
// +kubebuilder:printcolumn:name="Weight",type=integer,JSONPath=`.spec.weight`
// +kubebuilder:printcolumn:name="Paused",type=boolean,JSONPath=`.spec.paused`,priority=1
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Connected",type=string,JSONPath=`.status.conditions[?(@.type=="Connected")].status`
// +kubebuilder:printcolumn:name="Synced",type=string,JSONPath=`.status.conditions[?(@.type=="Synced")].status`
// +kubebuilder:printcolumn:name="Lag",type=integer,JSONPath=`.status.lagSeconds`,description="Seconds the tenant's oldest unfinished request has waited (the larger of downward and upward; under 5 s is 0; refreshed at most every 10 s)"
// +kubebuilder:printcolumn:name="Down-Lag",type=integer,JSONPath=`.status.downwardLagSeconds`,priority=1,description="Seconds the oldest downward (tenant to super cluster) request has waited"
// +kubebuilder:printcolumn:name="Up-Lag",type=integer,JSONPath=`.status.upwardLagSeconds`,priority=1,description="Seconds the oldest upward (super cluster to tenant) request has waited"
// +kubebuilder:printcolumn:name="Policy",type=string,JSONPath=`.spec.policyName`,priority=1
// +kubebuilder:printcolumn:name="Prefix",type=string,JSONPath=`.status.superNamespacePrefix`,priority=1
// +kubebuilder:printcolumn:name="Shard",type=string,JSONPath=`.status.shard`,description="The syncer replica (shard) that syncs the tenant, with --sharding"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Tenant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   TenantSpec   `json:"spec,omitempty"`
	Status TenantStatus `json:"status,omitempty"`
}

// TenantList is a list of Tenants.
//
// +kubebuilder:object:root=true
type TenantList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Tenant `json:"items"`
}

// EffectiveWeight returns spec.weight, or 1 when unset or below 1.
func (t *Tenant) EffectiveWeight() int32 {
	if t.Spec.Weight < 1 {
		return 1
	}
	return t.Spec.Weight
}

// KubeconfigKey returns spec.kubeconfigSecretRef.key, or "kubeconfig" when unset.
func (r SecretKeyRef) KubeconfigKey() string {
	if r.Key == "" {
		return "kubeconfig"
	}
	return r.Key
}
