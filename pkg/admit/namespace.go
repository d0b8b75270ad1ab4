package admit

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// EnsureSuperNamespace makes sure the super namespace for tenant namespace ns exists, is
// owned by the tenant for ns and has its bounds in force (EnsureBounds: the ResourceQuota and
// LimitRange of the tenant's policy), creating the namespace from the tenant namespace when
// missing and then its bounds. Every kind calls it before it creates a super object in the
// namespace, so nothing lands in a super namespace before its LimitRange exists and its
// ResourceQuota is enforced. It returns the super namespace name; ErrNotOwned (wrapped) when
// the name is taken by someone else; ErrNamespaceCollision (wrapped, reported on the tenant
// Namespace by RefuseNamespaceCollision) when it holds another tenant namespace of the same
// tenant; ErrBoundsPending (wrapped) while the quota's status is not computed yet (retry); an
// error when the tenant namespace is missing or terminating or a write failed.
func EnsureSuperNamespace(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns string) (string, error) {
	superNS := resources.SuperNamespace(c, ns)
	existing, err := env.SuperInformers.Core().V1().Namespaces().Lister().Get(superNS)
	if err == nil {
		if !conversion.OwnedByTenant(existing, c.UID) {
			return "", fmt.Errorf("namespace %s: %w", superNS, resources.ErrNotOwned)
		}
		if err := checkHolder(c, ns, existing); err != nil {
			return "", err
		}
		return superNS, EnsureBounds(ctx, env, c, existing)
	}
	if !apierrors.IsNotFound(err) {
		return "", err
	}
	tns, err := c.Informers.Core().V1().Namespaces().Lister().Get(ns)
	if err != nil {
		return "", fmt.Errorf("tenant namespace %s: %w", ns, err)
	}
	if !tns.DeletionTimestamp.IsZero() {
		return "", fmt.Errorf("tenant namespace %s is terminating", ns)
	}
	if d := HeldOut(c, resources.KindNamespace, tns); d != nil {
		// Kept out of the syncer's memory: not synced, nor anything in it, until readmitted
		// (which enqueues the objects waiting in it).
		Deny(c, resources.KindNamespace, tns, d)
		return "", fmt.Errorf("tenant namespace %s: %w", ns, ErrNamespaceRefused)
	}
	if env.AdmitObject != nil && !env.AdmitObject(c, resources.KindNamespace, tns) {
		return "", fmt.Errorf("tenant namespace %s: %w", ns, ErrNamespaceRefused)
	}
	want := resources.DesiredNamespace(env, c, tns, nil)
	created, err := env.Super.CoreV1().Namespaces().Create(ctx, want, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// Not in our cache: either created a moment ago or not ours. Check the live object.
		live, gerr := env.Super.CoreV1().Namespaces().Get(ctx, superNS, metav1.GetOptions{})
		if gerr != nil {
			return "", gerr
		}
		if !conversion.OwnedByTenant(live, c.UID) {
			return "", fmt.Errorf("namespace %s: %w", superNS, resources.ErrNotOwned)
		}
		if err := checkHolder(c, ns, live); err != nil {
			return "", err
		}
		return superNS, EnsureBounds(ctx, env, c, live)
	}
	if err != nil {
		return "", fmt.Errorf("failed to create super namespace %s: %w", superNS, err)
	}
	Admitted(c, resources.KindNamespace, "", ns) // a namespace refused before (its name was taken) is synced now
	// The bounds right after the namespace, before this caller creates anything in it.
	return superNS, EnsureBounds(ctx, env, c, created)
}
