package syncer

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Wiring of the bound on the bytes the syncer holds per tenant (limits.maxObjectBytes over the
// whole object, limits.maxCachedBytes in all; tenant.HeldBytes applies both in the tenant
// informers' transform). A Secret or ConfigMap kept out is a stub in the tenant cache: its
// reconcile refuses it (the kind's Refuse: PolicyDenied Event and count, once per version),
// and it has no super copy. Deleting a held object (releaseHeld) or a policy change
// (PolicyChanged) or a start from a checkpoint (clusterSynced) runs readmitHeld, which reads
// the stubs that fit now from the tenant apiserver and puts them in the cache in full.

// readmitBatch is how many stubs one pass of readmitHeld reads from the tenant apiserver.
const readmitBatch = 64

// readmitRuns tracks, per tenant, whether readmitHeld is running (and whether it must run
// again when done). The zero value is ready.
type readmitRuns struct {
	mu sync.Mutex
	m  map[*tenant.Cluster]bool // running → run again when done
}

// heldKinds reports whether kind is bounded by tenant.HeldBytes.
func heldKinds(kind resources.Kind) bool {
	return kind == resources.KindConfigMap || kind == resources.KindSecret
}

// releaseHeld forgets the bytes held for deleted tenant object obj of kind and, when that
// freed room, readmits objects held out.
func (s *Syncer) releaseHeld(c *tenant.Cluster, kind resources.Kind, obj any) {
	m, ok := obj.(metav1.Object)
	if !ok || !heldKinds(kind) {
		return
	}
	if c.Held.Release(tenant.HeldKey{Kind: string(kind), Namespace: m.GetNamespace(), Name: m.GetName()}, m.GetUID()) {
		s.readmitHeld(c)
	}
}

// readmitHeld starts, unless one is running (which then runs once more), a pass over tenant
// c's objects held out that fit its policy now (readmitOnce), in its own goroutine: it reads
// from the tenant apiserver, which an event handler must not do.
func (s *Syncer) readmitHeld(c *tenant.Cluster) {
	r := &s.readmitting
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
			more := s.readmitOnce(c)
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

// readmitOnce reads at most readmitBatch of tenant c's stubs that fit its policy now from the
// tenant apiserver and, for each still a stub in the cache at the same UID and still fitting
// (tenant.Cluster.Readmit counts it), puts the full object in the tenant cache and enqueues
// it. It returns whether it readmitted a full batch (there may be more). The cache write is
// skipped when the cached stub was replaced meanwhile; a watch event that lands between the
// read and the write is applied over it by the informer as usual.
func (s *Syncer) readmitOnce(c *tenant.Cluster) bool {
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
		r, ok := s.resources[kind]
		if !ok {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var full metav1.Object
		var err error
		if kind == resources.KindConfigMap {
			var cm *corev1.ConfigMap
			cm, err = c.Client.CoreV1().ConfigMaps(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
			full = cm
		} else {
			var sec *corev1.Secret
			sec, err = c.Client.CoreV1().Secrets(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
			full = sec
		}
		cancel()
		if err != nil || full.GetUID() != o.UID {
			if err != nil {
				ctrl.Log.WithName("held-bytes").V(1).Info("Reading an object held out failed", "tenant", c.Name, "kind", kind, "namespace", o.Namespace, "name", o.Name, "error", err.Error())
			}
			continue // gone (its delete event releases it), or re-created (its events handle it)
		}
		inf := r.TenantInformer(c)
		cur, exists, _ := inf.GetIndexer().Get(full)
		if cm, ok := cur.(metav1.Object); !exists || !ok || !tenant.IsHeldOut(cur) || cm.GetUID() != o.UID {
			continue // the cache holds it in full now, or not at all
		}
		obj := c.Readmit(full)
		if tenant.IsHeldOut(obj) {
			continue // no room after all
		}
		if err := inf.GetIndexer().Update(obj); err != nil {
			continue
		}
		done++
		resources.Admitted(c, kind, o.Namespace, o.Name)
		s.enqueue(s.down, resources.Request{Tenant: c.Name, Kind: kind, Namespace: o.Namespace, Name: o.Name}, true)
	}
	return len(fitting) == readmitBatch && done > 0
}
