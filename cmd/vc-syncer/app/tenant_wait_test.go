package app

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

func TestWaitTenantRunning(t *testing.T) {
	tenantWith := func(phase tenancyv1alpha1.TenantPhase, conds ...metav1.Condition) *tenancyv1alpha1.Tenant {
		return &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "t1"},
			Status: tenancyv1alpha1.TenantStatus{Phase: phase, Conditions: conds}}
	}
	running := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(tenantWith(tenancyv1alpha1.TenantRunning)).Build()
	var out bytes.Buffer
	if err := WaitTenantRunning(context.Background(), running, "t1", time.Second, &out); err != nil || !strings.Contains(out.String(), "Running") {
		t.Errorf("running tenant: err %v, output %q", err, out.String())
	}
	denied := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(tenantWith(tenancyv1alpha1.TenantUnreachable,
		metav1.Condition{Type: tenancyv1alpha1.ConditionKubeconfigValid, Status: metav1.ConditionTrue},
		metav1.Condition{Type: tenancyv1alpha1.ConditionConnected, Status: metav1.ConditionFalse, Reason: "Unauthorized", Message: "token expired"},
	)).Build()
	err := WaitTenantRunning(context.Background(), denied, "t1", 700*time.Millisecond, &out)
	if err == nil || !strings.Contains(err.Error(), "Connected=False (Unauthorized): token expired") {
		t.Errorf("unreachable tenant: err %v, want the Connected condition", err)
	}
}

// A problem the syncer reported after the wait began ends it at once; one left from an earlier
// registration, or a Secret the syncer's cache has not seen yet, does not.
func TestWaitTenantRunningReturnsAtTerminalCondition(t *testing.T) {
	now, old := metav1.Now(), metav1.NewTime(time.Now().Add(-time.Hour))
	cases := []struct {
		name     string
		cond     metav1.Condition
		terminal bool
	}{
		{"refused credentials", metav1.Condition{Type: tenancyv1alpha1.ConditionConnected, Status: metav1.ConditionFalse, Reason: "Unauthorized", Message: "token expired", LastTransitionTime: now}, true},
		{"unreachable", metav1.Condition{Type: tenancyv1alpha1.ConditionConnected, Status: metav1.ConditionFalse, Reason: "Unreachable", Message: "connection refused", LastTransitionTime: now}, true},
		{"duplicate", metav1.Condition{Type: tenancyv1alpha1.ConditionConnected, Status: metav1.ConditionFalse, Reason: "DuplicateControlPlane", Message: "Tenant a already syncs it", LastTransitionTime: now}, true},
		{"bad kubeconfig", metav1.Condition{Type: tenancyv1alpha1.ConditionKubeconfigValid, Status: metav1.ConditionFalse, Reason: "InlineCredentialsRequired", Message: "tokenFile", LastTransitionTime: now}, true},
		{"stale refusal", metav1.Condition{Type: tenancyv1alpha1.ConditionConnected, Status: metav1.ConditionFalse, Reason: "Unauthorized", Message: "old", LastTransitionTime: old}, false},
		{"secret not cached yet", metav1.Condition{Type: tenancyv1alpha1.ConditionKubeconfigValid, Status: metav1.ConditionFalse, Reason: "SecretNotFound", LastTransitionTime: now}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "t1"},
				Status: tenancyv1alpha1.TenantStatus{Phase: tenancyv1alpha1.TenantUnreachable, Conditions: []metav1.Condition{tc.cond}}}
			// A condition "now" is reported after the wait began: the syncer sets it when the
			// wait first reads the Tenant (a time taken before the wait could lie in an
			// earlier second than the wait's start on a loaded machine).
			fresh := tc.cond.LastTransitionTime == now
			c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(obj).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
					if err := cl.Get(ctx, key, o, opts...); err != nil {
						return err
					}
					if tn, ok := o.(*tenancyv1alpha1.Tenant); ok && fresh {
						cond := tc.cond
						cond.LastTransitionTime = metav1.Now()
						tn.Status.Conditions = []metav1.Condition{cond}
					}
					return nil
				}}).Build()
			// The wait's own timeout (1.5 s) is what separates the cases: a terminal condition
			// returns the "is not Running:" error, a timeout the "after 1.5s" one.
			err := WaitTenantRunning(context.Background(), c, "t1", 1500*time.Millisecond, &bytes.Buffer{})
			if err == nil {
				t.Fatal("no error for a tenant that is not Running")
			}
			timedOut := strings.Contains(err.Error(), "after 1.5s")
			if timedOut == tc.terminal {
				t.Errorf("terminal=%v but err = %v", tc.terminal, err)
			}
			if tc.terminal && !strings.Contains(err.Error(), tc.cond.Reason) {
				t.Errorf("err %v does not name reason %s", err, tc.cond.Reason)
			}
		})
	}
}

// Registering a name whose Tenant is still terminating waits for it to be gone and creates a
// new Tenant, instead of updating the old one, which would disappear with its finalizer.
func TestAddTenantWaitsForTerminatingTenant(t *testing.T) {
	old := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "t1", UID: "old-uid", Finalizers: []string{"tenancy.vcsyncer.io/cleanup"}}}
	// read is closed at the first read of Tenant t1: tenant add has seen it terminating.
	read := make(chan struct{})
	var readOnce sync.Once
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(old).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*tenancyv1alpha1.Tenant); ok && key.Name == "t1" {
				readOnce.Do(func() { close(read) })
			}
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	ctx := context.Background()
	if err := c.Delete(ctx, old); err != nil { // sets deletionTimestamp; the finalizer keeps it
		t.Fatal(err)
	}
	finished := make(chan error, 1)
	go func() {
		<-read // the syncer finishes its cleanup after tenant add found the Tenant terminating
		cur := &tenancyv1alpha1.Tenant{}
		if err := c.Get(ctx, client.ObjectKey{Name: "t1"}, cur); err != nil {
			finished <- err
			return
		}
		cur.Finalizers = nil
		finished <- c.Update(ctx, cur)
	}()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := AddTenant(wctx, c, "vc-syncer", "t1", []byte("kubeconfig"), 1); err != nil {
		t.Fatal(err)
	}
	if err := <-finished; err != nil {
		t.Fatal(err)
	}
	got := &tenancyv1alpha1.Tenant{}
	if err := c.Get(ctx, client.ObjectKey{Name: "t1"}, got); err != nil {
		t.Fatalf("no Tenant after tenant add: %v", err)
	}
	if got.DeletionTimestamp != nil || got.UID == "old-uid" {
		t.Errorf("tenant add left the terminating Tenant (uid %s, deleting %v)", got.UID, got.DeletionTimestamp)
	}
}

// `tenant add` says that it waited for the old Tenant, and gives up with an error that says why
// when the old Tenant outlives the wait.
func TestWaitTerminatingTenantGoneReports(t *testing.T) {
	old := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "t1", Finalizers: []string{"tenancy.vcsyncer.io/cleanup"}}}
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(old).Build()
	if err := c.Delete(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := waitTerminatingTenantGone(ctx, c, "t1", &out)
	if err == nil || !strings.Contains(err.Error(), "still terminating") || !strings.Contains(err.Error(), "nothing was registered") {
		t.Errorf("err = %v", err)
	}
	if !strings.Contains(out.String(), "still terminating") {
		t.Errorf("output %q does not say it waits", out.String())
	}
}
