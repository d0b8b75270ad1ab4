package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Object is a Kubernetes object pointer type such as *corev1.ConfigMap.
type Object interface {
	metav1.Object
	runtime.Object
}

// Getter reads one object by name from a namespaced lister.
type Getter[T Object] interface {
	Get(name string) (T, error)
}

// Writer is the subset of a typed namespaced client that Reconcile uses.
type Writer[T Object] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
}

// Spec parameterises Reconcile for one kind.
type Spec[T Object] struct {
	// Kind is the kind's name, for errors and Events.
	Kind resources.Kind
	// Tenant returns the tenant lister for a tenant namespace.
	Tenant func(ns string) Getter[T]
	// Super returns the super lister for a super namespace.
	Super func(ns string) Getter[T]
	// Client returns the super client for a super namespace.
	Client func(ns string) Writer[T]
	// Skip reports tenant objects that are never synced (nil: none).
	Skip func(tenantObj T) bool
	// Refuse returns why the tenant's policy refuses tenantObj (nil: it may be synced; a nil
	// Refuse refuses nothing). A refused object gets no super copy (an existing one, synced
	// before a policy change, is deleted), is reported once per version and policy generation
	// (admit.Deny), and the reconcile ends without a retry.
	Refuse func(tenantObj T) *policy.Denial
	// Desired builds the super object for tenantObj in superNS. existing is the current super
	// object when hasExisting, so fields the super cluster allocated can be kept. The result
	// must carry the ownership stamps (conversion.Stamp; resources.DesiredMeta applies them).
	Desired func(tenantObj T, superNS string, existing T, hasExisting bool) T
	// Equal reports whether existing already matches desired in every field the syncer owns.
	Equal func(desired, existing T) bool
	// Waits reports, besides the Warning Event Reconcile records (admit.Deny), that
	// tenantObj waits for room in its tenant's budget (d, rule tenantQuota) to get a super
	// copy, or, when hasCopy, to update its super copy to one that costs more (the copy stays
	// as it is): for a kind with a status, a condition with d.Reason(). nil: the Event alone.
	// Its error is retried.
	Waits func(tenantObj T, hasCopy bool, d *policy.Denial) error
}

// Reconcile makes the super copy of tenant object ns/name match it. It returns nil when the
// two agree (or the object is skipped), resources.ErrNotOwned when the mapped super name is
// taken by an object the tenant does not own, admit.ErrNamespaceCollision (reported, not
// retried) when the super namespace or the object at the mapped name belongs to another tenant
// namespace of the tenant, and API errors to retry otherwise.
func Reconcile[T Object](ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string, s Spec[T]) error {
	superNS := resources.SuperNamespace(c, ns)
	if err := admit.CheckNamespaceCollision(env, c, ns); err != nil {
		return err
	}
	tObj, tErr := s.Tenant(ns).Get(name)
	if tErr != nil && !apierrors.IsNotFound(tErr) {
		return tErr
	}
	tFound := tErr == nil
	sObj, sErr := s.Super(superNS).Get(name)
	if sErr != nil && !apierrors.IsNotFound(sErr) {
		return sErr
	}
	sFound := sErr == nil

	if sFound && conversion.HoldsOtherNamespace(sObj, c.UID, ns) {
		// The copy of a namespace of this tenant that maps to the same super namespace (its
		// super Namespace not cached yet): never touched for this one.
		_, holder, _ := conversion.HeldNamespace(sObj)
		return admit.RefuseNamespaceCollision(c, ns, superNS, holder)
	}
	if sFound && !conversion.OwnedByTenant(sObj, c.UID) {
		if tFound {
			c.Recorder.Eventf(tObj, corev1.EventTypeWarning, "SyncConflict",
				"%s %s/%s exists in the super cluster and is not owned by this tenant; not syncing", s.Kind, superNS, name)
		}
		return fmt.Errorf("%s %s/%s: %w", s.Kind, superNS, name, resources.ErrNotOwned)
	}
	if tFound && s.Skip != nil && s.Skip(tObj) {
		return nil
	}
	if tFound && tObj.GetDeletionTimestamp().IsZero() {
		if d := admit.HeldOut(c, s.Kind, tObj); d != nil {
			// A stub (kept out of the syncer's memory): its content is unknown, so nothing is
			// written for it. A super copy of this object, synced before it grew, is left as
			// it was (deleting a Service or a Namespace for an annotation would cut the
			// tenant's traffic or Pods); only the stale copy of an earlier object of the same
			// name goes.
			admit.Deny(c, s.Kind, tObj, d)
			if sFound {
				if o, _ := conversion.OwnerOf(sObj); o.UID != string(tObj.GetUID()) {
					if err := confirmGone(ctx, c, s.Kind, ns, name, sObj); err != nil {
						return err
					}
					return DeleteSuper(ctx, s.Client(superNS), sObj)
				}
			}
			return nil
		}
	}
	if tFound && tObj.GetDeletionTimestamp().IsZero() && s.Refuse != nil {
		if d := s.Refuse(tObj); d != nil {
			admit.Deny(c, s.Kind, tObj, d)
			resources.LeaveBudget(env, c, s.Kind, superNS, name)
			if sFound {
				// A copy synced under an earlier policy: keeping it would keep what the policy
				// now refuses.
				return DeleteSuper(ctx, s.Client(superNS), sObj)
			}
			return nil
		}
		admit.Admitted(c, s.Kind, ns, name)
	}
	if !tFound || !tObj.GetDeletionTimestamp().IsZero() {
		admit.QuotaAdmitted(c, s.Kind, ns, name)
		resources.LeaveBudget(env, c, s.Kind, superNS, name)
		if !tFound {
			admit.Gone(c, s.Kind, ns, name)
		}
		if !sFound {
			return nil
		}
		if !tFound {
			if err := confirmGone(ctx, c, s.Kind, ns, name, sObj); err != nil {
				return err
			}
		}
		return DeleteSuper(ctx, s.Client(superNS), sObj)
	}
	if sFound {
		if o, _ := conversion.OwnerOf(sObj); o.UID != string(tObj.GetUID()) {
			// The tenant object was deleted and recreated under the same name: the super copy is stale.
			if err := confirmGone(ctx, c, s.Kind, ns, name, sObj); err != nil {
				return err
			}
			if err := DeleteSuper(ctx, s.Client(superNS), sObj); err != nil {
				return err
			}
			return fmt.Errorf("%s %s/%s: deleted stale super copy of a recreated tenant object, will recreate", s.Kind, superNS, name)
		}
		want := s.Desired(tObj, superNS, sObj, true)
		admit.ReportDroppedMeta(c, s.Kind, tObj, want)
		if s.Equal(want, sObj) {
			return nil
		}
		// An update that costs more (a claim resized, a Service given node ports) takes the
		// difference from the tenant's budget first, as a create does; the super copy stays
		// as it is while it waits.
		hold, d, err := resources.AdmitBudgetChange(env, c, s.Kind, tObj, superNS, policy.ObjectCharge(sObj), policy.ObjectCharge(want))
		if err != nil {
			return err
		}
		if d != nil {
			return waitForBudget(c, s, tObj, true, d)
		}
		defer hold.Done()
		want.SetResourceVersion(sObj.GetResourceVersion())
		// Finalizers and owner references on a super object are the super cluster's (for
		// example kubernetes.io/pvc-protection, a load-balancer cleanup finalizer): the syncer
		// never sets them and an Update must not drop them.
		want.SetFinalizers(sObj.GetFinalizers())
		want.SetOwnerReferences(sObj.GetOwnerReferences())
		_, err = s.Client(superNS).Update(ctx, want, metav1.UpdateOptions{FieldManager: FieldManager})
		hold.WriteEnded(err)
		if err != nil {
			return Report(c, tObj, s.Kind, "update", err)
		}
		admit.Admitted(c, s.Kind, ns, name) // a budget refusal of an earlier run is over
		return nil
	}
	var zero T
	want := s.Desired(tObj, superNS, zero, false)
	// The tenant's budget (limits.quota over all of its namespaces), from the syncer's counts,
	// before anything is written for the object (its super namespace included): an object
	// without room waits, parked until room appears, at no cost to either apiserver.
	hold, d, err := resources.AdmitBudget(env, c, s.Kind, tObj, superNS, policy.ObjectCharge(want))
	if err != nil {
		return err
	}
	if d != nil {
		return waitForBudget(c, s, tObj, false, d)
	}
	defer hold.Done()
	if _, err := admit.EnsureSuperNamespace(ctx, env, c, ns); err != nil {
		return err
	}
	// Checked in the cache first: an object the quota has no room for is retried without
	// writing to the super cluster each time.
	if d := admit.CheckQuota(env, c, s.Kind, ns, want); d != nil {
		admit.DenyQuota(c, s.Kind, tObj, d)
		return fmt.Errorf("%s %s/%s: %w", s.Kind, ns, name, admit.ErrNoQuotaRoom)
	}
	admit.ReportDroppedMeta(c, s.Kind, tObj, want)
	_, err = s.Client(superNS).Create(ctx, want, metav1.CreateOptions{FieldManager: FieldManager})
	hold.WriteEnded(err)
	if err != nil {
		if apierrors.IsAlreadyExists(err) {
			return Conflict(ctx, c, s.Client(superNS), tObj, s.Kind, superNS, name, err)
		}
		return Report(c, tObj, s.Kind, "create", err)
	}
	admit.QuotaAdmitted(c, s.Kind, ns, name)
	admit.Admitted(c, s.Kind, ns, name) // a budget refusal of an earlier run is over
	return nil
}

// waitForBudget reports that tenant object tObj waits for room in its tenant's budget (d,
// rule tenantQuota): a Warning Event with reason d.Reason() (QuotaExceeded) and one count of
// vcsyncer_policy_denials_total per object version and policy generation
// (admit.DenyQuota: kept apart from the policy's refusals, which an object that passes
// the policy forgets on each run), and s.Waits (a condition, for a kind with a status). The
// object counts as refused (admit.KeepRefused), so remediation scans skip it. It returns
// nil, so the request is not retried: the object is parked until room appears
// (resources.AdmitBudget), or the error of s.Waits.
func waitForBudget[T Object](c *tenant.Cluster, s Spec[T], tObj T, hasCopy bool, d *policy.Denial) error {
	admit.DenyQuota(c, s.Kind, tObj, d)
	admit.KeepRefused(c, s.Kind, tObj, d.Rule)
	if s.Waits != nil {
		return s.Waits(tObj, hasCopy, d)
	}
	return nil
}

// Conflict handles an AlreadyExists answer to a create. The super cache holds only objects
// labelled as the syncer's, so the live object is read: if it is not owned by this tenant
// (someone else's object at the mapped name), a SyncConflict Warning Event goes on the tenant
// object and resources.ErrNotOwned is returned; otherwise the cache is just behind and the
// create is retried.
func Conflict[T Object](ctx context.Context, c *tenant.Cluster, w Writer[T], tObj runtime.Object, kind resources.Kind, superNS, name string, err error) error {
	live, gerr := w.Get(ctx, name, metav1.GetOptions{})
	if gerr != nil {
		return err
	}
	if conversion.OwnedByTenant(live, c.UID) {
		return err // our cache is behind; the retry sees the object
	}
	c.Recorder.Eventf(tObj, corev1.EventTypeWarning, "SyncConflict",
		"%s %s/%s exists in the super cluster and is not owned by this tenant; not syncing until it is removed", kind, superNS, name)
	return fmt.Errorf("%s %s/%s: %w", kind, superNS, name, resources.ErrNotOwned)
}

// FieldManager is the field manager name of every syncer write.
const FieldManager = "vc-syncer"

// DeleteSuper deletes a super object with a UID precondition, so a newer object at the same
// name is never deleted by mistake. NotFound counts as success.
func DeleteSuper[T Object](ctx context.Context, w Writer[T], obj T) error {
	uid := obj.GetUID()
	err := w.Delete(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// Report records a Warning Event on the tenant object when the super cluster rejects a write
// for a reason retrying will not fix (invalid, forbidden), and returns err for the queue. A
// write refused by a ResourceQuota ("exceeded quota") is reported as a quota refusal instead
// (admit.DenyQuota: a PolicyDenied Event and a count, once per object version), and the
// returned error wraps admit.ErrNoQuotaRoom: it is retried with backoff.
//
// When the refusal cannot change by itself (Rejected), the returned error also wraps
// resources.ErrRejected: the worker does not retry it on a timer, the object's next change, a
// policy change or a remediation scan brings it back.
func Report(c *tenant.Cluster, tObj runtime.Object, kind resources.Kind, verb string, err error) error {
	if m, ok := tObj.(metav1.Object); ok {
		if d := admit.QuotaExceededDenial(fmt.Sprintf("%s %s/%s", kind, m.GetNamespace(), m.GetName()), err); d != nil {
			admit.DenyQuota(c, kind, m, d)
			return fmt.Errorf("failed to %s %s in super cluster: %w: %w", verb, kind, admit.ErrNoQuotaRoom, err)
		}
	}
	if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) || apierrors.IsRequestEntityTooLargeError(err) {
		c.Recorder.Eventf(tObj, corev1.EventTypeWarning, "SyncFailed", "super cluster rejected %s of %s: %v", verb, kind, err)
	}
	if Rejected(err) {
		return fmt.Errorf("failed to %s %s in super cluster: %w: %w", verb, kind, resources.ErrRejected, err)
	}
	return fmt.Errorf("failed to %s %s in super cluster: %w", verb, kind, err)
}

// admissionDenials are the message parts of the apiserver's admission denials (403 Forbidden
// or the status code a webhook chose): Pod Security admission ("violates PodSecurity"),
// ValidatingAdmissionPolicy ("ValidatingAdmissionPolicy 'p' with binding 'b' denied request"),
// admission webhooks ("admission webhook \"w\" denied the request") and the LimitRanger
// ("maximum cpu usage per Container is 2, but limit is 4", "memory max limit to request ratio
// per Pod is 2, ...": plugin/pkg/admission/limitranger).
var admissionDenials = []string{"violates PodSecurity", "denied request", "denied the request",
	" usage per Container is ", " usage per Pod is ", " max limit to request ratio per "}

// Rejected reports whether a super-cluster write failed for a reason that does not change by
// itself, so retrying the same object on a timer only repeats the refusal: 422 Invalid, 400 Bad
// Request, 413 Request Entity Too Large, or a denial by an admission check (admissionDenials).
// These are retried: quota exceeded (room may free up), a namespace being terminated (status
// cause corev1.NamespaceTerminatingCause: it will be recreated), an RBAC refusal of the
// syncer's own identity ("cannot create resource ..."), any other 403 (for example the
// ServiceAccount admission's "error looking up service account", which a controller fixes) and
// every server or transport error.
func Rejected(err error) bool {
	if err == nil || admit.QuotaExceededDenial("", err) != nil {
		return false
	}
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return false
	}
	msg := err.Error()
	for _, d := range admissionDenials {
		if strings.Contains(msg, d) {
			return true
		}
	}
	if apierrors.IsForbidden(err) {
		return false
	}
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsRequestEntityTooLargeError(err)
}

// isHeldOut is tenant.IsHeldOut (the parameter named tenant shadows the package in UpwardPair).
var isHeldOut = tenant.IsHeldOut

// UpwardPair reads, for the upward direction, tenant object name (from tenant, the tenant cache
// of its namespace) and its super copy (from super, the super cache of the mapped namespace).
// ok is false, with a nil error, when either is missing or the super object is not the copy of
// this tenant object (another tenant's, another UID's), or the tenant object is a stub
// (tenant.IsHeldOut): there is nothing to copy up then. The
// error is a cache read error other than NotFound.
func UpwardPair[T Object](c *tenant.Cluster, tenant, super Getter[T], name string) (t, s T, ok bool, err error) {
	if t, err = tenant.Get(name); err != nil {
		return t, s, false, ignoreNotFound(err)
	}
	if isHeldOut(t) {
		return t, s, false, nil // a stub: nothing is written into the tenant object from it
	}
	if s, err = super.Get(name); err != nil {
		return t, s, false, ignoreNotFound(err)
	}
	o, owned := conversion.OwnerOf(s)
	return t, s, owned && o.TenantUID == c.UID && o.UID == string(t.GetUID()), nil
}

// ignoreNotFound maps NotFound to nil.
func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// ErrTenantCacheBehind is returned (and the request retried) when the tenant cache says a
// tenant object is gone but the tenant apiserver still has it.
var ErrTenantCacheBehind = errors.New("the tenant cache is behind the tenant apiserver; retrying")

// confirmGone checks with the tenant apiserver, before a super object is deleted because its
// tenant object is missing from (or newer in) the tenant cache, that the tenant object it was
// synced from is really gone. A cache can lag behind its apiserver: right after a resume from a
// checkpoint the informer replays the changes since the checkpoint's position, and a deletion
// decided on the old view would remove a super object (a Service with its ClusterIP, a
// namespace with its Pods) that is still wanted. It returns ErrTenantCacheBehind when the
// object synced from is still there, the read's error when it fails, and nil otherwise (also
// for kinds it cannot read, which keep the cache's answer).
func confirmGone(ctx context.Context, c *tenant.Cluster, kind resources.Kind, ns, name string, superObj metav1.Object) error {
	o, _ := conversion.OwnerOf(superObj)
	uid, found, err := liveTenantUID(ctx, c, kind, ns, name)
	switch {
	case err != nil:
		return err
	case found && o.UID != "" && string(uid) == o.UID:
		return fmt.Errorf("%s %s/%s: %w", kind, ns, name, ErrTenantCacheBehind)
	}
	return nil
}

// liveTenantUID reads a tenant object's UID from the tenant apiserver. found is false when it
// does not exist or the kind is not one it reads. Endpoints and EndpointSlices are not read:
// their Spec.Tenant getters also report the objects of Services with a selector as absent (the
// super cluster's own controllers own those), so "present in the tenant" does not mean "wanted".
func liveTenantUID(ctx context.Context, c *tenant.Cluster, kind resources.Kind, ns, name string) (types.UID, bool, error) {
	var obj metav1.Object
	var err error
	cs, opts := c.Client, metav1.GetOptions{}
	switch kind {
	case resources.KindConfigMap:
		obj, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, name, opts)
	case resources.KindSecret:
		obj, err = cs.CoreV1().Secrets(ns).Get(ctx, name, opts)
	case resources.KindServiceAccount:
		obj, err = cs.CoreV1().ServiceAccounts(ns).Get(ctx, name, opts)
	case resources.KindService:
		obj, err = cs.CoreV1().Services(ns).Get(ctx, name, opts)
	case resources.KindPersistentVolumeClaim:
		obj, err = cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, opts)
	case resources.KindIngress:
		obj, err = cs.NetworkingV1().Ingresses(ns).Get(ctx, name, opts)
	case resources.KindNetworkPolicy:
		obj, err = cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, name, opts)
	case resources.KindPodDisruptionBudget:
		obj, err = cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, name, opts)
	default:
		return "", false, nil
	}
	if apierrors.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return obj.GetUID(), true, nil
}
