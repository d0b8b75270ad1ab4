package namespace

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs Namespaces.
var Resource = resourceKind{resources.Funcs{
	Name: resources.KindNamespace,
	Tenant: func(c *tenant.Cluster) cache.SharedIndexInformer {
		return c.Informers.Core().V1().Namespaces().Informer()
	},
	Super: func(env *resources.Env) cache.SharedIndexInformer {
		return env.SuperInformers.Core().V1().Namespaces().Informer()
	},
	Down: reconcileDownward,
}}

// reconcileDownward is the kind's downward reconciler; name is the tenant namespace.
func reconcileDownward(ctx context.Context, env *resources.Env, c *tenant.Cluster, _, name string) error {
	superNS := resources.SuperNamespace(c, name)
	tns, err := c.Informers.Core().V1().Namespaces().Lister().Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	tFound := err == nil
	sns, err := env.SuperInformers.Core().V1().Namespaces().Lister().Get(superNS)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	sFound := err == nil
	if sFound && !conversion.OwnedByTenant(sns, c.UID) {
		return resources.ErrNotOwned
	}
	if sFound && conversion.HoldsOtherNamespace(sns, c.UID, name) {
		// Another tenant namespace of this tenant maps to the same super namespace and holds
		// it: it is never deleted or changed for this one, which is refused until the name is
		// free (the super namespace's deletion enqueues this namespace again).
		if !tFound || !tns.DeletionTimestamp.IsZero() {
			admit.Admitted(c, resources.KindNamespace, "", name)
			return nil
		}
		_, holder, _ := conversion.HeldNamespace(sns)
		return admit.RefuseNamespaceCollision(c, name, superNS, holder)
	}
	if tFound && tns.DeletionTimestamp.IsZero() {
		if d := admit.HeldOut(c, resources.KindNamespace, tns); d != nil {
			if !sFound || ownedByNamespace(sns, tns.UID) {
				// A stub (kept out of the syncer's memory): no super namespace is created for
				// it (its objects wait: admit.ErrNamespaceRefused), and an existing one is
				// left as it was, its objects still synced. Readmission enqueues it again.
				admit.Deny(c, resources.KindNamespace, tns, d)
				return nil
			}
		}
	}
	if !tFound || !tns.DeletionTimestamp.IsZero() {
		admit.Admitted(c, resources.KindNamespace, "", name)
		if !tFound {
			admit.Gone(c, resources.KindNamespace, "", name)
		}
		if !sFound || !sns.DeletionTimestamp.IsZero() {
			return nil
		}
		if !tFound {
			// Deleting a super namespace deletes every super Pod in it, which cannot be undone:
			// confirm with the tenant apiserver that the namespace is gone. The cache can lag,
			// e.g. right after a resume from a checkpoint while the watch replays.
			if err := confirmGone(ctx, c, name, sns); err != nil {
				return err
			}
		}
		return reconcile.DeleteSuper(ctx, env.Super.CoreV1().Namespaces(), sns)
	}
	if !sFound {
		admit.ReportDroppedMeta(c, resources.KindNamespace, tns, resources.DesiredNamespace(env, c, tns, nil))
		_, err := admit.EnsureSuperNamespace(ctx, env, c, name)
		return ignorePending(err)
	}
	if !sns.DeletionTimestamp.IsZero() {
		return nil // being deleted (e.g. by hand); recreated once gone
	}
	if o, _ := conversion.OwnerOf(sns); o.UID != string(tns.UID) {
		// The tenant namespace was recreated: the old super namespace goes first (unless the
		// cache lags behind the tenant and the super namespace is the current one's).
		if err := confirmGone(ctx, c, name, sns); err != nil {
			return err
		}
		return reconcile.DeleteSuper(ctx, env.Super.CoreV1().Namespaces(), sns)
	}
	// The ResourceQuota and LimitRange follow the policy and are repaired when edited or
	// deleted in the super cluster (their events enqueue this namespace).
	if err := ignorePending(admit.EnsureBounds(ctx, env, c, sns)); err != nil {
		return err
	}
	// Labels and annotations the tenant did not set (the super cluster's admins', and the super
	// apiserver's kubernetes.io/metadata.name) are kept and never overridden by the tenant.
	admit.Admitted(c, resources.KindNamespace, "", name)
	want := resources.DesiredNamespace(env, c, tns, sns)
	admit.ReportDroppedMeta(c, resources.KindNamespace, tns, want)
	if resources.MapsEqual(want.Labels, sns.Labels) && resources.MapsEqual(want.Annotations, sns.Annotations) {
		return nil
	}
	u := sns.DeepCopy()
	u.Labels, u.Annotations = want.Labels, want.Annotations
	_, err = env.Super.CoreV1().Namespaces().Update(ctx, u, metav1.UpdateOptions{FieldManager: reconcile.FieldManager})
	return err
}

type resourceKind struct{ resources.Funcs }

var _ resources.Resource = Resource

// ignorePending maps admit.ErrBoundsPending to nil: the namespace itself waits for nothing
// (the quota's status update re-enqueues the objects that wait for it).
func ignorePending(err error) error {
	if errors.Is(err, admit.ErrBoundsPending) {
		return nil
	}
	return err
}

// confirmGone returns nil when the tenant apiserver confirms that the tenant namespace the
// super namespace sns was made for (by its owner UID) no longer exists, and an error to retry
// when it still does or the read failed.
func confirmGone(ctx context.Context, c *tenant.Cluster, name string, sns *corev1.Namespace) error {
	live, err := c.Client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if o, _ := conversion.OwnerOf(sns); string(live.UID) == o.UID && live.DeletionTimestamp.IsZero() {
		return fmt.Errorf("tenant namespace %s: not in the cache yet but present in the tenant; retrying", name)
	}
	return nil
}

// ownedByNamespace reports whether the super namespace sns is the copy of the tenant namespace
// whose UID is uid (its owner annotation names it).
func ownedByNamespace(sns *corev1.Namespace, uid types.UID) bool {
	o, _ := conversion.OwnerOf(sns)
	return o.UID == string(uid)
}
