package resources

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Mismatch names why a tenant object and its super copy disagree, as found by periodic
// remediation (pkg/remediation) in the caches. The empty Mismatch (InSync) means they agree.
// Values are metric label values (snake_case, bounded).
type Mismatch string

// The mismatches periodic remediation reports.
const (
	// InSync: the tenant object and its super copy agree (or no super copy is expected).
	InSync Mismatch = ""
	// MismatchMissingInSuper: a tenant object that should have a super copy has none.
	MismatchMissingInSuper Mismatch = "missing_in_super"
	// MismatchOrphanInSuper: a super object owned by the tenant whose tenant object is gone.
	MismatchOrphanInSuper Mismatch = "orphan_in_super"
	// MismatchStaleInSuper: the super copy belongs to an earlier tenant object of the same name
	// (its recorded UID differs), or the tenant object is being deleted and the super copy is not.
	MismatchStaleInSuper Mismatch = "stale_in_super"
	// MismatchContentDiffers: the super copy differs from what the downward reconcile would
	// write in a field the syncer owns.
	MismatchContentDiffers Mismatch = "content_differs"
	// MismatchRefusedInSuper: a super copy exists although the tenant's policy refuses the
	// tenant object as it is now (for Endpoints and EndpointSlices: an address is no longer
	// the IP of one of the tenant's running super Pods); the downward reconcile deletes it.
	MismatchRefusedInSuper Mismatch = "refused_in_super"
	// MismatchStatusDiffers: the tenant object's status (or Pod binding) differs from what the
	// upward reconcile would copy from the super object.
	MismatchStatusDiffers Mismatch = "status_differs"
)

// Upward reports whether the mismatch is repaired by the upward pipeline (super → tenant);
// all others are repaired by the downward pipeline.
func (m Mismatch) Upward() bool { return m == MismatchStatusDiffers }

// Checker is an optional interface of a Resource: kinds that implement it tell periodic
// remediation cheaply, from the caches alone, whether a tenant object and its super copy agree.
// Kinds without it are checked with CheckPresence.
type Checker interface {
	// Check compares tenant object t (from the tenant cache, never nil) with s, the super object
	// at t's mapped name in the super cache (nil when there is none). s, when not nil, is owned
	// by c (conversion.OwnedByTenant). Check must agree with the kind's reconcilers: it returns
	// InSync exactly when neither the downward nor the upward reconcile would write anything,
	// so that a re-enqueued object is fixed by one reconcile and a never-synced object (for
	// example kube-root-ca.crt) is never reported. It must not modify t or s, and must not call
	// an apiserver.
	Check(env *Env, c *tenant.Cluster, t, s metav1.Object) Mismatch
}

// StableChecker is an optional interface of a Checker whose verdict on a tenant object and an
// existing super copy depends on nothing but the two objects, the tenant's identity and its
// policy (c.Policy()): not on other objects, Nodes or the time. Remediation remembers such a
// pair's InSync verdict and does not check it again while the resourceVersions of both
// objects, the super copy's UID and the tenant's policy rules (policy.Effective.Generation) stay the same; an informer's
// object at one resourceVersion never changes, so the remembered verdict is the one Check
// would give. This matters for kinds whose Check is costly (cached Pods are decoded to be
// compared), where a steady scan would otherwise re-decode every object.
type StableChecker interface {
	Checker
	// StableVerdicts marks the kind; it does nothing.
	StableVerdicts()
}

// CheckPresence is the presence and identity part of every check: a live tenant object needs
// a super copy recorded with its UID (else MismatchMissingInSuper or MismatchStaleInSuper);
// a tenant object being deleted must not have a live super copy (MismatchStaleInSuper). It
// returns InSync otherwise, including for a tenant object being deleted whose super copy is
// gone or going.
func CheckPresence(t, s metav1.Object) Mismatch {
	deleting := t.GetDeletionTimestamp() != nil
	switch {
	case s == nil && deleting:
		return InSync
	case s == nil:
		return MismatchMissingInSuper
	case deleting && s.GetDeletionTimestamp() == nil:
		return MismatchStaleInSuper
	case deleting:
		return InSync
	}
	if o, _ := conversion.OwnerOf(s); o.UID != string(t.GetUID()) {
		return MismatchStaleInSuper
	}
	return InSync
}

// CheckWith is the Check of a kind synced by the generic downward reconciler: CheckPresence,
// then, for a live tenant object with a super copy, whether desired(t, s) (the reconciler's own
// Desired, given the super copy) equals s by the reconciler's own equal (else
// MismatchContentDiffers). t and s are the tenant object and its super copy (nil when absent).
func CheckWith[T metav1.Object](t, s metav1.Object, desired func(t, s T) T, equal func(want, have T) bool) Mismatch {
	if m := CheckPresence(t, s); m != InSync || t.GetDeletionTimestamp() != nil {
		return m
	}
	tt, ok1 := t.(T)
	st, ok2 := s.(T)
	if !ok1 || !ok2 {
		return InSync
	}
	if !equal(desired(tt, st), st) {
		return MismatchContentDiffers
	}
	return InSync
}
