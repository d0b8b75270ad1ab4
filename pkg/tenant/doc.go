// Package tenant owns the syncer's connection to each tenant control plane: its rest.Config,
// clientset, informer caches, event recorder and health, and the Tenant controller that
// starts, restarts and stops those connections as Tenant objects and their kubeconfig Secrets
// come and go in the super cluster.
//
// # Usage
//
// NewRegistry creates the registry of running tenant Clusters; Reconciler (a controller-runtime
// reconciler for Tenant objects) fills it. The syncer passes Hooks so it can register its
// informer handlers on a Cluster before its informers start, and enqueue every cached object
// once the caches have synced.
//
// # Implementation details
//
// Each Cluster runs in its own goroutine: it probes the tenant apiserver (GET /version with a
// 5 s timeout, retried with exponential backoff from 1 s to 30 s), starts its informers only
// once the apiserver answered, waits for the caches to sync and then probes every 10 s. Every
// state change notifies the Tenant controller through a channel source, which writes the
// Tenant's conditions. A slow or unreachable tenant therefore never blocks the Tenant
// controller or any other tenant. The model is cluster-api's controllers/clustercache.
//
// A Cluster's informers cache what the tenant creates, so what one tenant costs the syncer's
// memory is bounded there: their transform (Cluster.transform: TrimTenantObject, then
// HeldBytes.Admit) caches an object of a synced kind (HeldKinds: Secrets, ConfigMaps,
// Services, ServiceAccounts, Endpoints, EndpointSlices, claims, PodDisruptionBudgets,
// Ingresses, NetworkPolicies, Namespaces and Pods, a Pod in its compact form) in full only
// while its whole size fits the policy's limits.maxObjectBytes and the sum held for all those
// kinds together fits limits.maxCachedBytes; any other is cached as a stub of the same type
// (name, UID, resourceVersion, timestamps, AnnotationHeldOut; a Pod's spec.nodeName) that its
// reconcile refuses. The checkpoints copy these caches, stubs included. The Tenant's
// WithinMemoryBound condition is False while stubs exist. Not bounded: the cluster-scoped
// kinds the syncer copies up into the tenant (vNodes, PersistentVolumes, StorageClasses,
// PriorityClasses, RuntimeClasses: their upward writers read the cached objects) and the
// syncer's own Event copies.
//
// # Implementation considerations
//
// The syncer only reads kubeconfig Secrets in one namespace (--kubeconfig-namespace), so it
// never caches every Secret of the super cluster. A Tenant is deleted through a finalizer:
// its informers stop first, then every super namespace labelled with its UID is deleted (the
// documented cleanup policy), then the finalizer is removed.
//
// It sits on floor 2 of the package map in docs/architecture.md and may import packages on floors
// 0–2 only (today: pkg/apis/tenancy/v1alpha1, pkg/conversion, pkg/metrics, pkg/podcache,
// pkg/policy); test/layering checks it.
package tenant
