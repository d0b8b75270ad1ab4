package admit

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// The bounds the syncer keeps in every super namespace it creates: a ResourceQuota whose
// spec.hard is the backstop part of the tenant policy's limits.quota (DesiredQuota), and,
// only when a provider sets one (not recommended: it changes tenant Pods), a LimitRange whose
// spec.limits is its limits.limitRange. Both carry the ownership stamps of the super namespace (the tenant
// namespace's name and UID) and the managed-by label, so the super caches hold them.
const (
	QuotaName      = "vc-syncer-quota"
	LimitRangeName = "vc-syncer-limits"
)

// ErrBoundsPending is returned (wrapped) by EnsureSuperNamespace while the super namespace's
// ResourceQuota has no status for its current spec yet: the super cluster's quota admission
// enforces only what the quota controller has computed (QuotaReady), so nothing is
// created in the namespace before that. The request is retried; the quota's status update
// also re-enqueues the namespace's waiting objects (Gate.WatchBounds).
var ErrBoundsPending = errors.New("the super namespace's ResourceQuota is not computed yet by the super cluster's quota controller; waiting")

// ErrNamespaceRefused is returned (wrapped) by EnsureSuperNamespace for a tenant namespace that
// the tenant's limits.maxObjects refuses (Env.AdmitObject) or that the tenant caches hold as a
// stub (HeldOut: limits.maxObjectBytes or limits.maxCachedBytes): no super namespace, so
// nothing is synced into it. The syncer does not retry such requests; admitting (or
// readmitting) the namespace later enqueues its objects.
var ErrNamespaceRefused = errors.New("the tenant namespace is not synced: the tenant has the most namespaces its policy allows (limits.maxObjects)")

// BoundsInformers returns (registering them on first call) the super informers of the syncer's
// ResourceQuotas and LimitRanges. Register them before the super informers start: the bounds
// are read from these caches.
func BoundsInformers(env *resources.Env) (quotas, limitRanges cache.SharedIndexInformer) {
	return env.SuperInformers.Core().V1().ResourceQuotas().Informer(), env.SuperInformers.Core().V1().LimitRanges().Informer()
}

// boundsOwner returns the ownership record of the bounds of super namespace sns: the tenant
// namespace it maps (name and UID), as on sns itself.
func boundsOwner(sns *corev1.Namespace) conversion.Owner {
	o, _ := conversion.OwnerOf(sns)
	return o
}

// DesiredQuota returns the ResourceQuota QuotaName that super namespace sns of tenant c should
// have, or nil when it would be empty. It is a backstop in the super cluster, not the tenant's
// budget (which the syncer enforces over all of the tenant's namespaces together before a Pod
// is created, pod.admitBudget): spec.hard holds only the keys of c's limits.quota that never
// refuse a Pod the budget admitted and never require a field the tenant did not set
// (policy.BackstopKey: object counts and claims' storage). A per-namespace count is never
// above the tenant's count, so the budget's value is a safe bound for each namespace too.
// requests.cpu, requests.memory, limits.* and other compute keys are left out: a
// ResourceQuota with them refuses every Pod with a container that does not set them.
func DesiredQuota(c *tenant.Cluster, sns *corev1.Namespace) *corev1.ResourceQuota {
	hard := corev1.ResourceList{}
	for k, v := range c.Policy().Limits().Quota {
		if policy.BackstopKey(k) {
			hard[k] = v.DeepCopy()
		}
	}
	if len(hard) == 0 {
		return nil
	}
	rq := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: QuotaName, Namespace: sns.Name},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
	}
	conversion.Stamp(&rq.ObjectMeta, boundsOwner(sns))
	return rq
}

// DesiredLimitRange returns the LimitRange LimitRangeName that super namespace sns of tenant c
// should have (spec.limits: a copy of c's limits.limitRange), or nil when the policy sets
// none (an empty limits.limitRange).
func DesiredLimitRange(c *tenant.Cluster, sns *corev1.Namespace) *corev1.LimitRange {
	items := c.Policy().Limits().LimitRange
	if len(items) == 0 {
		return nil
	}
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: LimitRangeName, Namespace: sns.Name}}
	for _, it := range items {
		lr.Spec.Limits = append(lr.Spec.Limits, *it.DeepCopy())
	}
	conversion.Stamp(&lr.ObjectMeta, boundsOwner(sns))
	return lr
}

// limitRangeSpecEqual reports whether a stored LimitRange spec (have) is what writing want
// stores. The apiserver defaults container items (SetDefaults_LimitRangeItem in
// k8s.io/kubernetes pkg/apis/core/v1/defaults.go: default from max, defaultRequest from default,
// then from min), so want is compared after the same defaulting, else every reconcile would
// see a difference.
func limitRangeSpecEqual(want, have corev1.LimitRangeSpec) bool {
	w := *want.DeepCopy()
	for i := range w.Limits {
		it := &w.Limits[i]
		if it.Type != corev1.LimitTypeContainer {
			continue
		}
		if it.Default == nil {
			it.Default = corev1.ResourceList{}
		}
		if it.DefaultRequest == nil {
			it.DefaultRequest = corev1.ResourceList{}
		}
		for k, v := range it.Max {
			if _, ok := it.Default[k]; !ok {
				it.Default[k] = v.DeepCopy()
			}
		}
		for k, v := range it.Default {
			if _, ok := it.DefaultRequest[k]; !ok {
				it.DefaultRequest[k] = v.DeepCopy()
			}
		}
		for k, v := range it.Min {
			if _, ok := it.DefaultRequest[k]; !ok {
				it.DefaultRequest[k] = v.DeepCopy()
			}
		}
	}
	return equality.Semantic.DeepEqual(w, have)
}

// cachedQuota returns the syncer's ResourceQuota in super namespace superNS from the super
// cache, nil when there is none or it is not owned by tenant c.
func cachedQuota(env *resources.Env, c *tenant.Cluster, superNS string) *corev1.ResourceQuota {
	rq, err := env.SuperInformers.Core().V1().ResourceQuotas().Lister().ResourceQuotas(superNS).Get(QuotaName)
	if err != nil || !conversion.OwnedByTenant(rq, c.UID) {
		return nil
	}
	return rq
}

func cachedLimitRange(env *resources.Env, c *tenant.Cluster, superNS string) *corev1.LimitRange {
	lr, err := env.SuperInformers.Core().V1().LimitRanges().Lister().LimitRanges(superNS).Get(LimitRangeName)
	if err != nil || !conversion.OwnedByTenant(lr, c.UID) {
		return nil
	}
	return lr
}

// BoundsInSync reports, from the super caches only, whether super namespace sns of tenant c
// has the ResourceQuota and LimitRange its policy asks for (present with the desired spec, or
// absent when the policy sets none). Used by periodic remediation; readiness of the quota's
// status is not part of it.
func BoundsInSync(env *resources.Env, c *tenant.Cluster, sns *corev1.Namespace) bool {
	if !sns.DeletionTimestamp.IsZero() {
		return true
	}
	rq, lr := cachedQuota(env, c, sns.Name), cachedLimitRange(env, c, sns.Name)
	wantRQ, wantLR := DesiredQuota(c, sns), DesiredLimitRange(c, sns)
	if (wantRQ == nil) != (rq == nil) || (wantLR == nil) != (lr == nil) {
		return false
	}
	if wantRQ != nil && !equality.Semantic.DeepEqual(wantRQ.Spec, rq.Spec) {
		return false
	}
	return wantLR == nil || limitRangeSpecEqual(wantLR.Spec, lr.Spec)
}

// EnsureBounds makes the ResourceQuota and LimitRange of super namespace sns (owned by tenant c)
// match c's policy, reading the super caches and writing only on a difference: creates a
// missing one (the LimitRange first), resets the spec of one edited in the super cluster,
// deletes the syncer's own when the policy sets none. An object at either name that the
// syncer does not own (a super-cluster admin's) is left alone and counts as the bound. Nothing
// is done for a terminating namespace. It returns ErrBoundsPending (wrapped) while the wanted
// quota's status is not computed for its current spec, an API error otherwise (a refused write
// also gives a SyncFailed Warning Event on the tenant namespace), nil when the bounds are in
// force.
func EnsureBounds(ctx context.Context, env *resources.Env, c *tenant.Cluster, sns *corev1.Namespace) error {
	if !sns.DeletionTimestamp.IsZero() {
		return nil
	}
	if err := ensureLimitRange(ctx, env, c, sns); err != nil {
		return boundsFailed(c, sns, "LimitRange", err)
	}
	ready, err := ensureQuota(ctx, env, c, sns)
	if err != nil {
		return boundsFailed(c, sns, "ResourceQuota", err)
	}
	if !ready {
		return fmt.Errorf("namespace %s: %w", sns.Name, ErrBoundsPending)
	}
	return nil
}

// boundsFailed records a SyncFailed Warning Event on the tenant namespace of sns when the super
// cluster refused a bound for a reason retrying does not fix (an invalid policy value, missing
// permissions), and returns err wrapped. Nothing is synced into the namespace meanwhile: the
// syncer fails closed.
func boundsFailed(c *tenant.Cluster, sns *corev1.Namespace, kind string, err error) error {
	if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) {
		o := boundsOwner(sns)
		ref := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Namespace, UID: types.UID(o.UID)}}
		if c.Recorder != nil {
			c.Recorder.Eventf(ref, corev1.EventTypeWarning, "SyncFailed",
				"super cluster rejected the %s of namespace %s (from the tenant policy's limits); nothing is synced into it until this is fixed: %v", kind, sns.Name, err)
		}
	}
	return fmt.Errorf("failed to ensure %s of super namespace %s: %w", kind, sns.Name, err)
}

func ensureLimitRange(ctx context.Context, env *resources.Env, c *tenant.Cluster, sns *corev1.Namespace) error {
	client := env.Super.CoreV1().LimitRanges(sns.Name)
	want, have := DesiredLimitRange(c, sns), cachedLimitRange(env, c, sns.Name)
	switch {
	case want == nil && have == nil:
		return nil
	case want == nil:
		return deleteOwned(ctx, client.Delete, have)
	case have == nil:
		_, err := client.Create(ctx, want, metav1.CreateOptions{FieldManager: fieldManager})
		if apierrors.IsAlreadyExists(err) {
			return nil // ours with the cache behind (its event brings the namespace back), or an admin's: left alone
		}
		return err
	case limitRangeSpecEqual(want.Spec, have.Spec):
		return nil
	}
	u := have.DeepCopy()
	u.Spec = want.Spec
	_, err := client.Update(ctx, u, metav1.UpdateOptions{FieldManager: fieldManager})
	return err
}

// ensureQuota is ensureLimitRange for the ResourceQuota; ready reports whether the wanted
// quota (if any) is in force: cached with the wanted spec and its status computed.
func ensureQuota(ctx context.Context, env *resources.Env, c *tenant.Cluster, sns *corev1.Namespace) (ready bool, err error) {
	client := env.Super.CoreV1().ResourceQuotas(sns.Name)
	want, have := DesiredQuota(c, sns), cachedQuota(env, c, sns.Name)
	switch {
	case want == nil && have == nil:
		return true, nil
	case want == nil:
		return true, deleteOwned(ctx, client.Delete, have)
	case have == nil:
		_, err := client.Create(ctx, want, metav1.CreateOptions{FieldManager: fieldManager})
		if apierrors.IsAlreadyExists(err) {
			live, gerr := client.Get(ctx, QuotaName, metav1.GetOptions{})
			if gerr != nil {
				return false, gerr
			}
			if !conversion.OwnedByTenant(live, c.UID) {
				return true, nil // a super-cluster admin's quota at this name: theirs, and in force
			}
			return false, nil // ours, not in the cache yet
		}
		return false, err
	case !equality.Semantic.DeepEqual(want.Spec, have.Spec):
		u := have.DeepCopy()
		u.Spec = want.Spec
		_, err := client.Update(ctx, u, metav1.UpdateOptions{FieldManager: fieldManager})
		return false, err
	}
	return QuotaReady(have), nil
}

// fieldManager is the field manager of the syncer's writes (reconcile.FieldManager, which this
// package cannot import).
const fieldManager = "vc-syncer"

// deleteOwned deletes a cached owned object with a UID precondition; NotFound and Conflict
// (already replaced) count as done.
func deleteOwned(ctx context.Context, del func(context.Context, string, metav1.DeleteOptions) error, obj metav1.Object) error {
	uid := obj.GetUID()
	err := del(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}
