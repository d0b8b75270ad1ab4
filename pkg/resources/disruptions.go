package resources

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/conversion"
)

// The DisruptionTarget reasons a Kubernetes control plane writes on a Pod it is about to
// delete or terminate (k8s.io/api/core/v1 and pkg/apis/core: PodReasonPreemptionByScheduler
// and the others, KEP-3329).
const (
	// ReasonEvictionByEvictionAPI: the eviction API (a node drain) evicted the Pod.
	ReasonEvictionByEvictionAPI = "EvictionByEvictionAPI"
	// ReasonPreemptionByScheduler: the scheduler preempted the Pod for a higher-priority one.
	ReasonPreemptionByScheduler = "PreemptionByScheduler"
	// ReasonDeletionByTaintManager: the taint manager deleted the Pod (a NoExecute taint it
	// does not tolerate, e.g. an unreachable Node).
	ReasonDeletionByTaintManager = "DeletionByTaintManager"
	// ReasonDeletionByPodGC: the Pod garbage collector deleted the Pod (its Node is gone, or
	// out of service).
	ReasonDeletionByPodGC = "DeletionByPodGC"
	// ReasonTerminationByKubelet: the kubelet terminated the Pod (node pressure, graceful
	// node shutdown); it sets the Pod Failed and does not delete it.
	ReasonTerminationByKubelet = "TerminationByKubelet"
)

// Disruption returns the DisruptionTarget condition of a Pod's status when it is True with one
// of the reasons a control plane writes (ReasonEvictionByEvictionAPI and the others), or nil.
// Only the super cluster's control plane writes it into a super Pod's status: the syncer never
// copies a tenant's DisruptionTarget down.
func Disruption(st *corev1.PodStatus) *corev1.PodCondition {
	if st == nil {
		return nil
	}
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != corev1.DisruptionTarget || c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Reason {
		case ReasonEvictionByEvictionAPI, ReasonPreemptionByScheduler, ReasonDeletionByTaintManager,
			ReasonDeletionByPodGC, ReasonTerminationByKubelet:
			return c
		}
	}
	return nil
}

// Disruptions remembers why super Pods went away: the DisruptionTarget condition (Disruption)
// of a super Pod's last state when its deletion was seen, keyed by the UID of the tenant Pod
// it was synced from, until the Pod reconciler has settled the tenant Pod (Forget) or for
// disruptionTTL. It holds at most maxDisruptions entries (the oldest go first). The
// Pod reconciler reads it once the super Pod is gone from the cache, where nothing else says
// why. A nil *Disruptions remembers nothing. It is safe for concurrent use.
type Disruptions struct {
	mu  sync.Mutex
	m   map[types.UID]disruption
	now func() time.Time // time.Now when nil
}

type disruption struct {
	cond corev1.PodCondition
	at   time.Time
}

const (
	// disruptionTTL bounds how long a disruption is remembered for a tenant Pod the reconciler
	// never settles (a tenant removed meanwhile).
	disruptionTTL = 10 * time.Minute
	// maxDisruptions bounds the entries kept (a mass eviction of that many super Pods at once).
	maxDisruptions = 20000
)

// SuperPodDeleted records the disruption (Disruption) of a deleted super Pod, given its
// metadata and the status of its last state, under the tenant Pod UID of its ownership
// annotations; a super Pod without one is not recorded.
func (d *Disruptions) SuperPodDeleted(meta metav1.Object, st *corev1.PodStatus) {
	c := Disruption(st)
	if d == nil || c == nil {
		return
	}
	o, owned := conversion.OwnerOf(meta)
	if !owned || o.UID == "" {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.clock()
	if d.m == nil {
		d.m = map[types.UID]disruption{}
	}
	if len(d.m) >= maxDisruptions {
		d.pruneLocked(now)
	}
	d.m[types.UID(o.UID)] = disruption{cond: *c.DeepCopy(), at: now}
}

// Get returns the disruption recorded for the super Pod of tenant Pod uid.
func (d *Disruptions) Get(uid types.UID) (corev1.PodCondition, bool) {
	if d == nil {
		return corev1.PodCondition{}, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.m[uid]
	if !ok || d.clock().Sub(e.at) > disruptionTTL {
		return corev1.PodCondition{}, false
	}
	return e.cond, true
}

// Forget drops the disruption recorded for tenant Pod uid.
func (d *Disruptions) Forget(uid types.UID) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.m, uid)
}

func (d *Disruptions) clock() time.Time {
	if d.now != nil {
		return d.now()
	}
	return time.Now()
}

// pruneLocked drops expired entries and, if that is not enough, the oldest ones until there
// is room for one more.
func (d *Disruptions) pruneLocked(now time.Time) {
	var oldest types.UID
	for uid, e := range d.m {
		if now.Sub(e.at) > disruptionTTL {
			delete(d.m, uid)
		}
	}
	for len(d.m) >= maxDisruptions {
		first := true
		for uid, e := range d.m {
			if first || e.at.Before(d.m[oldest].at) {
				oldest, first = uid, false
			}
		}
		delete(d.m, oldest)
	}
}
