package resources

import "errors"

// ErrRejected marks a super-cluster write refused for a reason that does not change by itself:
// the object is invalid (422 Invalid, 400 Bad Request, 413 Request Entity Too Large) or an
// admission check of the super cluster denied it (Pod Security admission, a
// ValidatingAdmissionPolicy, a validating webhook). Retrying on a timer would only repeat the
// refusal, so a worker forgets the request instead (no backoff retry); it comes back with the
// object's next change, a policy change, or a remediation scan.
var ErrRejected = errors.New("refused by the super cluster; waiting for a change of the object")
