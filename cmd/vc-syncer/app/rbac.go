package app

// The syncer's permissions in the super cluster, as +kubebuilder:rbac markers: `make manifests`
// generates config/rbac/role.yaml (the ClusterRole vc-syncer and the Role vc-syncer in
// vc-syncer-system) from them, and `make verify` fails when that file, or the chart's
// templates/rbac.yaml (which explains each rule and adds those of --opt-in-kinds), drifts.
// Each rule names the code that makes the calls.

// Tenants (pkg/tenant): the reconciler's cache watches them; Update adds and removes the cleanup
// finalizer; status is written with Status().Update and Status().Patch. TenantPolicies are read
// only. `vc-syncer tenant add/remove` runs with the admin's credentials, so no create or delete.
// +kubebuilder:rbac:groups=tenancy.vcsyncer.io,resources=tenants,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=tenancy.vcsyncer.io,resources=tenants/status,verbs=update;patch
// +kubebuilder:rbac:groups=tenancy.vcsyncer.io,resources=tenantpolicies,verbs=get;list;watch

// Super namespaces, one per tenant namespace (admit.EnsureSuperNamespace,
// pkg/resources/namespace; run.go creates --kubeconfig-namespace when missing).
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create;update;delete

// Pods (pkg/resources/pod): created, patched, deleted, never updated; tenant-owned conditions
// (readiness gates) are patched into the super Pod's status.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch

// The virtual Nodes' kubelet API (pkg/kubeletproxy) forwards tenant users' logs, exec, attach
// and port-forward of their own synced Pods to these subresources (get: logs and WebSocket
// upgrades; create: SPDY upgrades).
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups="",resources=pods/exec;pods/attach;pods/portforward,verbs=get;create
// Its stats/summary and metrics/resource (--kubelet-node-stats) read the super Nodes'
// resource metrics through nodes/<node>/proxy: that grant is not in this role (it would also
// open every super kubelet's own API to the syncer's token); the chart adds it with
// kubeletAPI.nodeStats.

// Kinds copied down by reconcile.Reconcile and cached by pkg/syncer.
// +kubebuilder:rbac:groups="",resources=configmaps;secrets;serviceaccounts;services;endpoints;persistentvolumeclaims,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch;create;update;delete

// Bounds (pkg/admit bounds.go): the ResourceQuota and LimitRange of every super namespace,
// cached, reset when edited, deleted when the policy sets none; get on a quota name conflict.
// +kubebuilder:rbac:groups="",resources=resourcequotas,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=limitranges,verbs=list;watch;create;update;delete

// Read only: Nodes (pkg/vnode), PersistentVolumes, public StorageClasses and PriorityClasses,
// and super Events (copied up unless --disabled-kinds=Event).
// +kubebuilder:rbac:groups="",resources=nodes;persistentvolumes,verbs=list;watch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=list;watch
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=list;watch
// RuntimeClasses: list and watch to copy those a tenant's policy allows into the tenant
// (pkg/resources/runtimeclass); get to read live whether the super cluster has the class a
// tenant Pod names (a class only the tenant has is not the policy's to refuse; pkg/resources/pod).
// +kubebuilder:rbac:groups=node.k8s.io,resources=runtimeclasses,verbs=get;list;watch

// --metrics-secure: authenticate and authorize the clients of /metrics and the status page.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// The syncer's own namespace: the leader-election Lease, tenant kubeconfig and checkpoint
// Secrets, leader-election Events.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=vc-syncer-system,resources=leases,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",namespace=vc-syncer-system,resources=secrets,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",namespace=vc-syncer-system,resources=events,verbs=create;patch
