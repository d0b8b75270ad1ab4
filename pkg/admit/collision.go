package admit

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// ErrNamespaceCollision is returned (wrapped) by reconcilers for an object of a tenant
// namespace whose super namespace holds another tenant namespace of the same tenant (their
// conversion.SuperNamespace names collide; see conversion.HoldsOtherNamespace). The refusal has
// been reported on the tenant Namespace (RefuseNamespaceCollision). The syncer's workers treat
// it as final and do not retry: the request comes back when the super namespace is deleted
// (its holder gone), when the object changes, or on a policy change.
var ErrNamespaceCollision = errors.New("the super namespace holds another namespace of this tenant")

// RefuseNamespaceCollision reports that tenant namespace ns of tenant c is not synced because
// its super namespace superNS holds tenant namespace holder: a Warning Event with reason
// PolicyDenied and rule namespaceCollision on the tenant Namespace and one count of
// vcsyncer_policy_denials_total{kind="Namespace",rule="namespaceCollision"} (Deny: once per
// namespace version and policy generation; nothing is reported when the tenant Namespace is
// not in the tenant cache). It returns ErrNamespaceCollision, wrapped.
func RefuseNamespaceCollision(c *tenant.Cluster, ns, superNS, holder string) error {
	if c.Informers != nil {
		if tns, err := c.Informers.Core().V1().Namespaces().Lister().Get(ns); err == nil && tns.DeletionTimestamp.IsZero() {
			Deny(c, resources.KindNamespace, tns, policy.Deny(policy.RuleNamespaceCollision,
				"namespace %s and the objects in it are not synced: its super namespace %s (names over 63 characters are cut and hashed) "+
					"already holds namespace %s of this tenant; use another name for this namespace, or delete namespace %s to free the name",
				ns, superNS, holder, holder))
		}
	}
	return fmt.Errorf("tenant namespace %s: super namespace %s holds tenant namespace %s: %w", ns, superNS, holder, ErrNamespaceCollision)
}

// CheckNamespaceCollision returns RefuseNamespaceCollision's error when the cached super
// namespace of tenant namespace ns holds another tenant namespace of tenant c, and nil
// otherwise (no super namespace cached, another owner's, or ns's own). Reconcilers of
// namespaced kinds call it before reading or writing anything in the super namespace.
func CheckNamespaceCollision(env *resources.Env, c *tenant.Cluster, ns string) error {
	superNS := resources.SuperNamespace(c, ns)
	sns, err := env.SuperInformers.Core().V1().Namespaces().Lister().Get(superNS)
	if err != nil {
		return nil
	}
	return checkHolder(c, ns, sns)
}

// checkHolder returns RefuseNamespaceCollision's error when super namespace sns holds another
// tenant namespace of c than ns.
func checkHolder(c *tenant.Cluster, ns string, sns *corev1.Namespace) error {
	if !conversion.HoldsOtherNamespace(sns, c.UID, ns) {
		return nil
	}
	_, holder, _ := conversion.HeldNamespace(sns)
	return RefuseNamespaceCollision(c, ns, sns.Name, holder)
}

// NamespaceRefused reports whether tenant namespace ns of c is refused at its current version
// (IsRefused for the Namespace): the objects in it are not synced either.
func NamespaceRefused(c *tenant.Cluster, ns string) bool {
	tns, err := c.Informers.Core().V1().Namespaces().Lister().Get(ns)
	return err == nil && IsRefused(c, resources.KindNamespace, tns)
}
