package pod

import (
	"context"
	"fmt"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Reasons of the PodScheduled=False condition that tells a tenant why its Pod does not run.
// The tenant's own policy uses policy.ReasonPolicyDenied; a PriorityClass that is not public
// uses priorityclass.ReasonPriorityClassNotPublic.
const (
	// ReasonSuperClusterRejected: the super cluster refused to create the super Pod for a
	// reason that does not change by itself (Pod Security admission, a validating webhook or
	// ValidatingAdmissionPolicy, a LimitRange, an invalid object: reconcile.Rejected). The
	// message is the super apiserver's.
	ReasonSuperClusterRejected = "SuperClusterRejected"
	// ReasonQuotaExceeded: the tenant's ResourceQuota in the super namespace (the policy's
	// limits.quota) has no room for the Pod; retried with backoff until it has.
	ReasonQuotaExceeded = "QuotaExceeded"
)

// maxRefusalMessage bounds the message of a refusal condition (bytes): a webhook's answer can
// be long, and it lands in every status write of the tenant Pod.
const maxRefusalMessage = 1024

// rejectedBySuper reports that the super cluster refused to create tenant Pod t's super Pod
// with err, a refusal reconcile.Rejected says does not change by itself: the SyncFailed Warning
// Event (reconcile.Report), condition PodScheduled=False with reason SuperClusterRejected and
// the apiserver's message (written only when it differs), and a record of the refusal at the
// Pod's version after that write (resources.RecordRejected), so that neither a re-enqueue nor
// a remediation scan sends the same Pod again: it is retried when the tenant Pod or the policy
// changes. It returns reconcile.Report's error (wrapping resources.ErrRejected: not retried on
// a timer), or the status write's error (retried).
func rejectedBySuper(ctx context.Context, c *tenant.Cluster, t *corev1.Pod, err error) error {
	rerr := reconcile.Report(c, t, resources.KindPod, "create", err)
	written, werr := setNotScheduled(ctx, c, t, ReasonSuperClusterRejected, truncateMessage(err.Error(), maxRefusalMessage))
	if werr != nil {
		return fmt.Errorf("%w (condition not written: %w)", err, werr)
	}
	resources.RecordRejected(c, resources.KindPod, written)
	return rerr
}

// truncateMessage returns s cut to at most n bytes on a rune boundary, with "..." when cut.
func truncateMessage(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
