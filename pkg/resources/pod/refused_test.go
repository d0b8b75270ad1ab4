package pod

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/admit"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// A Pod the super cluster refuses for good (Pod Security here) gets PodScheduled=False with
// reason SuperClusterRejected and the apiserver's message once; the same version is not sent
// again (a re-enqueue, a remediation scan); a new version of the tenant Pod is.
func TestReconcileSuperRejectedPod(t *testing.T) {
	ctx := context.Background()
	p := attackPod()
	p.Spec.Volumes = p.Spec.Volumes[1:] // no token volume: no TokenRequest in this test
	p.ResourceVersion = "10"
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "ns-uid"}}
	tcs := fake.NewClientset(ns, p)
	scs := fake.NewClientset()
	psa := `pods "web" is forbidden: violates PodSecurity "baseline:latest": privileged (container "app" must not set securityContext.privileged=true)`
	creates := 0
	scs.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		creates++
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "web", errors.New(strings.TrimPrefix(psa, `pods "web" is forbidden: `)))
	})
	rec := record.NewFakeRecorder(10)
	c := &tenant.Cluster{Name: "rejected-pod-tenant", UID: "tenant-uid", Client: tcs, Informers: informers.NewSharedInformerFactory(tcs, 0), Recorder: rec}
	c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{Quota: corev1.ResourceList{}}}))
	env := &resources.Env{Super: scs, SuperInformers: informers.NewSharedInformerFactory(scs, 0), SuperNodes: informers.NewSharedInformerFactory(scs, 0)}
	env.SuperInformers.Core().V1().Pods().Informer()
	env.SuperInformers.Core().V1().Namespaces().Informer()
	env.SuperInformers.Core().V1().ServiceAccounts().Informer()
	env.SuperNodes.Core().V1().Nodes().Informer()
	tpods := c.Informers.Core().V1().Pods().Informer().GetIndexer()
	mustAdd(t, c.Informers.Core().V1().Namespaces().Informer().GetIndexer(), ns)
	mustAdd(t, tpods, p)

	err := reconcileDownward(ctx, env, c, "shop", "web")
	if !errors.Is(err, resources.ErrRejected) {
		t.Fatalf("reconcile = %v, want ErrRejected (no timer retry)", err)
	}
	live, err := tcs.CoreV1().Pods("shop").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cond := scheduledCondition(live)
	if cond == nil || cond.Status != corev1.ConditionFalse || cond.Reason != ReasonSuperClusterRejected || !strings.Contains(cond.Message, "violates PodSecurity") {
		t.Fatalf("PodScheduled = %+v, want False/SuperClusterRejected with the apiserver's message", cond)
	}
	// One reason on both: the Event's is the condition's.
	if e := <-rec.Events; !strings.HasPrefix(e, "Warning "+ReasonSuperClusterRejected+" ") || !strings.Contains(e, "violates PodSecurity") {
		t.Errorf("Event %q, want Warning %s with the apiserver's message", e, ReasonSuperClusterRejected)
	}

	// The informer brings the status write back; a re-enqueue of that version sends nothing,
	// and a remediation scan skips it.
	if err := tpods.Update(live); err != nil {
		t.Fatal(err)
	}
	if !admit.IsRefused(c, resources.KindPod, live) {
		t.Error("IsRefused false: a remediation scan would send the Pod again")
	}
	tcs.ClearActions()
	for range 3 {
		if err := reconcileDownward(ctx, env, c, "shop", "web"); err != nil {
			t.Fatalf("reconcile of the refused version = %v, want nil", err)
		}
	}
	if creates != 1 {
		t.Errorf("super Pod creates = %d, want 1", creates)
	}
	for _, a := range tcs.Actions() {
		if a.GetVerb() != "get" {
			t.Errorf("tenant written again: %s %s/%s", a.GetVerb(), a.GetResource().Resource, a.GetSubresource())
		}
	}
	select {
	case e := <-rec.Events:
		t.Errorf("second Event %q", e)
	default:
	}

	// The tenant changes the Pod: tried once more.
	live = live.DeepCopy()
	live.ResourceVersion, live.Labels = "12", map[string]string{"v": "2"}
	if err := tpods.Update(live); err != nil {
		t.Fatal(err)
	}
	if err := reconcileDownward(ctx, env, c, "shop", "web"); !errors.Is(err, resources.ErrRejected) {
		t.Fatalf("reconcile of a new version = %v, want ErrRejected", err)
	}
	if creates != 2 {
		t.Errorf("super Pod creates = %d, want 2", creates)
	}
}

func TestTruncateMessage(t *testing.T) {
	if got := truncateMessage("short", 10); got != "short" {
		t.Errorf("%q", got)
	}
	if got := truncateMessage("ééééé", 7); got != "éé..." {
		t.Errorf("%q", got)
	}
}
