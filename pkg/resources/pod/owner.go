package pod

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"

	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Owner Events: the controller of a refused Pod (its ReplicaSet, StatefulSet, DaemonSet, Job or
// ReplicationController) gets one Warning Event that says why its Pods do not run, as a real
// cluster's controller writes FailedCreate with the quota or admission message. Its reason is
// the refusal's own (the reason of the Pod's PodScheduled=False condition and Event:
// QuotaExceeded, PolicyDenied, SuperClusterRejected, PriorityClassNotPublic), never
// FailedCreate, which stays the tenant controller's: the controller did create the Pod.
const (
	// ownerReportInterval is how long one (owner, reason) pair is reported once: refused Pods
	// of the same owner for the same reason within it add no Event.
	ownerReportInterval = 10 * time.Minute
	// maxOwnerReports bounds the (owner, reason) pairs remembered per tenant (least recently
	// reported dropped first).
	maxOwnerReports = 4096
)

// ownerKinds are the controllers whose refused Pods are reported on them: the workload
// controllers a real cluster's FailedCreate Event comes from.
var ownerKinds = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "ReplicaSet"}:        true,
	{Group: "apps", Kind: "StatefulSet"}:       true,
	{Group: "apps", Kind: "DaemonSet"}:         true,
	{Group: "batch", Kind: "Job"}:              true,
	{Group: "", Kind: "ReplicationController"}: true,
}

// ownerReports remembers, per tenant, when each (owner UID, reason) pair was last reported.
// Safe for concurrent use.
type ownerReports struct {
	mu  sync.Mutex
	m   map[string]*lru.Cache // tenant name → "<uid>/<reason>" → time.Time
	now func() time.Time
}

// owners is the process's record.
var owners = &ownerReports{}

// due reports whether (uid, reason) of tenant tn was not reported within ownerReportInterval,
// without recording anything.
func (o *ownerReports) due(tn string, uid types.UID, reason string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.m[tn]
	if c == nil {
		return true
	}
	v, ok := c.Get(string(uid) + "/" + reason)
	return !ok || o.clock().Sub(v.(time.Time)) >= ownerReportInterval
}

// record marks (uid, reason) of tenant tn reported now; it returns false when another report
// won the race (the pair was reported within ownerReportInterval meanwhile).
func (o *ownerReports) record(tn string, uid types.UID, reason string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]*lru.Cache{}
	}
	c := o.m[tn]
	if c == nil {
		c = lru.New(maxOwnerReports)
		o.m[tn] = c
	}
	key := string(uid) + "/" + reason
	if v, ok := c.Get(key); ok && o.clock().Sub(v.(time.Time)) < ownerReportInterval {
		return false
	}
	c.Add(key, o.clock())
	return true
}

// forget drops what is remembered for tenant tn.
func (o *ownerReports) forget(tn string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, tn)
}

func (o *ownerReports) clock() time.Time {
	if o.now != nil {
		return o.now()
	}
	return time.Now()
}

// Forget drops what the kind records about the named tenant (called when it is removed).
func (resourceKind) Forget(tenantName string) { owners.forget(tenantName) }

// controllerRef returns the controller owner reference of tenant Pod p when it names one of
// ownerKinds (by group and kind; any version), else nil.
func controllerRef(p *corev1.Pod) *metav1.OwnerReference {
	ref := metav1.GetControllerOfNoCopy(p)
	if ref == nil || ref.UID == "" || ref.Name == "" {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || !ownerKinds[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}] {
		return nil
	}
	return ref
}

// liveOwner reads the object ref names in tenant namespace ns from the tenant apiserver and
// returns it when it exists with ref's UID (nil otherwise: an owner reference is the tenant's
// to write and can name anything, so an Event goes only to an object that is really there).
func liveOwner(ctx context.Context, c *tenant.Cluster, ns string, ref *metav1.OwnerReference) (runtime.Object, error) {
	opts := metav1.GetOptions{}
	var obj interface {
		runtime.Object
		GetUID() types.UID
	}
	var err error
	switch ref.Kind {
	case "ReplicaSet":
		var o *appsv1.ReplicaSet
		o, err = c.Client.AppsV1().ReplicaSets(ns).Get(ctx, ref.Name, opts)
		obj = o
	case "StatefulSet":
		var o *appsv1.StatefulSet
		o, err = c.Client.AppsV1().StatefulSets(ns).Get(ctx, ref.Name, opts)
		obj = o
	case "DaemonSet":
		var o *appsv1.DaemonSet
		o, err = c.Client.AppsV1().DaemonSets(ns).Get(ctx, ref.Name, opts)
		obj = o
	case "Job":
		var o *batchv1.Job
		o, err = c.Client.BatchV1().Jobs(ns).Get(ctx, ref.Name, opts)
		obj = o
	case "ReplicationController":
		var o *corev1.ReplicationController
		o, err = c.Client.CoreV1().ReplicationControllers(ns).Get(ctx, ref.Name, opts)
		obj = o
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if obj.GetUID() != ref.UID {
		return nil, nil
	}
	return obj, nil
}

// reportOwner records, on the controller of tenant Pod p (controllerRef, confirmed by
// liveOwner), one Warning Event with reason and a message that names p and says why it does
// not run (message, the Pod's own condition message): once per owner and reason within
// ownerReportInterval, whatever the number of its refused Pods and their retries. Nothing is
// recorded for a Pod without such a controller, or whose owner reference names no object of
// that UID in p's namespace; a failed read is dropped (the Pod's own Event and condition say
// why). Call it when a refusal of p is reported (once per Pod version), not on each retry.
func reportOwner(ctx context.Context, c *tenant.Cluster, p *corev1.Pod, reason, message string) {
	ref := controllerRef(p)
	if ref == nil || c.Recorder == nil || !owners.due(c.Name, ref.UID, reason) {
		return
	}
	owner, err := liveOwner(ctx, c, p.Namespace, ref)
	if err != nil || owner == nil || !owners.record(c.Name, ref.UID, reason) {
		return
	}
	c.Recorder.Event(owner, corev1.EventTypeWarning, reason, ownerMessage(ref.Kind, p.Name, message))
}

// ownerMessage is the message of the Event on the owner (of kind) of refused Pod pod.
func ownerMessage(kind, pod, message string) string {
	return truncateMessage(fmt.Sprintf("Pod %s does not run: %s (reported once per %s and reason; each refused Pod's PodScheduled condition says why)",
		pod, message, kind), maxRefusalMessage)
}
