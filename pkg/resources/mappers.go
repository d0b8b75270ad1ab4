package resources

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/tenant"
)

// SuperMapper is implemented by kinds whose super objects carry no ownership stamps (public
// PriorityClasses shared by all tenants, super Events about synced objects). The syncer calls
// MapSuper for each change of the kind's SuperInformer, and for every cached super object when
// a tenant's caches have synced, instead of reading ownership annotations.
type SuperMapper interface {
	// MapSuper returns the upward requests that a change of super object obj affects, among
	// the synced tenants clusters.
	MapSuper(env *Env, obj metav1.Object, clusters []*tenant.Cluster) []Request
}

// DependentMapper is implemented by kinds whose tenant objects depend on tenant objects of
// other kinds (Endpoints and EndpointSlices on their Service and on the tenant's Pod IPs,
// PodDisruptionBudgets on their Pods): when a dependency changes, the syncer enqueues the
// dependents downward so objects applied in any order converge.
type DependentMapper interface {
	// DependsOn returns the kinds this kind depends on.
	DependsOn() []Kind
	// Dependents returns the downward requests of tenant c affected by a change (add, update,
	// delete) of the dependency dep, an object of one of the DependsOn kinds.
	Dependents(c *tenant.Cluster, dep metav1.Object) []Request
}

// PodIPMapper is implemented by kinds whose tenant objects name Pod IPs (Endpoints and
// EndpointSlices of Services without a selector): their super copies may keep an address only
// while it is the IP of one of the tenant's running super Pods. The syncer calls
// PodIPDependents for every change of a tenant's super Pod that frees an address (the Pod is
// deleted, finishes, or its IPs change), with the IPs the Pod held before the change, so the
// objects naming them are reconciled again from the super side alone: no write to the tenant's
// apiserver (which the tenant may refuse) has to succeed first.
type PodIPMapper interface {
	// PodIPDependents returns the downward requests of tenant c's objects that named one of
	// ips when last reconciled.
	PodIPDependents(c *tenant.Cluster, ips []string) []Request
}

// Upwarder is implemented by kinds added after the skeleton that have an upward path (the
// skeleton's Pod and Service are known to the syncer): super changes, and the initial list of
// a tenant, then enqueue upward requests too.
type Upwarder interface {
	// UpwardOnTenantChange reports whether a change of the tenant object also enqueues an
	// upward request (an Ingress recreated in the tenant needs its status back; a tenant copy
	// of a public PriorityClass edited in the tenant is reset).
	UpwardOnTenantChange() bool
}
