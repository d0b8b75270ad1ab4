package e2e

import "testing"

// Expectations for the real-world corpus (../shared/realworld), taken from its SOURCES.md
// ("Expected behaviour: negatives and runtime failures") and from what this environment can
// show. Keys are corpus paths "<owner>-<repo>/<path>". Files not named here are expected to be
// accepted by the tenant and, when they make Pods, to have every Pod Running (Succeeded for Job
// Pods) in the tenant exactly as in the super cluster.

const (
	gke       = "GoogleCloudPlatform-kubernetes-engine-samples/"
	examples  = "kubernetes-examples/"
	website   = "kubernetes-website/content/en/examples/"
	podinfo   = "stefanprodan-podinfo/"
	dashboard = "kubernetes-dashboard/hack/test-resources/"
)

// expectedPending are manifests whose Pods the real super-cluster scheduler never places,
// whatever the kubelet. The test asserts phase Pending, unbound, in the super cluster and the
// same state in the tenant.
var expectedPending = map[string]string{
	examples + "AI/vllm-deployment/vllm-deployment.yaml": "Unschedulable: requests nvidia.com/gpu, the kwok Nodes have none",
	gke + "quickstarts/whereami/k8s/deployment.yaml": "Unschedulable: topologySpreadConstraints on topology.kubernetes.io/zone with " +
		"DoNotSchedule, and the kwok Nodes carry no zone label",
	website + "pods/pod-with-scheduling-gates.yaml": "SchedulingGated: its two scheduling gates are never removed",
	website + "pods/pod-nginx-specific-node.yaml":   "spec.nodeName foo-node is preset and that Node does not exist: the Pod never runs (SOURCES.md)",
	examples + "AI/model-serving-tensorflow/deployment.yaml": "its claim my-model-pvc names the tenant-created hostPath PV my-model-pv, " +
		"which the syncer never copies down (package persistentvolumeclaim), so the claim has no super copy and the super " +
		"scheduler keeps the Pod Pending (persistentvolumeclaim not found)",
}

// unservedClaims are manifests whose PersistentVolumeClaims the syncer refuses to serve by
// design: the test asserts the tenant claim stays Pending with no super copy (the syncer also
// records a VolumeNotSynced Warning Event on it). Every other tenant claim must be Bound to a tenant PV whose
// claimRef names it and which mirrors the super claim's PV.
var unservedClaims = map[string]string{
	examples + "AI/model-serving-tensorflow/pvc.yaml": "volumeName my-model-pv is a PV the tenant created (pv.yaml, hostPath " +
		"/mnt/models/my_model): tenant PVs are never synced down, since one could name any host path or disk of the shared " +
		"super cluster",
}

// refusedClaims lists, by tenant namespace and claim name prefix, the claims made by the
// corpus's controllers (a StatefulSet's volumeClaimTemplates) that the built-in tenant policy
// refuses. Expected: no super copy, the tenant claim stays Pending.
var refusedClaims = map[string]policyRule{
	"rw-cassandra/cassandra-data-": {Rule: "storageClass", Why: "storageClassName fast names a StorageClass the super cluster has " +
		"and does not make public (pkg/localcluster: the provider's own class); the tenant's own class of that name is not the super one"},
}

// staticVolumes are the super PVs the test creates for each tenant as a super-cluster admin
// would, before the manifests are applied: tenant claim volumeName V binds super PV
// "<tenant>-<6 hex of sha256(tenant UID)>-V" (see conversion.SuperVolumeName).
var staticVolumes = map[string]string{
	// GKE batch/aiml-workloads persistent-volume-claim.yaml: storageClassName "" and volumeName
	// fileserver (a Filestore share in the tutorial), 1T ReadWriteMany.
	"fileserver": "1T",
}

// vanishing are manifests whose objects the tenant's own controllers delete right after they
// are created, as in any cluster (Jobs with ttlSecondsAfterFinished are recognised as well).
var vanishing = map[string]string{
	website + "secret/serviceaccount-token-secret.yaml": "the tenant's token controller deletes a service-account-token " +
		"Secret whose ServiceAccount (sa-name) does not exist",
}

// Causes of a knownGap. None of them is the syncer's: the real-world e2e must stay free
// of syncer gaps for what fake kubelets can run (TestNoSyncerGaps keeps it so).
const (
	// causeEnvironment: the local control planes (kwok instead of kubelets, single-stack,
	// loopback apiservers without a pod network) cannot run or show it.
	causeEnvironment = "environment"
	// causeCorpus: the manifest depends on files or times outside the corpus and the test.
	causeCorpus = "corpus"
	// causeDesign: the syncer deliberately does something else, documented in the README.
	causeDesign = "design"
)

// knownGap is something that cannot work here (or cannot be observed here), with its reason.
type knownGap struct {
	// Name identifies the gap in logs.
	Name string
	// Cause is causeEnvironment, causeCorpus or causeDesign.
	Cause string
	// Reason says why, and what would close it.
	Reason string
	// PodsMayNotRun: the manifest's Pods are not asserted to become Running (they are still
	// asserted to show the super Pod's state in the tenant).
	PodsMayNotRun bool
	// Rejected: the tenant apiserver of this environment rejects (part of) the manifest.
	Rejected bool
	// RealKubelet is the state SOURCES.md expects from a real kubelet, which kwok does not
	// produce (it turns every scheduled Pod Running, and Job Pods Succeeded).
	RealKubelet string
}

const (
	kwokReason = "kwok fakes the kubelet: it pulls no image, runs no container and mounts no volume, so every scheduled " +
		"Pod turns Running (Pods labelled by a Job Succeeded); the test can only assert that the tenant shows the super Pod's state"
	missingSAReason = "the Pod template names a ServiceAccount that the upstream kustomize base defines in a file that is not " +
		"in the corpus; the tenant's ServiceAccount admission refuses the Pods (ReplicaSet/Job FailedCreate), so no Pod exists to sync"
)

var (
	gapMissingSA = knownGap{Name: "serviceaccount-not-in-corpus", Cause: causeCorpus, Reason: missingSAReason, PodsMayNotRun: true}
)

func kwokGap(real string) knownGap {
	return knownGap{Name: "kwok-no-runtime", Cause: causeEnvironment, Reason: kwokReason, RealKubelet: real}
}

// rejectedBySuperPolicy lists manifests whose Pods the super cluster refuses by design: the
// syncer labels every super namespace pod-security.kubernetes.io/enforce=baseline (its
// --pod-security-enforce default), so Pods that would break out of a shared node never reach
// the super cluster. Expected: no super Pod, the tenant Pod stays Pending and unbound, and the
// tenant gets a SuperClusterRejected Warning Event naming the PodSecurity violation.
var rejectedBySuperPolicy = map[string]string{
	examples + "_archived/javaweb-tomcat-sidecar/javaweb.yaml":  "hostPort 8001 violates Pod Security baseline",
	examples + "databases/cassandra/cassandra-statefulset.yaml": "capability IPC_LOCK violates Pod Security baseline (its claims are refused: see refusedClaims)",
}

// policyRule is a rule of the tenant policy (pkg/policy) and what it does to a manifest.
type policyRule struct {
	// Rule is the rule name: the `rule` label of vcsyncer_policy_denials_total and the prefix
	// of the refusal message.
	Rule string
	// Why names what the manifest asks for that the rule refuses or filters.
	Why string
}

// refusedByTenantPolicy lists manifests whose Pods the syncer's built-in tenant policy refuses
// (no TenantPolicy is created by the test). Expected: no super Pod, the tenant Pod stays
// Pending and unbound with condition PodScheduled=False, reason PolicyDenied, whose message
// starts with "<rule>: ". A generic ephemeral volume's claim of such a Pod stays Pending
// without a super claim (the super cluster's ephemeral-volume controller makes it only for a
// super Pod).
var refusedByTenantPolicy = map[string]policyRule{
	gke + "ai-ml/llm-multiple-gpus/falcon-40b/text-generation-inference.yaml": {Rule: "nodePlacement",
		Why: "nodeSelector keys cloud.google.com/gke-accelerator and cloud.google.com/gke-spot are not allowed node label keys " +
			"(it also requests nvidia.com/gpu, which the kwok Nodes lack)"},
	examples + "_archived/sysdig-cloud/sysdig-daemonset.yaml": {Rule: "volumeType",
		Why: "hostPath volumes (docker.sock, /proc, /dev, ...); its privileged, hostNetwork and hostPID containers would also violate " +
			"the super namespaces' Pod Security baseline"},
	examples + "databases/mysql-cinder-pd/mysql.yaml": {Rule: "volumeType",
		Why: "an inline in-tree cinder volume (no plugin exists any more: with a real kubelet it would stay ContainerCreating, FailedMount)"},
}

// filteredByTenantPolicy lists manifests whose Pods the built-in tenant policy syncs with a
// part left out (reported with a PolicyDenied Warning Event on the tenant Pod); their Pods run
// as expected for every other manifest. Manifests that the policy would refuse but that make no
// Pod here are listed too.
var filteredByTenantPolicy = map[string]policyRule{
	dashboard + "kubernetes-dashboard-local.yaml": {Rule: "toleration",
		Why: "the toleration node-role.kubernetes.io/control-plane:NoSchedule is not copied: the Pods run on worker Nodes"},
	gke + "observability/elastic-stack-tutorial/max-map-count-setter-ds.yaml": {Rule: "nodePlacement",
		Why: "its nodeSelector cloud.google.com/compute-class would be refused, but no vNode matches it, so the DaemonSet makes no Pod"},
}

// refusedServices lists, by tenant namespace/name, the corpus's Services that the built-in
// tenant policy refuses (services.allowedTypes is ClusterIP only: NodePort and LoadBalancer
// take shared node ports and cloud load balancers). Expected: no super copy (a PolicyDenied
// Warning Event in the tenant); the Services' Pods run as for every other manifest.
var refusedServices = map[string]policyRule{
	"ingress-nginx/ingress-nginx-controller": {Rule: "serviceType", Why: "type LoadBalancer (ingress-nginx's deploy manifest)"},
	"rw-guestbook-go/guestbook":              {Rule: "serviceType", Why: "type LoadBalancer"},
	"rw-guestbook/frontend":                  {Rule: "serviceType", Why: "type LoadBalancer"},
	"rw-k8s-specifications/vote":             {Rule: "serviceType", Why: "type NodePort"},
	"rw-k8s/whereami":                        {Rule: "serviceType", Why: "type LoadBalancer"},
	"rw-release/frontend-external":           {Rule: "serviceType", Why: "type LoadBalancer"},
}

// knownGaps are the named known gaps per corpus file. The test logs every one of them on
// every run, and logs when one of them turns out to work.
var knownGaps = map[string][]knownGap{
	// Environment.
	website + "service/networking/dual-stack-preferred-ipfamilies-svc.yaml": {{
		Name: "single-stack-tenant", Cause: causeEnvironment, Rejected: true,
		Reason: "the tenant control planes of pkg/localcluster are single-stack IPv4, so the tenant apiserver rejects " +
			`ipFamilies [IPv6, IPv4] ("spec.ipFamilies[0]: Invalid value: \"IPv6\": not configured on this cluster"); ` +
			"the syncer never sees the Service",
	}},
	examples + "AI/vllm-deployment/vllm-deployment.yaml":                 {kwokGap("CreateContainerConfigError (Secret hf-secret absent), once schedulable")},
	dashboard + "crashloopbackoff-pod.yaml":                              {kwokGap("Running/CrashLoopBackOff with a growing restartCount")},
	dashboard + "imagepullbackoff-pod.yaml":                              {kwokGap("Pending ErrImagePull/ImagePullBackOff")},
	dashboard + "init-container-pod.yaml":                                {kwokGap("Pending Init:0/2 (initContainerStatuses waiting)")},
	dashboard + "succeeded-pod.yaml":                                     {kwokGap("Succeeded (kwok completes only Pods labelled by a Job)")},
	website + "pods/private-reg-pod.yaml":                                {kwokGap("Pending InvalidImageName (<your-private-image>)")},
	gke + "ai-ml/gke-a100-jax/kubernetes/job.yaml":                       {kwokGap("Pending InvalidImageName (<<PROJECT>> in the image)")},
	website + "pods/storage/projected-secret-downwardapi-configmap.yaml": {kwokGap("Pending ContainerCreating, FailedMount (mysecret, myconfigmap absent)")},

	// Corpus.
	podinfo + "deploy/bases/frontend/deployment.yaml":         {gapMissingSA},
	podinfo + "deploy/bases/frontend/cronjob-warm-cache.yaml": {gapMissingSA, kwokGap("ContainerCreating, FailedMount (ConfigMap warm-cache-script absent)")},
	podinfo + "deploy/secure/frontend/deployment.yaml":        {gapMissingSA, kwokGap("ContainerCreating, FailedMount (Secret podinfo-frontend-tls absent)")},
	podinfo + "deploy/bases/database/cronjob-backup-daily.yaml": {{
		Name: "cron-not-due", Cause: causeCorpus, PodsMayNotRun: true,
		Reason: `schedule "0 0 * * *": no Job is due while the test runs (its Pods would wait on the absent ConfigMap backup-script)`,
	}},
	podinfo + "kustomize/hpa.yaml": {{
		Name: "hpa-target-not-in-corpus", Cause: causeCorpus, Reason: "the HorizontalPodAutoscaler acts in the tenant only, and its " +
			"target Deployment podinfo is not in the corpus (kwok reports no Pod metrics either)",
	}},

	// The environment.
	"kubernetes-ingress-nginx/deploy/static/provider/aws/deploy.yaml": {{
		Name: "webhook-unreachable", Cause: causeEnvironment,
		Reason: "the ValidatingWebhookConfiguration points at the tenant Service ingress-nginx-controller-admission, whose " +
			"Pods run in the super cluster: the tenant apiservers of pkg/localcluster run on loopback with no route to " +
			"the super cluster's Pod network (kwok Pods have no network at all); only Ingress writes would call it and " +
			"the corpus applies none",
	}},
}

// TestNoSyncerGaps keeps the corpus expectations honest: every known gap names a cause that is
// not the syncer's.
func TestNoSyncerGaps(t *testing.T) {
	for path, gaps := range knownGaps {
		for _, g := range gaps {
			switch g.Cause {
			case causeEnvironment, causeCorpus, causeDesign:
			default:
				t.Errorf("%s: known gap %q has cause %q: a syncer gap (or a missing cause)", path, g.Name, g.Cause)
			}
		}
	}
}
