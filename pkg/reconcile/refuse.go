package reconcile

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Refuse handles tenant object tObj of kind that its policy refuses as a whole (d): it reports
// the refusal (admit.Deny: a PolicyDenied Warning Event and a count, once per object
// version and policy generation), deletes the object's super copy at superNS/name when the
// tenant owns one (synced before the object or the policy changed), and returns nil, so the
// request is not retried: the object comes back when it or the policy changes. super and w are
// the super cache and client of superNS. The error is a cache read or delete error.
func Refuse[T Object](ctx context.Context, c *tenant.Cluster, kind resources.Kind, tObj T, super Getter[T], w Writer[T], d *policy.Denial) error {
	admit.Deny(c, kind, tObj, d)
	return DeleteOwnedSuper(ctx, c, super, w, tObj.GetName())
}

// DeleteOwnedSuper deletes the super copy name (read from the super cache super, deleted through
// w) when tenant c owns it (conversion.OwnedByTenant); an object someone else made at that name
// is never touched. It returns nil when there is nothing to delete, else the cache read or
// delete error.
func DeleteOwnedSuper[T Object](ctx context.Context, c *tenant.Cluster, super Getter[T], w Writer[T], name string) error {
	sObj, err := super.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !conversion.OwnedByTenant(sObj, c.UID) {
		return nil // someone else's: never touched
	}
	return DeleteSuper(ctx, w, sObj)
}
