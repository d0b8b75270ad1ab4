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
// Ingresses, NetworkPolicies, Namespaces and Pods, a Pod in its compact form, and the
// cluster-scoped kinds the syncer watches in every tenant to keep its own objects there:
// Nodes, PersistentVolumes, StorageClasses, PriorityClasses, RuntimeClasses) in full only
// while its whole size fits the policy's limits.maxObjectBytes and the sum held for all those
// kinds together fits limits.maxCachedBytes; any other is cached as a stub of the same type
// (name, UID, resourceVersion, timestamps, AnnotationHeldOut; a Pod's spec.nodeName) that its
// reconcile refuses. The checkpoints copy these caches, stubs included. The Tenant's
// WithinMemoryBound condition is False while stubs exist. A stub of a cluster-scoped kind is
// treated as an object the syncer does not own (a vNode stub gets no heartbeat and binds no
// Pod; a class stub is never replaced; a PV stub refuses nothing): the harm of reaching the
// bound stays with the tenant that reached it. The syncer's own Event copies (the tenant
// Events its informer selects by a label a tenant can put on its own) are cached as
// eventcache.Copy records of a bounded size and counted like the kinds above.
//
// The number of entries is bounded too (limits.maxCachedObjects; objectbound.go): a stub is
// about 1.5 KB with the caches' bookkeeping (measured for Service and Node stubs), so beyond
// the byte caps a tenant could still add entries by the million.
// HeldBytes counts the entries of every kind above, held or stubs. Past the cap an informer
// cannot leave an object out (it would lose track of its updates and deletes), so the tenant
// is not watched at all: before a Cluster starts its informers it counts the tenant's objects
// with one LIST ?limit=1 per kind (items plus the apiserver's remainingItemCount: no object is
// decoded beyond the first of each kind; Event copies, selected by a label, by pages of 100
// and only when all the tenant's Events could take the count over the cap) and, while they are
// over the cap, stays Suspended
// (Tenant Synced=False and WithinMemoryBound=False with reason TooManyObjects, phase
// Suspended, a Warning Event, gauge vcsyncer_tenant_suspended), counting again after 30 s
// doubling to 10 min, or at once when its policy changes. A running Cluster whose caches take
// a new object at the cap caches it as a stub and marks HeldBytes overflowed; the Tenant
// controller then replaces the Cluster (the old caches are dropped) with one that waits the
// tenant's next delay before it counts (Registry.nextSuspendDelay: 30 s doubling to 10 min,
// forgotten when the Tenant is removed), so a tenant hovering at the cap costs one full list
// per delay at most. Other tenants are untouched: each Cluster waits in its own goroutine and
// the super-cluster objects of the suspended tenant are kept. A tenant can still create
// objects between the count and the informers' first list; that list is a stream (client-go's
// watch-list, checkpoint/source.Factory), each object through the transform as it arrives, so
// the bytes it holds are bounded as they come and the entries past the cap overflow as above.
// A resumed informer's first list comes from the checkpoint and any later one is a stream too.
// What is left: an informer whose tenant apiserver does not serve watch-lists falls back to a
// LIST (held whole once); the count
// skips kinds the syncer may not list and, where the apiserver gives no remainingItemCount,
// counts the returned item only.
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
