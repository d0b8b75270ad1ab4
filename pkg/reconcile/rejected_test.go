package reconcile

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// TestRejected: refusals that do not change by themselves wrap resources.ErrRejected (no timer
// retry); quota, a terminating namespace, the syncer's own RBAC, other 403s and server errors
// are retried. The messages are the apiserver's (k8s.io/apiserver admission plugins).
func TestRejected(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	terminating := apierrors.NewForbidden(pods, "p", errors.New("unable to create new content in namespace x because it is being terminated"))
	terminating.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause, Message: "namespace x is being terminated", Field: "metadata.namespace"}}
	webhook := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusBadRequest,
		Message: `admission webhook "deny.example.com" denied the request: no privileged Pods`}}
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"pod security":                {apierrors.NewForbidden(pods, "p", errors.New(`violates PodSecurity "restricted:latest": privileged`)), true},
		"validating admission policy": {apierrors.NewForbidden(pods, "p", errors.New(`ValidatingAdmissionPolicy 'no-hostpath' with binding 'b' denied request: hostPath`)), true},
		"webhook":                     {webhook, true},
		"limit range max":             {apierrors.NewForbidden(pods, "p", errors.New(`maximum cpu usage per Container is 2, but limit is 4`)), true},
		"limit range ratio":           {apierrors.NewForbidden(pods, "p", errors.New(`[memory max limit to request ratio per Pod is 2, but provided ratio is 4.000000]`)), true},
		"invalid":                     {apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "p", field.ErrorList{field.Required(field.NewPath("spec"), "")}), true},
		"bad request":                 {apierrors.NewBadRequest("bad"), true},
		"too large":                   {apierrors.NewRequestEntityTooLargeError("limit is 3145728"), true},
		"quota":                       {apierrors.NewForbidden(pods, "p", errors.New("exceeded quota: q, requested: pods=1, used: pods=10, limited: pods=10")), false},
		"terminating":                 {terminating, false},
		"rbac":                        {apierrors.NewForbidden(pods, "p", errors.New(`User "system:serviceaccount:vc:vc-syncer" cannot create resource "pods" in API group "" in the namespace "x"`)), false},
		"service account":             {apierrors.NewForbidden(pods, "p", errors.New(`error looking up service account x/default: serviceaccount "default" not found`)), false},
		"conflict":                    {apierrors.NewConflict(pods, "p", errors.New("the object has been modified")), false},
		"timeout":                     {apierrors.NewServerTimeout(pods, "create", 1), false},
		"webhook unreachable":         {apierrors.NewInternalError(errors.New(`failed calling webhook "deny.example.com": context deadline exceeded`)), false},
	} {
		t.Run(name, func(t *testing.T) {
			c := &tenant.Cluster{Name: "t", Recorder: record.NewFakeRecorder(10)}
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
			err := Report(c, p, resources.KindPod, "create", fmt.Errorf("wrapped: %w", tc.err))
			if got := errors.Is(err, resources.ErrRejected); got != tc.want {
				t.Errorf("Report(%v) wraps ErrRejected: %v, want %v", tc.err, got, tc.want)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("Report does not wrap the API error")
			}
		})
	}
}
