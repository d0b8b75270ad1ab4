package pod

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

type podBounds struct {
	c             *tenant.Cluster
	env           *resources.Env
	super, tenant *fake.Clientset
	superNS       string
}

func newPodBounds(t *testing.T) *podBounds {
	t.Helper()
	tns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "app", UID: "tns-uid"}}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "app", UID: "pod-uid", ResourceVersion: "4"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	tenantCS := fake.NewClientset(tns, p)
	c := &tenant.Cluster{Name: "t1", UID: "uid-t1", Client: tenantCS, Informers: informers.NewSharedInformerFactory(tenantCS, 0),
		Recorder: record.NewFakeRecorder(100)}
	mustAdd(t, c.Informers.Core().V1().Namespaces().Informer().GetIndexer(), tns)
	mustAdd(t, c.Informers.Core().V1().Pods().Informer().GetIndexer(), p)
	superCS := fake.NewClientset()
	env := &resources.Env{Super: superCS, SuperInformers: informers.NewSharedInformerFactory(superCS, 0),
		SuperNodes: informers.NewSharedInformerFactory(superCS, 0)}
	env.SuperInformers.Core().V1().Namespaces().Informer()
	env.SuperInformers.Core().V1().Pods().Informer()
	admit.BoundsInformers(env)
	return &podBounds{c: c, env: env, super: superCS, tenant: tenantCS, superNS: resources.SuperNamespace(c, "app")}
}

func mustAdd(t *testing.T, idx interface{ Add(any) error }, obj any) {
	t.Helper()
	if err := idx.Add(obj); err != nil {
		t.Fatal(err)
	}
}

// syncCaches copies the super namespace and bounds into the super caches, the quota (when the
// policy gives the namespace one) computed with nothing used.
func (f *podBounds) syncCaches(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	ns, err := f.super.CoreV1().Namespaces().Get(ctx, f.superNS, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, f.env.SuperInformers.Core().V1().Namespaces().Informer().GetIndexer(), ns)
	if lr, err := f.super.CoreV1().LimitRanges(f.superNS).Get(ctx, admit.LimitRangeName, metav1.GetOptions{}); err == nil {
		mustAdd(t, f.env.SuperInformers.Core().V1().LimitRanges().Informer().GetIndexer(), lr)
	}
	rq, err := f.super.CoreV1().ResourceQuotas(f.superNS).Get(ctx, admit.QuotaName, metav1.GetOptions{})
	if err != nil {
		return
	}
	rq.Status.Hard, rq.Status.Used = resources.CopyResourceList(rq.Spec.Hard), corev1.ResourceList{}
	for k := range rq.Spec.Hard {
		rq.Status.Used[k] = resource.MustParse("0")
	}
	mustAdd(t, f.env.SuperInformers.Core().V1().ResourceQuotas().Informer().GetIndexer(), rq)
}

func (f *podBounds) superCreates() []string {
	var out []string
	for _, a := range f.super.Actions() {
		if a.GetVerb() == "create" {
			out = append(out, a.GetResource().Resource)
		}
	}
	return out
}

// A tenant Pod in a new namespace reaches the super cluster only after the namespace's
// ResourceQuota (the backstop) exists and is computed: one created before the quota is in
// force escapes it. No LimitRange is created by default (it would change the tenant's Pods).
func TestPodIsCreatedAfterTheBounds(t *testing.T) {
	ctx := context.Background()
	f := newPodBounds(t)
	if err := reconcileDownward(ctx, f.env, f.c, "app", "web"); err == nil {
		t.Fatal("reconcile succeeded before the quota was in force")
	}
	if got := strings.Join(f.superCreates(), ","); got != "namespaces,resourcequotas" {
		t.Fatalf("super creates = %s, want namespaces,resourcequotas (and no Pod yet)", got)
	}
	f.syncCaches(t)
	if err := reconcileDownward(ctx, f.env, f.c, "app", "web"); err != nil {
		t.Fatalf("reconcile with the bounds in force: %v", err)
	}
	if got := f.superCreates(); got[len(got)-1] != "pods" {
		t.Errorf("super creates = %v, want the Pod last", got)
	}
}

// A Pod whose super create the super cluster's quota admission refuses (403 "exceeded quota":
// a ResourceQuota of the provider's in the super namespace; the backstop counts no Pods) gets
// PodScheduled=False (QuotaExceeded) once however often it is retried, and the request is
// retried (an error wrapping ErrNoQuotaRoom).
func TestPodOverQuotaGetsQuotaExceeded(t *testing.T) {
	ctx := context.Background()
	f := newPodBounds(t)
	_ = reconcileDownward(ctx, f.env, f.c, "app", "web")
	f.syncCaches(t)
	f.super.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "web",
			errors.New("exceeded quota: provider-pods, requested: pods=1, used: pods=10, limited: pods=10"))
	})
	f.tenant.ClearActions()
	for range 3 {
		if err := reconcileDownward(ctx, f.env, f.c, "app", "web"); !errors.Is(err, admit.ErrNoQuotaRoom) {
			t.Fatalf("reconcile = %v, want ErrNoQuotaRoom", err)
		}
	}
	var patches int
	for _, a := range f.tenant.Actions() {
		switch {
		case a.GetVerb() == "patch" && a.GetSubresource() == "status":
			patches++
		}
	}
	if patches != 1 {
		t.Errorf("status patches = %d, want 1 (PodScheduled=False once)", patches)
	}
	live, _ := f.tenant.CoreV1().Pods("app").Get(ctx, "web", metav1.GetOptions{})
	var found bool
	for _, cond := range live.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == ReasonQuotaExceeded && strings.Contains(cond.Message, "quota") {
			found = true
		}
	}
	if !found {
		t.Errorf("tenant Pod conditions = %+v, want PodScheduled=False QuotaExceeded", live.Status.Conditions)
	}
	// The Event carries the condition's reason (one reason per refusal kind on both).
	ev := restest.Drain(f.c.Recorder.(*record.FakeRecorder))
	if want := "Warning " + ReasonQuotaExceeded + " "; len(ev) != 1 || !strings.HasPrefix(ev[0], want) {
		t.Errorf("events = %q, want one starting %q", ev, want)
	}
}
