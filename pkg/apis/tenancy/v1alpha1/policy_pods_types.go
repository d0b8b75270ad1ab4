package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
)

// PodPolicy is what a tenant Pod may ask of the super cluster.
type PodPolicy struct {
	// AllowedVolumeTypes lists the volume sources a Pod may use, by their PodSpec field name
	// (configMap, secret, emptyDir, ...). Built-in default: the Pod Security "restricted" set —
	// configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected, secret.
	// A Pod with any other source is refused (rule volumeType).
	// +optional
	AllowedVolumeTypes []string `json:"allowedVolumeTypes,omitempty"`
	// AllowedCSIDrivers lists the drivers an inline csi volume may name. Built-in default: none
	// (rule csiDriver).
	// +optional
	AllowedCSIDrivers []string `json:"allowedCSIDrivers,omitempty"`
	// AllowedTolerations lists the tolerations a tenant Pod may carry into the super cluster;
	// others are not copied (rule toleration). Built-in default: node.kubernetes.io/not-ready
	// and node.kubernetes.io/unreachable with effect NoExecute (those the tenant's
	// DefaultTolerationSeconds admission adds).
	// +optional
	AllowedTolerations []TolerationPattern `json:"allowedTolerations,omitempty"`
	// NodeSelector is added to every super Pod of the tenant (the tenant's node pool); it wins
	// over a tenant nodeSelector key of the same name. Tenant node selectors and affinity are
	// ANDed with it, so they can only narrow the pool. Built-in default: none.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations are added to every super Pod of the tenant (to reach its dedicated nodes).
	// Built-in default: none.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// AllowedNodeLabelKeys lists the node label keys a tenant nodeSelector or required node
	// affinity may name (rule nodePlacement). Built-in default: topology.kubernetes.io/zone,
	// topology.kubernetes.io/region, kubernetes.io/os, kubernetes.io/arch,
	// node.kubernetes.io/instance-type. Node names (matchFields metadata.name,
	// kubernetes.io/hostname) are allowed only for Nodes in the tenant's pool.
	// +optional
	AllowedNodeLabelKeys []string `json:"allowedNodeLabelKeys,omitempty"`
	// AllowedRuntimeClassNames lists the RuntimeClasses a tenant Pod may name (rule
	// runtimeClass). Built-in default: none.
	// +optional
	AllowedRuntimeClassNames []string `json:"allowedRuntimeClassNames,omitempty"`
	// DefaultRuntimeClassName is set on every super Pod that names no RuntimeClass (for
	// example a sandboxed runtime, as in the VirtualCluster paper). Built-in default: none.
	// +optional
	DefaultRuntimeClassName *string `json:"defaultRuntimeClassName,omitempty"`
	// AllowedSchedulerNames lists the schedulers a tenant Pod may name (rule schedulerName).
	// Built-in default: default-scheduler.
	// +optional
	AllowedSchedulerNames []string `json:"allowedSchedulerNames,omitempty"`
	// AllowedPriorityClassNames lists the super PriorityClasses a tenant Pod may name, among
	// the public ones (labelled tenancy.vcsyncer.io/public=true) (rule priorityClass).
	// Built-in default: every public class.
	// +optional
	AllowedPriorityClassNames []string `json:"allowedPriorityClassNames,omitempty"`
	// MaxServiceAccountTokens caps the projected serviceAccountToken sources of one Pod, over
	// all its projected volumes (rule serviceAccountTokens). The syncer requests each of them
	// from the tenant apiserver (TokenRequest) before the super Pod is created and at every
	// refresh, so the cap bounds that work per Pod. Built-in default: 8 (the tenant's
	// ServiceAccount admission adds one; a mesh or secret store sidecar typically adds one or
	// two with their own audiences).
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxServiceAccountTokens *int32 `json:"maxServiceAccountTokens,omitempty"`
	// MaxSchedulingRequirements caps the scheduling requirements of one Pod (rule
	// schedulingRequirements): each pod affinity and anti-affinity term (required and
	// preferred), topology spread constraint and node affinity term counts one, plus one per
	// entry of its label and namespace selectors (matchLabels, matchExpressions, matchFields),
	// matchLabelKeys and mismatchLabelKeys. The super scheduler evaluates the pod
	// (anti-)affinity terms of every placed Pod against every Pod it schedules, of every
	// tenant, and a Pod's own terms against every Node, one Pod at a time: thousands of terms
	// per Pod slow the scheduling of everyone's Pods. Built-in default: 64 (real workloads use
	// a few terms of one or two labels each).
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxSchedulingRequirements *int32 `json:"maxSchedulingRequirements,omitempty"`
	// MaxTerminationGracePeriodSeconds bounds how long the super cluster waits for a tenant
	// Pod to stop: the super Pod's terminationGracePeriodSeconds, the seconds of its
	// containers' preStop and postStart sleep actions, and the grace period of a tenant's
	// delete are clamped to it (rule terminationGracePeriod: the Pod still runs, and a Warning
	// Event says what was clamped). A drain or an eviction of a super Node waits at most this
	// long for each tenant Pod. Built-in default: 3600 (one hour; real workloads use seconds
	// to half an hour).
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxTerminationGracePeriodSeconds *int64 `json:"maxTerminationGracePeriodSeconds,omitempty"`
}

// TolerationPattern matches tolerations. Empty fields match anything; Key must be set.
type TolerationPattern struct {
	// Key of the taint the toleration tolerates.
	Key string `json:"key"`
	// Operator: Exists or Equal. Empty matches both.
	// +optional
	Operator corev1.TolerationOperator `json:"operator,omitempty"`
	// Value; empty matches any value.
	// +optional
	Value string `json:"value,omitempty"`
	// Effect; empty matches any effect.
	// +optional
	Effect corev1.TaintEffect `json:"effect,omitempty"`
}
