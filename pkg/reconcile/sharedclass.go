package reconcile

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// SharedClass describes a cluster-scoped super kind whose objects the syncer copies up into
// the tenants that may use them (public PriorityClasses, the RuntimeClasses a tenant's policy
// allows): one super object, a copy in each such tenant, labelled as the syncer's
// (conversion.LabelManagedBy). A *SharedClass is a resources.Resource, a resources.SuperMapper
// (every super change concerns every tenant; Upward decides per tenant) and a
// resources.Upwarder (a copy edited or deleted in the tenant is reset). A tenant's own object
// of the same name is never touched.
type SharedClass[T Object] struct {
	// Name is the kind's name, for requests, errors, Events and metrics.
	Name resources.Kind
	// TenantInf returns the kind's informer in tenant c's factory.
	TenantInf func(c *tenant.Cluster) cache.SharedIndexInformer
	// SuperInf returns the super informer whose objects are candidates for copying.
	SuperInf func(env *resources.Env) cache.SharedIndexInformer
	// Super returns the super object name, and whether tenant c gets a copy of it (false when
	// it does not exist, is being deleted, or is not shared with c). Errors are cache read
	// failures other than NotFound.
	Super func(env *resources.Env, c *tenant.Cluster, name string) (T, bool, error)
	// Tenant returns tenant c's object name from its cache; a NotFound error when it has none.
	Tenant func(c *tenant.Cluster, name string) (T, error)
	// Client returns tenant c's typed client of the kind (cluster-scoped).
	Client func(c *tenant.Cluster) Writer[T]
	// Desired returns the tenant copy of super object s, labelled as the syncer's.
	Desired func(s T) T
	// Equal reports whether tenant copy have matches want in every field the syncer sets.
	Equal func(want, have T) bool
	// Merge returns have (a deep copy, to be sent as an Update) with want's mutable fields, or
	// false when an immutable field differs, so the copy is deleted and created again on the
	// deletion event. Nil: every difference replaces the copy.
	Merge func(want, have T) (T, bool)
}

var (
	_ resources.Resource    = (*SharedClass[Object])(nil)
	_ resources.SuperMapper = (*SharedClass[Object])(nil)
	_ resources.Upwarder    = (*SharedClass[Object])(nil)
)

// Kind implements resources.Resource.
func (k *SharedClass[T]) Kind() resources.Kind { return k.Name }

// TenantInformer implements resources.Resource.
func (k *SharedClass[T]) TenantInformer(c *tenant.Cluster) cache.SharedIndexInformer {
	return k.TenantInf(c)
}

// SuperInformer implements resources.Resource.
func (k *SharedClass[T]) SuperInformer(env *resources.Env) cache.SharedIndexInformer {
	return k.SuperInf(env)
}

// Downward implements resources.Resource: a shared class has no downward path.
func (k *SharedClass[T]) Downward(context.Context, *resources.Env, *tenant.Cluster, string, string) error {
	return nil
}

// UpwardOnTenantChange implements resources.Upwarder: a copy edited or deleted in the tenant
// is reset.
func (k *SharedClass[T]) UpwardOnTenantChange() bool { return true }

// MapSuper implements resources.SuperMapper: a super object concerns every tenant.
func (k *SharedClass[T]) MapSuper(_ *resources.Env, obj metav1.Object, clusters []*tenant.Cluster) []resources.Request {
	out := make([]resources.Request, 0, len(clusters))
	for _, c := range clusters {
		out = append(out, resources.Request{Tenant: c.Name, Kind: k.Name, Name: obj.GetName()})
	}
	return out
}

// IsCopy reports whether tenant object t is the syncer's copy of a shared super object.
func IsCopy(t metav1.Object) bool {
	return t.GetLabels()[conversion.LabelManagedBy] == conversion.ManagedByValue
}

// Upward implements resources.Resource: it creates, updates or deletes tenant c's copy of
// super object name so that a copy exists exactly when Super says c gets one, and matches
// Desired. Errors are the failed tenant writes and cache reads.
func (k *SharedClass[T]) Upward(ctx context.Context, env *resources.Env, c *tenant.Cluster, _, name string) error {
	s, want, err := k.Super(env, c, name)
	if err != nil {
		return err
	}
	t, err := k.Tenant(c, name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	has := err == nil
	if has && !IsCopy(t) {
		return nil // the tenant's own object: never touched
	}
	key := alteredKey(k.Name, name)
	switch {
	case !want && !has:
		c.Refusals.Forget(key)
		return nil
	case !want:
		return k.deleteCopy(ctx, c, t)
	case !has:
		d := k.Desired(s)
		got, err := k.Client(c).Create(ctx, d, metav1.CreateOptions{FieldManager: FieldManager})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("failed to create %s %s in tenant %s: %w", k.Name, name, c.Name, err)
		}
		if err == nil {
			k.checkWritten(c, key, s, d, got)
		}
		return nil
	}
	if c.Refusals.Refused(key, alteredVersion(t, s), c.Policy().Generation) {
		return nil // the tenant's admission altered this write; a change of either side retries
	}
	d := k.Desired(s)
	if k.Equal(d, t) {
		c.Refusals.Forget(key)
		return nil
	}
	var u T
	ok := false
	if k.Merge != nil {
		u, ok = k.Merge(d, t)
	}
	if !ok {
		return k.deleteCopy(ctx, c, t) // recreated on the deletion event
	}
	got, err := k.Client(c).Update(ctx, u, metav1.UpdateOptions{FieldManager: FieldManager})
	if err != nil {
		return fmt.Errorf("failed to update %s %s in tenant %s: %w", k.Name, name, c.Name, err)
	}
	k.checkWritten(c, key, s, d, got)
	return nil
}

// ReasonCopyAltered is the reason of the Warning Event on a tenant copy of a shared class that
// the tenant's own admission (a mutating webhook or policy) changed as the syncer wrote it.
const ReasonCopyAltered = "CopyAlteredByAdmission"

// ruleCopyAltered is the rule of the records checkWritten keeps in tenant.Cluster.Refusals.
const ruleCopyAltered policy.Rule = "tenantAdmissionAltered"

// alteredKey is the key, in tenant.Cluster.Refusals, of the copy of shared class name of kind.
func alteredKey(kind resources.Kind, name string) string {
	return "altered:" + string(kind) + "/" + name
}

// alteredVersion is the version an altered-copy record holds: tenant copy t's resourceVersion
// and super object s's, so a change of either makes the syncer write the copy again.
func alteredVersion(t, s metav1.Object) string {
	return t.GetResourceVersion() + "/" + s.GetResourceVersion()
}

// checkWritten compares got, the tenant copy as the tenant apiserver stored it, with d, what
// the syncer wrote (Desired of super object s). When the tenant's admission changed it, the
// syncer does not fight: it records the stored version (Upward leaves that version alone until
// the copy or s changes, so a webhook cannot keep it rewriting or recreating the copy) and
// reports it once with a Warning Event ReasonCopyAltered on the copy. When they match, any
// earlier record is forgotten.
func (k *SharedClass[T]) checkWritten(c *tenant.Cluster, key string, s, d, got T) {
	if k.Equal(d, got) {
		c.Refusals.Forget(key)
		return
	}
	if c.Refusals.Record(key, alteredVersion(got, s), c.Policy().Generation, ruleCopyAltered) {
		c.Recorder.Eventf(got, corev1.EventTypeWarning, ReasonCopyAltered,
			"The tenant's admission changed the copy of the super cluster's %s %s as it was written; it is left as stored until it or the super %s changes", k.Name, got.GetName(), k.Name)
	}
}

// deleteCopy deletes tenant copy t with a UID precondition (a newer object of the same name
// is left alone).
func (k *SharedClass[T]) deleteCopy(ctx context.Context, c *tenant.Cluster, t T) error {
	uid := t.GetUID()
	err := k.Client(c).Delete(ctx, t.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("failed to delete %s %s in tenant %s: %w", k.Name, t.GetName(), c.Name, err)
	}
	return nil
}
