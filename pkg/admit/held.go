package admit

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Wiring of the bound on the bytes the syncer holds per tenant (limits.maxObjectBytes over the
// whole object, limits.maxCachedBytes in all; tenant.HeldBytes applies both in the tenant
// informers' transform) for every kind in tenant.HeldKinds, all counted together (the
// cluster-scoped kinds watched in every tenant included; Nodes are no synced kind: their
// bytes are released by ReleaseNodesHandler and a readmitted vNode is left to pkg/vnode). An object
// kept out is a stub in the tenant cache: its reconcile refuses it (PolicyDenied Event and
// count, once per version; a Pod also gets PodScheduled=False), and it gets no super copy (one
// synced before it grew is left as it was). Deleting a held object (ReleaseHeld) or a policy change
// (the syncer's PolicyChanged) or a start from a checkpoint (its ClusterSynced) runs ReadmitHeld, which reads
// the stubs that fit now from the tenant apiserver and puts them in the cache in full.

// readmitBatch is how many stubs one pass of ReadmitHeld reads from the tenant apiserver.
const readmitBatch = 64

// readmitRuns tracks, per tenant, whether ReadmitHeld is running (and whether it must run
// again when done). The zero value is ready.
type readmitRuns struct {
	mu sync.Mutex
	m  map[*tenant.Cluster]bool // running → run again when done
}

// heldKinds reports whether kind is bounded by tenant.HeldBytes (tenant.HeldKinds).
func heldKinds(kind resources.Kind) bool { return tenant.IsHeldKind(string(kind)) }

// ReleaseHeld forgets the bytes held for deleted tenant object obj of kind and, when that
// freed room, readmits objects held out.
func (g *Gate) ReleaseHeld(c *tenant.Cluster, kind resources.Kind, obj any) {
	m, ok := obj.(metav1.Object)
	if !ok || !heldKinds(kind) {
		return
	}
	if c.Held.Release(tenant.HeldKey{Kind: string(kind), Namespace: m.GetNamespace(), Name: m.GetName()}, m.GetUID()) {
		g.ReadmitHeld(c)
	}
}

// ReadmitHeld starts, unless one is running (which then runs once more), a pass over tenant
// c's objects held out that fit its policy now (ReadmitOnce), in its own goroutine: it reads
// from the tenant apiserver, which an event handler must not do.
func (g *Gate) ReadmitHeld(c *tenant.Cluster) {
	r := &g.readmitting
	r.mu.Lock()
	if _, running := r.m[c]; running {
		r.m[c] = true
		r.mu.Unlock()
		return
	}
	if r.m == nil {
		r.m = map[*tenant.Cluster]bool{}
	}
	r.m[c] = false
	r.mu.Unlock()
	go func() {
		for {
			more := g.ReadmitOnce(c)
			r.mu.Lock()
			if again := r.m[c]; !again && !more {
				delete(r.m, c)
				r.mu.Unlock()
				return
			}
			r.m[c] = false
			r.mu.Unlock()
		}
	}()
}

// ReadmitOnce reads at most readmitBatch of tenant c's stubs that fit its policy now from the
// tenant apiserver and, for each still held out at the same UID and resourceVersion and still
// fitting, puts the full object in the tenant cache (tenant.Cluster.ReadmitHeldOut, which never
// lets an older copy replace a newer version the informer delivered) and enqueues it (for a
// Namespace, also the objects waiting in it). It returns whether it readmitted a full batch
// (there may be more).
func (g *Gate) ReadmitOnce(c *tenant.Cluster) bool {
	if c.State().Stopped {
		return false
	}
	fitting := c.Held.Fitting(c.Policy().Limits(), readmitBatch)
	done := 0
	for _, o := range fitting {
		if c.State().Stopped {
			return false
		}
		kind := resources.Kind(o.Kind)
		inf, ok := g.tenantHeldInformer(c, kind)
		if !ok {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		full, err := readTenantObject(ctx, c, kind, o.Namespace, o.Name)
		cancel()
		if err != nil || full.GetUID() != o.UID {
			if err != nil {
				ctrl.Log.WithName("held-bytes").V(1).Info("Reading an object held out failed", "tenant", c.Name, "kind", kind, "namespace", o.Namespace, "name", o.Name, "error", err.Error())
			}
			continue // gone (its delete event releases it), or re-created (its events handle it)
		}
		idx := inf.GetIndexer()
		if !c.ReadmitHeldOut(o, full, idx.Update) {
			continue // a newer version is in the cache or on its way, or no room after all
		}
		done++
		if kind == kindNode || kind == resources.KindEvent {
			// The tenant's vNode loop reads its vNodes from the cache on every tick; the Event
			// pipeline compares a copy's record on its super Event's next change.
			continue
		}
		Admitted(c, kind, o.Namespace, o.Name)
		req := resources.Request{Tenant: c.Name, Kind: kind, Namespace: o.Namespace, Name: o.Name}
		g.p.Down(req)
		if g.p.UpwardKind(kind) {
			g.p.Up(req)
		}
		if kind == resources.KindNamespace {
			g.EnqueueWaitingIn(c, o.Name, resources.SuperNamespace(c, o.Name))
		}
	}
	return len(fitting) == readmitBatch && done > 0
}

// kindNode is the name tenant.HeldBytes gives tenant Nodes (the syncer's vNodes, and any the
// tenant creates): not a synced kind, but cached (pkg/vnode) and bounded like one.
const kindNode resources.Kind = "Node"

// tenantHeldInformer returns tenant c's informer of kind (one of tenant.HeldKinds), false when
// the syncer does not watch kind.
func (g *Gate) tenantHeldInformer(c *tenant.Cluster, kind resources.Kind) (cache.SharedIndexInformer, bool) {
	if kind == kindNode {
		if _, ok := g.p.TenantInformer(c, resources.KindPod); !ok {
			return nil, false
		}
		return c.Informers.Core().V1().Nodes().Informer(), true
	}
	return g.p.TenantInformer(c, kind)
}

// ReleaseNodesHandler releases the bytes held for tenant c's deleted Nodes (the syncer's
// vNodes and the tenant's own): Nodes are no synced kind, so no tenantHandler does it.
func (g *Gate) ReleaseNodesHandler(c *tenant.Cluster) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		g.ReleaseHeld(c, kindNode, obj)
	}}
}

// ReleaseEventsHandler releases the bytes held for tenant c's deleted Event copies (the
// tenant's --event-ttl deletes them): the Event kind has no tenantHandler.
func (g *Gate) ReleaseEventsHandler(c *tenant.Cluster) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		g.ReleaseHeld(c, resources.KindEvent, obj)
	}}
}

// readTenantObject reads tenant object ns/name of kind (one of tenant.HeldKinds) from tenant
// c's apiserver.
func readTenantObject(ctx context.Context, c *tenant.Cluster, kind resources.Kind, ns, name string) (metav1.Object, error) {
	cs, opts := c.Client, metav1.GetOptions{}
	var obj metav1.Object
	var err error
	switch kind {
	case resources.KindConfigMap:
		obj, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, name, opts)
	case resources.KindSecret:
		obj, err = cs.CoreV1().Secrets(ns).Get(ctx, name, opts)
	case resources.KindService:
		obj, err = cs.CoreV1().Services(ns).Get(ctx, name, opts)
	case resources.KindServiceAccount:
		obj, err = cs.CoreV1().ServiceAccounts(ns).Get(ctx, name, opts)
	case resources.KindEndpoints:
		obj, err = cs.CoreV1().Endpoints(ns).Get(ctx, name, opts)
	case resources.KindEndpointSlice:
		obj, err = cs.DiscoveryV1().EndpointSlices(ns).Get(ctx, name, opts)
	case resources.KindPersistentVolumeClaim:
		obj, err = cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, opts)
	case resources.KindPodDisruptionBudget:
		obj, err = cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, name, opts)
	case resources.KindIngress:
		obj, err = cs.NetworkingV1().Ingresses(ns).Get(ctx, name, opts)
	case resources.KindNetworkPolicy:
		obj, err = cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, name, opts)
	case resources.KindNamespace:
		obj, err = cs.CoreV1().Namespaces().Get(ctx, name, opts)
	case resources.KindPod:
		obj, err = cs.CoreV1().Pods(ns).Get(ctx, name, opts)
	case kindNode:
		obj, err = cs.CoreV1().Nodes().Get(ctx, name, opts)
	case resources.KindPersistentVolume:
		obj, err = cs.CoreV1().PersistentVolumes().Get(ctx, name, opts)
	case resources.KindStorageClass:
		obj, err = cs.StorageV1().StorageClasses().Get(ctx, name, opts)
	case resources.KindPriorityClass:
		obj, err = cs.SchedulingV1().PriorityClasses().Get(ctx, name, opts)
	case resources.KindRuntimeClass:
		obj, err = cs.NodeV1().RuntimeClasses().Get(ctx, name, opts)
	case resources.KindEvent:
		obj, err = cs.CoreV1().Events(ns).Get(ctx, name, opts)
	default:
		return nil, fmt.Errorf("kind %s is not bounded by the bytes held", kind)
	}
	if err != nil {
		return nil, err
	}
	return obj, nil
}
