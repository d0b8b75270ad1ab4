package pod

import (
	"context"
	"errors"
	"io"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/vcsyncer/syncer/pkg/admission"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
)

// A super create whose outcome is unknown (it timed out, or the connection broke, after the
// apiserver may have written the Pod) keeps the Pod's budget reservation, as a successful
// one does, until the super informer delivers the Pod or the reservation's TTL ends: returning
// it would let the tenant's next Pods take room the maybe-written one holds. A create the
// apiserver refused returns it.
func TestSuperCreateOfUnknownOutcomeKeepsTheBudgetReservation(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	for _, c := range []struct {
		name string
		err  error
		kept bool
	}{
		{"timeout", apierrors.NewTimeoutError("request did not complete within the allowed duration", 0), true},
		{"server timeout", apierrors.NewServerTimeout(pods, "create", 0), true},
		{"internal error", apierrors.NewInternalError(errors.New("etcdserver: request timed out")), true},
		{"broken connection", io.ErrUnexpectedEOF, true},
		{"deadline", context.DeadlineExceeded, true},
		{"forbidden", apierrors.NewForbidden(pods, "web", errors.New("no")), false},
		{"invalid", apierrors.NewBadRequest("bad"), false},
		{"too many requests", apierrors.NewTooManyRequests("later", 1), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			f := newPodBounds(t)
			f.c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{
				Quota: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2"), corev1.ResourceServices: resource.MustParse("10")}}}))
			b := admission.NewBudget(admission.BudgetOptions[string]{Wake: func(string) {}})
			f.env.Budget = restest.Budget(b)
			_ = reconcileDownward(ctx, f.env, f.c, "app", "web") // the namespace and its quota
			f.syncCaches(t)
			f.super.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, c.err
			})
			if err := reconcileDownward(ctx, f.env, f.c, "app", "web"); err == nil {
				t.Fatal("reconcile = nil, want the create's error")
			}
			got := b.Used("t1")[corev1.ResourcePods]
			want := "0"
			if c.kept {
				want = "1"
			}
			if got.String() != want {
				t.Errorf("used pods %s after a create that failed with %v, want %s", got.String(), c.err, want)
			}
		})
	}
}
