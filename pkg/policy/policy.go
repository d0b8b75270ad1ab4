package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// Effective is the resolved policy of one tenant: every field of Spec is set. It is
// immutable; callers must not modify what its accessors return.
type Effective struct {
	// Spec is the resolved spec.
	Spec tenancyv1alpha1.TenantPolicySpec
	// Generation is a hash of Spec (16 hex digits); it changes exactly when Spec does.
	Generation string
}

// Pods returns the resolved Pod rules.
func (e *Effective) Pods() *tenancyv1alpha1.PodPolicy { return e.Spec.Pods }

// Services returns the resolved Service rules.
func (e *Effective) Services() *tenancyv1alpha1.ServicePolicy { return e.Spec.Services }

// Metadata returns the resolved label and annotation rules.
func (e *Effective) Metadata() *tenancyv1alpha1.MetadataPolicy { return e.Spec.Metadata }

// Network returns the resolved Endpoints and Ingress rules.
func (e *Effective) Network() *tenancyv1alpha1.NetworkPolicy { return e.Spec.Network }

// Storage returns the resolved storage rules.
func (e *Effective) Storage() *tenancyv1alpha1.StoragePolicy { return e.Spec.Storage }

// Limits returns the resolved quota and caps.
func (e *Effective) Limits() *tenancyv1alpha1.LimitsPolicy { return e.Spec.Limits }

// DisruptionBudgets returns the resolved PodDisruptionBudget rules.
func (e *Effective) DisruptionBudgets() *tenancyv1alpha1.DisruptionBudgetPolicy {
	return e.Spec.DisruptionBudgets
}

// Kubelet returns the resolved kubelet API rules.
func (e *Effective) Kubelet() *tenancyv1alpha1.KubeletPolicy { return e.Spec.Kubelet }

// defaultEffective is Resolve(nil, nil), computed once.
var defaultEffective = Resolve(nil, nil)

// Default returns the built-in policy, resolved (what applies when no TenantPolicy exists).
func Default() *Effective { return defaultEffective }

// Resolve returns the effective policy of a tenant: Builtin, overridden field by field by
// defaultPolicy (the TenantPolicy named "default"), overridden by named (the TenantPolicy the
// Tenant names). Either may be nil. A nil pointer, slice or map field inherits; any other value
// (an empty list included) replaces the inherited one. The inputs are not modified.
func Resolve(defaultPolicy, named *tenancyv1alpha1.TenantPolicySpec) *Effective {
	spec := Builtin()
	for _, over := range []*tenancyv1alpha1.TenantPolicySpec{defaultPolicy, named} {
		if over != nil {
			merge(reflect.ValueOf(&spec).Elem(), reflect.ValueOf(over.DeepCopy()).Elem())
		}
	}
	b, _ := json.Marshal(spec) // plain data: cannot fail
	sum := sha256.Sum256(b)
	return &Effective{Spec: spec, Generation: hex.EncodeToString(sum[:8])}
}

// merge overrides dst with every set field of src. Both are values of the same struct type.
// Pointers to structs are merged recursively; other pointers, slices and maps replace when
// non-nil; other kinds (none in the API today) replace when not their zero value.
func merge(dst, src reflect.Value) {
	for i := 0; i < dst.NumField(); i++ {
		d, s := dst.Field(i), src.Field(i)
		switch s.Kind() {
		case reflect.Pointer:
			if s.IsNil() {
				continue
			}
			if s.Elem().Kind() == reflect.Struct && !isLeafStruct(s.Elem().Type()) && !d.IsNil() {
				merge(d.Elem(), s.Elem())
				continue
			}
			d.Set(s)
		case reflect.Slice, reflect.Map:
			if !s.IsNil() {
				d.Set(s)
			}
		default:
			if !s.IsZero() {
				d.Set(s)
			}
		}
	}
}

// isLeafStruct reports struct types that are values, not groups of rules (a Quantity).
func isLeafStruct(t reflect.Type) bool {
	return t == reflect.TypeOf(resource.Quantity{})
}

func ptr[T any](v T) *T { return &v }

// Builtin returns the built-in defaults: every field set, the strictest values that keep
// ordinary workloads (Deployments, StatefulSets, Jobs with ConfigMaps, Secrets, claims and
// ClusterIP Services) working. A new value on every call.
func Builtin() tenancyv1alpha1.TenantPolicySpec {
	return tenancyv1alpha1.TenantPolicySpec{
		Pods: &tenancyv1alpha1.PodPolicy{
			// Pod Security "restricted" (k8s.io/pod-security-admission, restrictedVolumes).
			AllowedVolumeTypes: []string{"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
				"persistentVolumeClaim", "projected", "secret"},
			AllowedCSIDrivers: []string{},
			// What the tenant's DefaultTolerationSeconds admission plugin adds to every Pod.
			AllowedTolerations: []tenancyv1alpha1.TolerationPattern{
				{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute},
				{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute},
			},
			NodeSelector: map[string]string{},
			Tolerations:  []corev1.Toleration{},
			AllowedNodeLabelKeys: []string{corev1.LabelTopologyZone, corev1.LabelTopologyRegion,
				corev1.LabelOSStable, corev1.LabelArchStable, corev1.LabelInstanceTypeStable},
			AllowedRuntimeClassNames:  []string{},
			DefaultRuntimeClassName:   ptr(""),
			AllowedSchedulerNames:     []string{corev1.DefaultSchedulerName},
			AllowedPriorityClassNames: nil, // resolved below: nil means every public class
			// One from the tenant's ServiceAccount admission (kube-api-access-*), room for a
			// few more with their own audiences (mesh, secret stores); the syncer requests
			// them 4 at a time (pkg/resources/pod, requestTokens), so 8 is two rounds.
			MaxServiceAccountTokens: ptr(int32(8)),
			// Real workloads use a few terms of one or two labels each; thousands per Pod
			// would slow the super scheduler for every tenant (SchedulingRequirements).
			MaxSchedulingRequirements: ptr(int32(DefaultMaxSchedulingRequirements)),
			// An hour: above what real workloads ask (seconds, up to half an hour for databases
			// and queues), low enough that a drain of a super Node finishes the same day.
			MaxTerminationGracePeriodSeconds: ptr(int64(3600)),
		},
		Services: &tenancyv1alpha1.ServicePolicy{
			AllowedTypes:               []corev1.ServiceType{corev1.ServiceTypeClusterIP},
			AllowLocalTrafficPolicy:    ptr(false),
			AllowLoadBalancerIP:        ptr(false),
			AllowedLoadBalancerClasses: []string{},
			MaxSharedClusterIPs:        ptr(int32(DefaultMaxSharedClusterIPs)),
		},
		Metadata: &tenancyv1alpha1.MetadataPolicy{
			// Keys without a prefix (what Service selectors usually use), the recommended
			// app labels, and the labels the tenant's Deployment, StatefulSet and Job
			// controllers put on their Pods, and the informational name label of cluster
			// add-ons' Services (kubeadm's kube-system/kube-dns carries kubernetes.io/name).
			AllowedLabelPrefixes: []string{"", "app.kubernetes.io/", "helm.sh/",
				"apps.kubernetes.io/pod-index", "statefulset.kubernetes.io/pod-name",
				"controller-revision-hash", "pod-template-hash",
				"batch.kubernetes.io/job-name", "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-completion-index",
				"kubernetes.io/name"},
			// Annotations select nothing (Service, NetworkPolicy and budget selectors read
			// labels), so only keys the tenant's own tools need pass: kubectl's, and the Job
			// completion index that Indexed Jobs' Pods read through the downward API. Keys the
			// super cluster's own tools act on (prometheus.io/ scrape settings, Helm's
			// meta.helm.sh/ release ownership, app.kubernetes.io/ and helm.sh/ tracking) are
			// the provider's to allow.
			AllowedAnnotationPrefixes: []string{"",
				"kubectl.kubernetes.io/restartedAt", "kubectl.kubernetes.io/default-container",
				"batch.kubernetes.io/job-completion-index"},
			AllowedNamespaceLabelPrefixes: []string{},
		},
		Network: &tenancyv1alpha1.NetworkPolicy{
			AllowedEndpointCIDRs:  []string{},
			AllowedIngressClasses: []string{},
			AllowedIngressHosts:   []string{},
		},
		Storage: &tenancyv1alpha1.StoragePolicy{AllowDataSources: ptr(true), AllowedStorageClassNames: []string{}},
		Limits: &tenancyv1alpha1.LimitsPolicy{
			Quota: corev1.ResourceList{
				corev1.ResourcePods:                   resource.MustParse("1000"),
				corev1.ResourceRequestsCPU:            resource.MustParse("64"),
				corev1.ResourceRequestsMemory:         resource.MustParse("256Gi"),
				corev1.ResourceLimitsCPU:              resource.MustParse("128"),
				corev1.ResourceLimitsMemory:           resource.MustParse("512Gi"),
				corev1.ResourceServices:               resource.MustParse("200"),
				corev1.ResourceServicesNodePorts:      resource.MustParse("0"),
				corev1.ResourceServicesLoadBalancers:  resource.MustParse("0"),
				corev1.ResourcePersistentVolumeClaims: resource.MustParse("200"),
				corev1.ResourceRequestsStorage:        resource.MustParse("10Ti"),
				corev1.ResourceSecrets:                resource.MustParse("2000"),
				corev1.ResourceConfigMaps:             resource.MustParse("2000"),
			},
			// Counted in the budget for containers that request nothing, never written into
			// them (the values a super-cluster LimitRange used to write as defaults).
			DefaultCharge: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi"),
			},
			// None: a LimitRange changes tenant Pods (LimitsPolicy.LimitRange).
			LimitRange:     []corev1.LimitRangeItem{},
			MaxObjectBytes: ptr(resource.MustParse("512Ki")),
			MaxObjects:     ptr(int32(20000)),
			MaxCachedBytes: ptr(resource.MustParse("64Mi")),
			// About 40 MB of stubs and cache bookkeeping beside maxCachedBytes; an ordinary
			// large tenant has about 10000 objects (LimitsPolicy.MaxCachedObjects).
			MaxCachedObjects: ptr(int32(40000)),
		},
		DisruptionBudgets: &tenancyv1alpha1.DisruptionBudgetPolicy{AllowBlocking: ptr(false), MaxBlockingSeconds: ptr(int32(0))}, // off: a budget holds drains as in the tenant
		// A tenant's users debug their own Pods as on a real cluster; the stream bound is
		// the syncer's flag (0).
		Kubelet: &tenancyv1alpha1.KubeletPolicy{AllowExec: ptr(true), AllowAttach: ptr(true), AllowPortForward: ptr(true), MaxStreams: ptr(int32(0))},
	}
}
