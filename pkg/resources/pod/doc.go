// Package pod syncs Pods: specs downward (tenant → super), node binding and status upward.
//
// # Downward
//
// The super Pod is the tenant Pod's spec in the mapped namespace, with what belongs to the
// tenant cluster removed (see Desired): spec.nodeName (the super scheduler places Pods),
// spec.priority and preemptionPolicy (recomputed by the super cluster's admission), and the tenant's projected
// service-account token volume (a super-cluster token must never reach a tenant Pod;
// automountServiceAccountToken is set to false). Pods are mostly immutable: only labels,
// annotations and container images are updated in place.
//
// priorityClassName is kept when it names a built-in system class or a public super
// PriorityClass (pkg/resources/priorityclass); a Pod naming any other class is not synced: it
// stays Pending with a PriorityClassNotPublic Warning Event.
//
// # Policy
//
// Before anything is written for a new Pod (its super namespace, tokens, the super Pod), its
// full spec is checked against the tenant's Pod policy (TenantPolicy pods, built-in defaults in
// pkg/policy). Refusing rules (policy.CheckPod): a volume source not in allowedVolumeTypes
// (built-in: the Pod Security "restricted" set configMap, csi, downwardAPI, emptyDir,
// ephemeral, persistentVolumeClaim, projected, secret; sources are judged by which
// VolumeSource field is set, so one a newer Kubernetes adds is refused until listed), an
// inline csi driver not in allowedCSIDrivers (built-in: none), a projected podCertificate or
// clusterTrustBundle source (always: the super cluster's kubelet would resolve them with the
// super cluster's signers and trust bundles for the super Pod), a nodeSelector or required node
// affinity key outside allowedNodeLabelKeys (built-in: zone, region, os, arch, instance type),
// node names (matchFields metadata.name, kubernetes.io/hostname) other than Nodes of the
// tenant's pool (the Nodes the policy's nodeSelector selects; without one, the tenant's vNodes,
// so a tenant DaemonSet's Pods keep working), a required pod affinity or anti-affinity term
// or a DoNotSchedule topology spread constraint whose topology key is not kubernetes.io/hostname,
// an allowed node label key or a key of the policy's nodeSelector (rules podAffinity,
// topologySpread), a runtimeClassName outside
// allowedRuntimeClassNames and the default, a schedulerName outside allowedSchedulerNames
// (built-in: default-scheduler; unset is allowed), a priorityClassName outside
// allowedPriorityClassNames when set. A refused Pod is not synced: it stays Pending with
// PodScheduled=False, reason PolicyDenied and the rule and message, a Warning Event with
// reason PolicyDenied, and a count in vcsyncer_policy_denials_total; it is not retried until
// it or the policy changes.
//
// Filtering rules (policy.FilterPod), applied to the super Pod, the Pod still syncs:
// tolerations not matching allowedTolerations are dropped (built-in: only the not-ready and
// unreachable NoExecute tolerations the tenant's DefaultTolerationSeconds admission adds; a
// tenant DaemonSet's other tolerations are dropped too), reported once with rule toleration;
// preferred node affinity terms naming nodes or keys outside the allowlist are dropped; the
// policy's nodeSelector is merged in (its values win) and its tolerations appended, so tenant
// constraints only narrow the pool; defaultRuntimeClassName is set on Pods naming none;
// preferred pod affinity and anti-affinity terms and ScheduleAnyway spread constraints with a
// topology key the policy does not allow are dropped; terminationGracePeriodSeconds and the
// containers' preStop and postStart sleep seconds above maxTerminationGracePeriodSeconds
// (built-in: 3600) are clamped to it, as is the grace period of a tenant's delete, and a
// tenant's force deletion (grace period 0) deletes the super Pod with grace period 1, never by
// force (rule terminationGracePeriod). One report covers what a Pod's filtering left out. The
// classes the policy allows are copied into the tenant (pkg/resources/runtimeclass), so a Pod
// can name them and keeps the name in the super Pod. A Pod
// naming a RuntimeClass only the tenant has (a name the policy does not allow, of a class the
// tenant apiserver has and the super cluster does not; both read live when the super Pod is
// created) counts as naming none: its handler means nothing on the super Nodes, so the
// policy's default runtime runs it, and a Normal Event with reason
// RuntimeClassNotInSuperCluster says so. A name the super cluster has is the policy's to
// refuse, and no name the policy does not allow ever reaches a super Pod. The super Pod never
// carries the tenant's spec.overhead (the super cluster's RuntimeClass admission sets the super
// class's); the tenant Pod keeps the overhead its apiserver set. The policy applies when a super
// Pod is created: a change does not touch running Pods.
//
// Every pod affinity and anti-affinity term of a super Pod is confined to the tenant's super
// namespaces (confineAffinity): namespace names are mapped to super namespaces, and every
// namespaceSelector, the empty one (all namespaces) too, is ANDed with the tenant UID label
// the syncer writes on super namespaces; so a term never counts another tenant's Pods or the
// super cluster's own (a required anti-affinity term over all namespaces would otherwise keep
// them from being scheduled). Ephemeral containers (kubectl debug) are not synced: a Warning
// Event with reason PolicyDenied (rule ephemeralContainer) and one count report them once per
// set of ephemeral container names.
//
// A tenant Pod created with spec.nodeName preset is bound to that super Node only when it names
// one of the tenant's vNodes (a super Node the syncer already placed its Pods on); otherwise,
// as in a cluster without a kubelet of that name, it is not synced, stays Pending, and gets a
// Warning Event with reason NodeNotFound. A tenant cannot pick arbitrary super Nodes.
//
// The super Pod's container and pod-level requests and limits, and so its QoS class, are the
// tenant's: the syncer keeps no LimitRange by default. The tenant's budget (limits.quota over
// all of its namespaces together) is decided first, from the syncer's counts and the cached
// Pod (whose resources the cache keeps), before anything is asked of an apiserver for the Pod
// (budget.go, on resources.BudgetHold, which the other kinds' reconciler shares): a Pod that fits reserves its charge (policy.PodCharge: its requests and limits,
// with limits.defaultCharge for containers that request nothing, counted and never written
// into the Pod) and the super Pod records it (annotation tenancy.vcsyncer.io/budget-charge),
// so the use is counted from the super Pod informer, across restarts too. A Pod without room
// waits: PodScheduled=False with reason QuotaExceeded and a message naming the budget, its use
// and the Pod's request, one Warning Event with the same reason and one count (rule
// tenantQuota) per Pod version; it is parked, not retried (no TokenRequest, no super create),
// and runs again when an object of the tenant ends, is deleted or costs less, or the policy
// changes.
//
// A Pod the super cluster refuses to create for a reason that does not change by itself (Pod
// Security admission, a validating webhook or ValidatingAdmissionPolicy, a LimitRange, an
// invalid object) stays Pending with PodScheduled=False, reason SuperClusterRejected and the
// super apiserver's message (at most 1 KiB), and a Warning Event with the same reason; that
// version of the Pod is not sent again (neither a re-enqueue nor a remediation scan) until the
// Pod or the policy changes. A Pod the super cluster's quota admission refuses (a ResourceQuota
// in the super namespace; the syncer's backstop counts no Pods) gets reason QuotaExceeded on both
// (and is retried with backoff), one naming a PriorityClass that is not public
// PriorityClassNotPublic. One refusal kind has one reason, on the Event and on the condition
// (policy.Denial.Reason for the policy's and the quota's). Once the Pod is created, the upward
// copy replaces the condition with the super scheduler's.
//
// The controller of a refused Pod (its controller owner reference naming a ReplicaSet,
// StatefulSet, DaemonSet, Job or ReplicationController) gets one Warning Event with the
// refusal's reason and message, naming the Pod, as a real cluster's controller shows
// FailedCreate (that reason stays the tenant controller's own: here the Pod was created): once
// per owner UID and reason within 10 minutes, however many of its Pods are refused and however
// often they are retried; at most 4096 (owner, reason) pairs are remembered per tenant. An
// owner reference is the tenant's to write, so the owner is read from the tenant apiserver and
// the Event is written only when an object of that kind, name and UID exists in the Pod's
// namespace (reportOwner).
//
// # Upward
//
// When the super Pod is bound, the tenant Pod is bound (pods/binding) to a virtual Node named
// after the super Node, created in the tenant first by the vNode manager (pkg/vnode). The
// super Pod's status is then copied into the tenant Pod, except the tenant-owned conditions
// (TenantOwned: every type but the kubelet's, the scheduler's and DisruptionTarget; readiness
// gates among them), which go the other way: they are copied into the super Pod's status
// (pods/status) so that the super kubelet sees the gates, and the upward copy never overwrites
// or removes them. A super Pod whose tenant Pod is missing from a tenant cache that lags
// behind the tenant apiserver (after a resume) is retried, not dropped. A tenant condition of
// a super type newer than the cached super Pod's (the cache behind, after a resume) makes the
// copy read the live super Pod once and copy that.
//
// # Deletion and loss
//
// Deleting a tenant Pod deletes the super Pod with the same grace period; once the super Pod
// is gone, the tenant Pod is removed with grace period 0 (the syncer plays the kubelet's part).
// A super Pod the super cluster disrupts (the eviction API of a node drain, the scheduler's
// preemption, the taint manager, the Pod garbage collector: each writes DisruptionTarget with
// its reason, EvictionByEvictionAPI, PreemptionByScheduler, DeletionByTaintManager or
// DeletionByPodGC, into the super Pod's status before deleting it) goes in the tenant the way
// it goes on a real cluster: DisruptionTarget with the same reason is written to the tenant
// Pod's status, then the tenant Pod is deleted (with the super Pod's grace period as soon as
// the super Pod is being deleted, or once it is gone) so that its controller replaces it;
// once the super Pod is gone the tenant Pod is left Failed with its containers terminated
// (the kubelet's ContainerStatusUnknown, exit code 137) before its deletion finishes. A super
// Pod the kubelet terminated (TerminationByKubelet: node pressure, node shutdown) is Failed
// and not deleted, and so is its tenant Pod. Why a super Pod went away is read from its last
// state when the syncer saw it deleted (resources.Disruptions, filled by the syncer's super
// Pod handler), or from the DisruptionTarget the upward copy already brought to the tenant
// Pod. If a bound super Pod disappears for none of these reasons (deleted by someone, or its
// disruption never seen by the syncer: a deletion seen only by a relist, or while the syncer
// was down, before the condition was copied up) while its tenant Pod is not being deleted,
// the tenant Pod is set to phase Failed with reason SuperPodLost, like a Pod whose node was
// lost: its containers terminated (reason SuperPodLost, exit code 137 as the kubelet reports
// a container it cannot locate), not ready, Ready and ContainersReady False, DisruptionTarget
// True; its controller (ReplicaSet, Job, ...) replaces it. A tenant Pod is never deleted on a
// guess. An unbound tenant Pod whose super Pod disappears gets a
// new super Pod.
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/admit, pkg/conversion, pkg/metrics, pkg/podcache, pkg/policy, pkg/reconcile, pkg/resources,
// pkg/resources/priorityclass, pkg/resources/storageclass, pkg/tenant, pkg/vnode); test/layering
// checks it.
package pod
