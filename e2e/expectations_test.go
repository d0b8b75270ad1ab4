package e2e

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
	gke + "ai-ml/llm-multiple-gpus/falcon-40b/text-generation-inference.yaml": "Unschedulable: nvidia.com/gpu and a nodeSelector for spot GPU nodes " +
		"(its generic ephemeral volume's claim, storage class premium-rwo, is not provisionable either)",
	gke + "quickstarts/whereami/k8s/deployment.yaml": "Unschedulable: topologySpreadConstraints on topology.kubernetes.io/zone with " +
		"DoNotSchedule, and the kwok Nodes carry no zone label",
	website + "pods/pod-with-scheduling-gates.yaml": "SchedulingGated: its two scheduling gates are never removed",
	website + "pods/pod-nginx-specific-node.yaml":   "spec.nodeName foo-node is preset and that Node does not exist: the Pod never runs (SOURCES.md)",
}

// vanishing are manifests whose objects the tenant's own controllers delete right after they
// are created, as in any cluster (Jobs with ttlSecondsAfterFinished are recognised as well).
var vanishing = map[string]string{
	website + "secret/serviceaccount-token-secret.yaml": "the tenant's token controller deletes a service-account-token " +
		"Secret whose ServiceAccount (sa-name) does not exist",
}

// knownGap is something that cannot work yet (or cannot be observed here), with its reason.
type knownGap struct {
	// Name identifies the gap in logs.
	Name string
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
	pvcReason = "PersistentVolumeClaims are not synced yet (PVC downward, PV/StorageClass upward come with a later issue): " +
		"the super Pod names a claim that does not exist in the super cluster, so the super scheduler keeps it Pending"
	kwokReason = "kwok fakes the kubelet: it pulls no image, runs no container and mounts no volume, so every scheduled " +
		"Pod turns Running (Pods labelled by a Job Succeeded); the test can only assert that the tenant shows the super Pod's state"
	missingSAReason = "the Pod template names a ServiceAccount that the upstream kustomize base defines in a file that is not " +
		"in the corpus; the tenant's ServiceAccount admission refuses the Pods (ReplicaSet/Job FailedCreate), so no Pod exists to sync"
)

var (
	gapPVC       = knownGap{Name: "pvc-sync", Reason: pvcReason, PodsMayNotRun: true}
	gapPVCObject = knownGap{Name: "pvc-sync", Reason: "PersistentVolumeClaims and PersistentVolumes are not synced yet (later issue): " +
		"the objects stay tenant-only and get no super copy or status"}
	gapMissingSA = knownGap{Name: "serviceaccount-not-in-corpus", Reason: missingSAReason, PodsMayNotRun: true}
)

func kwokGap(real string) knownGap {
	return knownGap{Name: "kwok-no-runtime", Reason: kwokReason, RealKubelet: real}
}

// rejectedBySuperPolicy lists manifests whose Pods the super cluster refuses by design: the
// syncer labels every super namespace pod-security.kubernetes.io/enforce=baseline (its
// --pod-security-enforce default), so Pods that would break out of a shared node never reach
// the super cluster. Expected: no super Pod, the tenant Pod stays Pending and unbound, and the
// tenant gets a SyncFailed Warning Event naming the PodSecurity violation.
var rejectedBySuperPolicy = map[string]string{
	examples + "_archived/sysdig-cloud/sysdig-daemonset.yaml":   "privileged, hostNetwork, hostPID and hostPath volumes violate Pod Security baseline",
	examples + "_archived/javaweb-tomcat-sidecar/javaweb.yaml":  "hostPort 8001 violates Pod Security baseline",
	examples + "databases/cassandra/cassandra-statefulset.yaml": "capability IPC_LOCK violates Pod Security baseline (its PVCs are a known gap as well)",
}

// knownGaps are the named known gaps per corpus file. The test logs every one of them on
// every run, and logs when one of them turns out to work.
var knownGaps = map[string][]knownGap{
	// Volumes.
	examples + "AI/model-serving-tensorflow/deployment.yaml":                       {gapPVC},
	examples + "AI/model-serving-tensorflow/pvc.yaml":                              {gapPVCObject},
	examples + "AI/model-serving-tensorflow/pv.yaml":                               {gapPVCObject},
	gke + "batch/aiml-workloads/kubernetes-manifests/persistent-volume-claim.yaml": {gapPVCObject},
	podinfo + "deploy/bases/database/pvc-primary.yaml":                             {gapPVCObject},
	podinfo + "deploy/bases/database/statefulset-primary.yaml":                     {gapPVC},
	examples + "databases/cassandra/cassandra-statefulset.yaml": {{
		Name: "pvc-sync", PodsMayNotRun: true,
		Reason: pvcReason + " (volumeClaimTemplates; the StorageClass in the same file is tenant-only too)",
	}},
	website + "application/web/web.yaml":                            {{Name: "pvc-sync", Reason: pvcReason + " (volumeClaimTemplates)", PodsMayNotRun: true}},
	examples + "_archived/cockroachdb/cockroachdb-statefulset.yaml": {{Name: "pvc-sync", Reason: pvcReason + " (volumeClaimTemplates)", PodsMayNotRun: true}},

	// Environment.
	website + "service/networking/dual-stack-preferred-ipfamilies-svc.yaml": {{
		Name: "single-stack-tenant", Rejected: true,
		Reason: "the tenant control planes of test/framework are single-stack IPv4, so the tenant apiserver rejects " +
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
	examples + "databases/mysql-cinder-pd/mysql.yaml":                    {kwokGap("Pending ContainerCreating, FailedMount (no in-tree cinder plugin)")},

	// Corpus.
	podinfo + "deploy/bases/frontend/deployment.yaml":         {gapMissingSA},
	podinfo + "deploy/bases/frontend/cronjob-warm-cache.yaml": {gapMissingSA, kwokGap("ContainerCreating, FailedMount (ConfigMap warm-cache-script absent)")},
	podinfo + "deploy/secure/frontend/deployment.yaml":        {gapMissingSA, kwokGap("ContainerCreating, FailedMount (Secret podinfo-frontend-tls absent)")},
	podinfo + "deploy/bases/database/cronjob-backup-daily.yaml": {{
		Name: "cron-not-due", PodsMayNotRun: true,
		Reason: `schedule "0 0 * * *": no Job is due while the test runs (its Pods would wait on the absent ConfigMap backup-script)`,
	}},
	podinfo + "kustomize/hpa.yaml": {{
		Name: "tenant-only-kind", Reason: "the HorizontalPodAutoscaler acts in the tenant only; its target Deployment podinfo is not in " +
			"the corpus and Pod metrics are not synced up from the super cluster",
	}},

	// Syncer behaviour that differs from what the manifest asks for.
	"dockersamples-example-voting-app/k8s-specifications/vote-service.yaml": {{
		Name: "node-ports-reallocated",
		Reason: "the super cluster allocates its own node ports (pkg/resources/service): the tenant's fixed nodePort 31000 " +
			"is not kept, so <node>:31000 does not reach the Service (keeping it would collide between the two tenants)",
	}},
	website + "pods/storage/projected-service-account-token.yaml": {{
		Name: "projected-token-dropped",
		Reason: "the syncer removes every projected volume with a serviceAccountToken source (a super-cluster token must never " +
			"reach a tenant Pod), so the Pod's own token-vol (audience api) and its mount are missing from the super Pod: " +
			"a real container would find no /service-account/token",
	}},
	// NetworkPolicies are synced (opt-in kind, turned on by startSyncer) with namespaceSelectors
	// confined to the tenant (pkg/resources/networkpolicy). max-map-count-setter-ds.yaml's
	// PriorityClass user-daemonset-priority is the tenant's own, not a public super class, so
	// its Pods would be rejected early with a PriorityClassNotPublic Event
	// (pkg/resources/priorityclass); its nodeSelector cloud.google.com/compute-class matches no
	// vNode, so it has no Pod here.
	"kubernetes-ingress-nginx/deploy/static/provider/aws/deploy.yaml": {{
		Name: "webhook-unreachable",
		Reason: "the ValidatingWebhookConfiguration points at the tenant Service ingress-nginx-controller-admission, whose " +
			"Pods run in the super cluster where the tenant apiserver cannot reach them (no Endpoints sync, no pod " +
			"network); only Ingress writes would call it and the corpus applies none",
	}},
}

// genericGaps apply to any manifest; the test detects and logs them per Pod.
var genericGaps = map[string]string{
	"downward-api-super-identity": "env/volume fieldRefs metadata.namespace and metadata.uid are copied unchanged into the super " +
		"Pod, so a real kubelet would inject the super namespace and the super Pod's UID instead of the tenant's " +
		"(the super Pod's tenancy.vcsyncer.io/namespace and /uid annotations hold the tenant values)",
}
