package tenant

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
)

// The bound on the number of a tenant's objects in the syncer's caches
// (limits.maxCachedObjects). HeldBytes counts the entries of the tenant caches; a new object
// past the cap is cached as a stub and marks the HeldBytes overflowed, and the Tenant
// controller then replaces the Cluster (its informers stop, its caches are dropped) with one
// that waits (suspend) before it starts its informers. Every Cluster, before its informers
// start, counts the tenant's objects with one LIST ?limit=1 per kind (the apiserver's
// remainingItemCount) and waits while they are more than the cap, counting again with backoff
// (suspendBackoff) or when the policy changes. A suspended tenant's state says so
// (State.Suspended): the Tenant gets Synced=False, reason TooManyObjects, and an Event.

// suspendBackoff is the wait between two counts of a suspended tenant's objects: 30 s,
// doubling up to 10 min. A variable for tests.
var suspendBackoff = wait.Backoff{Duration: 30 * time.Second, Factor: 2, Jitter: 0.1, Steps: 100, Cap: 10 * time.Minute}

// countRetryBackoff is the wait before a failed count is tried again: 2 s, doubling up to
// suspendBackoff's cap (a transient error costs seconds; a tenant that makes every count fail
// is counted at most every 10 min). A variable for tests.
var countRetryBackoff = wait.Backoff{Duration: 2 * time.Second, Factor: 2, Jitter: 0.1, Steps: 100, Cap: 10 * time.Minute}

// suspension is how a Cluster that replaces an overflowed one starts: it waits delay, with
// objects (the entries the overflowed one held) as its last count, before it counts again.
type suspension struct {
	delay   time.Duration
	objects int64
}

// counters list, for each kind in HeldKinds, its objects with the given options (cluster-wide).
var counters = map[string]func(context.Context, kubernetes.Interface, metav1.ListOptions) (runtime.Object, error){
	"ConfigMap": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().ConfigMaps("").List(ctx, o)
	},
	"Secret": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().Secrets("").List(ctx, o)
	},
	"Service": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().Services("").List(ctx, o)
	},
	"ServiceAccount": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().ServiceAccounts("").List(ctx, o)
	},
	"Endpoints": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().Endpoints("").List(ctx, o)
	},
	"EndpointSlice": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.DiscoveryV1().EndpointSlices("").List(ctx, o)
	},
	"PersistentVolumeClaim": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().PersistentVolumeClaims("").List(ctx, o)
	},
	"PodDisruptionBudget": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.PolicyV1().PodDisruptionBudgets("").List(ctx, o)
	},
	"Ingress": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.NetworkingV1().Ingresses("").List(ctx, o)
	},
	"NetworkPolicy": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.NetworkingV1().NetworkPolicies("").List(ctx, o)
	},
	"Namespace": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().Namespaces().List(ctx, o)
	},
	"Pod": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().Pods("").List(ctx, o)
	},
	"Node": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().Nodes().List(ctx, o)
	},
	"PersistentVolume": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().PersistentVolumes().List(ctx, o)
	},
	"StorageClass": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.StorageV1().StorageClasses().List(ctx, o)
	},
	"PriorityClass": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.SchedulingV1().PriorityClasses().List(ctx, o)
	},
	"RuntimeClass": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.NodeV1().RuntimeClasses().List(ctx, o)
	},
	// All the tenant's Events: an upper bound of the syncer's copies (countEventCopies).
	"Event": func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().Events("").List(ctx, o)
	},
}

// EventCopySelector selects, in a tenant, the Events that are the syncer's copies of super
// Events: the tenant Event informer lists and watches these (a tenant can label its own Events
// so too; they are cached and counted the same way).
var EventCopySelector = conversion.LabelManagedBy + "=" + conversion.ManagedByValue

// CountObjects counts the tenant's objects of every kind in HeldKinds with one LIST ?limit=1
// per kind (the items it returns plus the apiserver's remainingItemCount), stopping once the
// count is over limit (limit < 0: never). A kind the apiserver does not serve or lets the
// syncer list is skipped (its informer caches nothing either). A list with more items whose
// remaining count the apiserver does not give counts its returned items only. A kind that
// restored (nil: none) reports is counted from it, without a LIST: the objects a checkpoint
// will answer its informer's first List with.
func CountObjects(ctx context.Context, cs kubernetes.Interface, limit int64, restored func(kind string) (int64, bool)) (int64, error) {
	var n int64
	for _, kind := range HeldKinds {
		list, ok := counters[kind]
		if !ok {
			continue
		}
		if restored != nil {
			if m, ok := restored(kind); ok {
				if n += m; limit >= 0 && n > limit {
					return n, nil
				}
				continue
			}
		}
		m, err := countKind(ctx, list, cs, metav1.ListOptions{})
		switch {
		case apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err):
			continue
		case err != nil:
			return n, err
		}
		if kind == "Event" && limit >= 0 && n+m > limit {
			// All the tenant's Events may take the count over the cap: count the syncer's
			// copies alone, the ones its informer caches.
			if m, err = countEventCopies(ctx, cs, limit-n); err != nil {
				return n, err
			}
		}
		if n += m; limit >= 0 && n > limit {
			return n, nil
		}
	}
	return n, nil
}

// countKind counts the objects list returns for opts with one LIST ?limit=1: the item it
// returns plus the apiserver's remainingItemCount (the returned item only when there is none).
func countKind(ctx context.Context, list func(context.Context, kubernetes.Interface, metav1.ListOptions) (runtime.Object, error),
	cs kubernetes.Interface, opts metav1.ListOptions) (int64, error) {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	opts.Limit = 1
	obj, err := list(lctx, cs, opts)
	if err != nil {
		return 0, err
	}
	n := int64(meta.LenList(obj))
	if l, ok := obj.(metav1.ListInterface); ok && l.GetRemainingItemCount() != nil {
		n += max(*l.GetRemainingItemCount(), 0)
	}
	return n, nil
}

// eventCountPage is how many Events one page of countEventCopies decodes: an Event a tenant
// writes can be large, so a page is kept small.
const eventCountPage = 100

// countEventCopies counts the tenant's Events labelled as the syncer's copies (the tenant
// Event informer's selector) by pages of eventCountPage, stopping once the count is over
// limit (limit < 0: never): the apiserver gives no remainingItemCount for a list with a label
// selector.
func countEventCopies(ctx context.Context, cs kubernetes.Interface, limit int64) (int64, error) {
	var n int64
	opts := metav1.ListOptions{LabelSelector: EventCopySelector, Limit: eventCountPage}
	for {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		l, err := cs.CoreV1().Events("").List(lctx, opts)
		cancel()
		if err != nil {
			return n, err
		}
		n += int64(len(l.Items))
		if l.Continue == "" || (limit >= 0 && n > limit) {
			return n, nil
		}
		opts.Continue = l.Continue
	}
}

// waitWithinObjectBound returns once the tenant's watched APIs are served by its own
// kube-apiserver (CheckAPIServices) and it has at most limits.maxCachedObjects objects
// (CountObjects; a check or count that fails keeps it waiting, State.CountError, and is tried
// again after countRetryBackoff), true, or false when ctx ends first. A Cluster that replaces an overflowed one
// (c.suspend) first waits its delay. While it waits, the Cluster's state is Suspended.
func (c *Cluster) waitWithinObjectBound(ctx context.Context) bool {
	log := ctrl.LoggerFrom(ctx).WithValues("tenant", c.Name)
	backoff, countErrBackoff := suspendBackoff, countRetryBackoff
	delay, objects := c.suspend.delay, c.suspend.objects
	countErr := ""
	for {
		if delay > 0 {
			limit := policy.MaxCachedObjects(c.Policy().Limits())
			c.update(func(s *State) { s.Suspended, s.Objects, s.ObjectLimit, s.CountError = true, objects, limit, countErr })
			log.Info("Suspending tenant sync: too many objects, or they could not be counted", "objects", objects, "limit", limit, "countError", countErr, "recount", delay.String())
			select {
			case <-ctx.Done():
				return false
			case <-time.After(delay):
			case <-c.recount:
			}
		}
		limit := policy.MaxCachedObjects(c.Policy().Limits())
		// A tenant API served by another server could answer the count and the lists as it
		// likes: checked first, whatever the cap.
		err := CheckAPIServices(ctx, c.Client)
		var n int64
		if err == nil && limit < 0 {
			break
		}
		if err == nil {
			var restored func(kind string) (int64, bool)
			if c.restored != nil {
				restored = func(kind string) (int64, bool) { return c.restored(c.Name, kind) }
			}
			n, err = CountObjects(ctx, c.Client, limit, restored)
		}
		if ctx.Err() != nil {
			return false
		}
		if err != nil {
			// Not watched until a count succeeds: the tenant can make a count fail on purpose
			// (its own flow schema rejecting the syncer's list of one kind) while a later kind
			// holds more objects than the cap, which the informers would list whole.
			objects, countErr, delay = n, err.Error(), countErrBackoff.Step()
			continue
		}
		if n <= limit {
			break
		}
		objects, countErr, delay = n, "", backoff.Step()
	}
	c.update(func(s *State) { s.Suspended, s.Objects, s.ObjectLimit, s.CountError = false, 0, 0, "" })
	return true
}
