package resources

import (
	"errors"
	"fmt"
	"time"
)

// ErrRejected marks a super-cluster write refused for a reason that does not change by itself:
// the object is invalid (422 Invalid, 400 Bad Request, 413 Request Entity Too Large) or an
// admission check of the super cluster denied it (Pod Security admission, a
// ValidatingAdmissionPolicy, a validating webhook). Retrying on a timer would only repeat the
// refusal, so a worker forgets the request instead (no backoff retry); it comes back with the
// object's next change, a policy change, or a remediation scan.
var ErrRejected = errors.New("refused by the super cluster; waiting for a change of the object")

// RequeueAfter is returned by a reconcile that succeeded but must run again after After
// (something it decided from the clock, e.g. a PodDisruptionBudget's drain bound): the syncer
// counts it as a success and adds the request back after After, without backoff.
type RequeueAfter struct {
	After time.Duration
}

func (r RequeueAfter) Error() string {
	return fmt.Sprintf("reconciled; to be reconciled again in %s", r.After)
}
