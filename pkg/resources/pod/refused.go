package pod

import (
	"context"
	"fmt"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/policy"
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
	// Its Warning Event has the same reason (policy.Denial.Reason).
	ReasonQuotaExceeded = policy.ReasonQuotaExceeded
)

// maxRefusalMessage bounds the message of a refusal condition (bytes): a webhook's answer can
// be long, and it lands in every status write of the tenant Pod.
const maxRefusalMessage = 1024

// rejectedBySuper reports that the super cluster refused to create tenant Pod t's super Pod
// with err, a refusal reconcile.Rejected says does not change by itself: a Warning Event and
// condition PodScheduled=False, both with reason SuperClusterRejected and the apiserver's
// message (the condition written only when it differs), an Event on the Pod's controller
// (reportOwner, when the refusal is new), and a record of the refusal at the
// Pod's version after that write (admit.RecordRejected), so that neither a re-enqueue nor
// a remediation scan sends the same Pod again: it is retried when the tenant Pod or the policy
// changes. It returns an error wrapping resources.ErrRejected (not retried on a timer), or the
// status write's error (retried).
func rejectedBySuper(ctx context.Context, c *tenant.Cluster, t *corev1.Pod, err error) error {
	msg := truncateMessage(err.Error(), maxRefusalMessage)
	c.Recorder.Event(t, corev1.EventTypeWarning, ReasonSuperClusterRejected, "super cluster rejected create of Pod: "+msg)
	rerr := fmt.Errorf("failed to create Pod in super cluster: %w: %w", resources.ErrRejected, err)
	written, werr := setNotScheduled(ctx, c, t, ReasonSuperClusterRejected, msg)
	if werr != nil {
		return fmt.Errorf("%w (condition not written: %w)", err, werr)
	}
	if admit.RecordRejected(c, resources.KindPod, written) {
		reportOwner(ctx, c, t, ReasonSuperClusterRejected, msg)
	}
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
