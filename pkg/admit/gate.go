package admit

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Pipelines is what the Gate needs from the syncer's pipelines (pkg/syncer implements it):
// waking requests and reading its caches. Its methods are called from event handlers and
// workers, without any lock of the Gate held.
type Pipelines interface {
	// Down enqueues req downward at high priority.
	Down(req resources.Request)
	// Up enqueues req upward at high priority.
	Up(req resources.Request)
	// UpwardKind reports whether kind has an upward (super → tenant) path.
	UpwardKind(kind resources.Kind) bool
	// DownwardKinds returns the synced kinds with a downward path.
	DownwardKinds() []resources.Kind
	// TenantInformer returns tenant c's informer of kind, false when kind is not synced.
	TenantInformer(c *tenant.Cluster, kind resources.Kind) (cache.SharedIndexInformer, bool)
	// SuperObject returns the super cache's object of kind at namespace/name.
	SuperObject(kind resources.Kind, namespace, name string) (metav1.Object, bool)
	// SyncedOwner returns the registered, synced tenant whose ownership stamps super object
	// m carries, and the stamps.
	SyncedOwner(m metav1.Object) (*tenant.Cluster, conversion.Owner, bool)
	// AfterReadyOnce runs f once the super caches have synced (now, when they have): of the
	// calls with the same (comparable) key before that, only the first f runs.
	AfterReadyOnce(key any, f func())
}

// MarkPodDenied sets condition PodScheduled=False with d's reason and message on tenant Pod p
// (pod.MarkPolicyDenied, which this package cannot import).
type MarkPodDenied func(ctx context.Context, c *tenant.Cluster, p *corev1.Pod, d *policy.Denial) error

// Gate is the syncer's side of the tenant's limits: which tenant objects are synced under
// limits.maxObjects (count.go), the wakes of objects that waited for a bound, a namespace
// name or room (waiting.go, colliders.go), and the readmission of objects held out by
// limits.maxObjectBytes and limits.maxCachedBytes (held.go). Build it with NewGate; it is
// safe for concurrent use.
type Gate struct {
	p           Pipelines
	markPod     MarkPodDenied
	counts      objectLimits
	readmitting readmitRuns
}

// NewGate returns a Gate that wakes requests through p and marks refused Pods with markPod.
func NewGate(p Pipelines, markPod MarkPodDenied) *Gate {
	return &Gate{p: p, markPod: markPod}
}

// Forget drops tenant c's admission state (its Cluster stopped, or is starting with new
// informers: admission starts over).
func (g *Gate) Forget(c *tenant.Cluster) { g.counts.forget(c) }

// Raise admits, after a policy change raised tenant c's limits.maxObjects, refused objects
// while there is room, forgetting their refusals (the caller enqueues them with the others).
func (g *Gate) Raise(c *tenant.Cluster) {
	for kind, keys := range g.counts.raise(c, maxObjects(c)) {
		for _, key := range keys {
			ns, name := source.SplitKey(key)
			Admitted(c, kind, ns, name)
		}
	}
}

// Counts returns the numbers of tenant c's objects of kind admitted and refused under
// limits.maxObjects.
func (g *Gate) Counts(c *tenant.Cluster, kind resources.Kind) (admitted, refused int) {
	return g.counts.counts(c, kind)
}
