package pod

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// upwardFixture is a tenant Pod shop/web (in the tenant apiserver; in the tenant cache when
// cached) and its super Pod (in the super apiserver as live, in the super cache as cached).
type upwardFixture struct {
	c   *tenant.Cluster
	env *resources.Env
	tcs *fake.Clientset
}

func newUpwardFixture(t *testing.T, tenantPod *corev1.Pod, cached bool, live, inCache *corev1.Pod) *upwardFixture {
	t.Helper()
	tcs := fake.NewClientset(tenantPod)
	c := &tenant.Cluster{Name: "t1", UID: "tenant-uid", Client: tcs, Informers: informers.NewSharedInformerFactory(tcs, 0), Recorder: record.NewFakeRecorder(10)}
	if cached {
		mustAdd(t, c.Informers.Core().V1().Pods().Informer().GetIndexer(), tenantPod)
	}
	scs := fake.NewClientset(live)
	env := &resources.Env{Super: scs, SuperInformers: informers.NewSharedInformerFactory(scs, 0), SuperNodes: informers.NewSharedInformerFactory(scs, 0)}
	mustAdd(t, env.SuperInformers.Core().V1().Pods().Informer().GetIndexer(), inCache)
	return &upwardFixture{c: c, env: env, tcs: tcs}
}

func upwardPods(c *tenant.Cluster) (*corev1.Pod, *corev1.Pod) {
	tp := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "web-uid", ResourceVersion: "5"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue, 50)},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "c", RestartCount: 0}}}}
	sp := Desired(c, tp, resources.SuperNamespace(c, "shop"), nil)
	sp.UID, sp.ResourceVersion = "super-uid", "100"
	sp.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue, 10)},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "c", RestartCount: 3}}}
	return tp, sp
}

// A tenant Pod whose kubelet condition is newer than the super Pod's although the super cache
// is current (someone wrote it in the tenant) is not "super cache behind" forever: the live
// super Pod is read once, and its status copied.
func TestUpwardNewerTenantConditionIsNotRetriedForever(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "tenant-uid"}
	tp, sp := upwardPods(c)
	f := newUpwardFixture(t, tp, true, sp, sp)
	if err := reconcileUpward(context.Background(), f.env, f.c, "shop", "web"); err != nil {
		t.Fatalf("reconcile = %v, want the status copied", err)
	}
	got, _ := f.tcs.CoreV1().Pods("shop").Get(context.Background(), "web", metav1.GetOptions{})
	if got.Status.ContainerStatuses[0].RestartCount != 3 {
		t.Errorf("tenant restartCount = %d, want the super Pod's 3", got.Status.ContainerStatuses[0].RestartCount)
	}
}

// When the super cache is behind (a resume replaying the watch), the older cached status is
// not copied: the live super Pod is.
func TestUpwardCacheBehindCopiesTheLiveStatus(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "tenant-uid"}
	tp, live := upwardPods(c)
	live.Status.Conditions[0].LastTransitionTime = at(60)
	old := live.DeepCopy()
	old.ResourceVersion = "90"
	old.Status.Conditions[0] = cond(corev1.PodReady, corev1.ConditionFalse, 10)
	f := newUpwardFixture(t, tp, true, live, old)
	if err := reconcileUpward(context.Background(), f.env, f.c, "shop", "web"); err != nil {
		t.Fatalf("reconcile = %v", err)
	}
	got, _ := f.tcs.CoreV1().Pods("shop").Get(context.Background(), "web", metav1.GetOptions{})
	if c := findCondition(got.Status.Conditions, corev1.PodReady); c == nil || c.Status != corev1.ConditionTrue || !c.LastTransitionTime.Equal(&live.Status.Conditions[0].LastTransitionTime) {
		t.Errorf("tenant Ready = %+v, want the live super Pod's (True at 60)", c)
	}
}

// A super Pod whose tenant Pod is not in the tenant cache yet (a resume while the tenant watch
// replays) is retried, not dropped: nothing else would bring its status up.
func TestUpwardTenantCacheBehindIsRetried(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "tenant-uid"}
	tp, sp := upwardPods(c)
	f := newUpwardFixture(t, tp, false, sp, sp)
	err := reconcileUpward(context.Background(), f.env, f.c, "shop", "web")
	if !errors.Is(err, reconcile.ErrTenantCacheBehind) {
		t.Fatalf("reconcile = %v, want ErrTenantCacheBehind (retried)", err)
	}
	if err := f.tcs.CoreV1().Pods("shop").Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := reconcileUpward(context.Background(), f.env, f.c, "shop", "web"); err != nil {
		t.Fatalf("reconcile with the tenant Pod gone = %v, want nil", err)
	}
}
