package admit

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/admission"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// cached returns p in the form the informers cache it.
func cached(t *testing.T, p *corev1.Pod) *podcache.Pod {
	t.Helper()
	c, err := podcache.New(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A super Pod's charge in its tenant's budget is read from cached Pods as from plain ones.
func TestSuperPodChargeReadsCachedPods(t *testing.T) {
	const tn = "cachedpods"
	superPod := func(node string, st corev1.PodStatus, ann map[string]string) *podcache.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "t-app", Name: "web", Annotations: ann},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "nginx",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}}}},
			Status: st}
		conversion.Stamp(&p.ObjectMeta, conversion.Owner{Tenant: tn, TenantUID: "uid-" + tn, Namespace: "app", Name: "web", UID: "u1"})
		return cached(t, p)
	}
	bound := superPod("node-1", corev1.PodStatus{}, nil)
	recorded := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	withCharge := superPod("node-1", corev1.PodStatus{Phase: corev1.PodRunning}, map[string]string{policy.AnnotationCharge: policy.FormatCharge(recorded)})
	if got := superPodCharge(withCharge); got.Cpu().Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("charge of a cached super Pod with a recorded charge = %v, want cpu 2", got)
	}
	if got := superPodCharge(bound)[corev1.ResourceRequestsCPU]; got.Cmp(resource.MustParse("250m")) != 0 {
		t.Errorf("requests.cpu charged for a cached super Pod without a recorded charge = %v, want its spec's 250m", got.String())
	}
	if got := superPodCharge(superPod("node-1", corev1.PodStatus{Phase: corev1.PodSucceeded}, nil)); got != nil {
		t.Errorf("charge of an ended super Pod = %v, want none", got)
	}
}

// superPodsOnly is the Pod kind's super side, enough for CountTenant.
type superPodsOnly struct{ inf cache.SharedIndexInformer }

func (superPodsOnly) Kind() resources.Kind                                     { return resources.KindPod }
func (superPodsOnly) TenantInformer(*tenant.Cluster) cache.SharedIndexInformer { return nil }
func (s superPodsOnly) SuperInformer(*resources.Env) cache.SharedIndexInformer { return s.inf }
func (superPodsOnly) Downward(context.Context, *resources.Env, *tenant.Cluster, string, string) error {
	return nil
}
func (superPodsOnly) Upward(context.Context, *resources.Env, *tenant.Cluster, string, string) error {
	return nil
}

// CountTenant counts the super Pods of one tenant that the super cache holds, and only that
// tenant's: a tenant that joins a shard is counted before any of its Pods is admitted.
func TestCountTenantCountsItsCachedSuperObjects(t *testing.T) {
	inf := informers.NewSharedInformerFactory(fake.NewClientset(), 0).Core().V1().Pods().Informer()
	superPod := func(tn, name string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: tn + "-app", Name: name,
			Annotations: map[string]string{policy.AnnotationCharge: policy.FormatCharge(corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")})}},
			Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		conversion.Stamp(&p.ObjectMeta, conversion.Owner{Tenant: tn, TenantUID: "uid-" + tn, Namespace: "app", Name: name, UID: "u-" + name})
		return p
	}
	for _, p := range []*corev1.Pod{superPod("t1", "a"), superPod("t1", "b"), superPod("t2", "c"),
		{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "not-the-syncers"}}} {
		if err := inf.GetStore().Add(cached(t, p)); err != nil {
			t.Fatal(err)
		}
	}
	b := admission.NewBudget(admission.BudgetOptions[resources.Request]{Wake: func(resources.Request) {}})
	synced := map[resources.Kind]resources.Resource{resources.KindPod: superPodsOnly{inf}}
	if n := CountTenant(&resources.Env{}, synced, b, "t1"); n != 2 {
		t.Errorf("CountTenant counted %d objects, want t1's 2", n)
	}
	if got := b.Used("t1")[corev1.ResourcePods]; got.Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("t1 uses %s pods, want 2", got.String())
	}
	if got := b.Used("t2"); len(got) != 0 {
		t.Errorf("t2 counted %v by t1's count, want nothing", got)
	}
	// Counting again changes nothing (the handlers' later Observe calls are the same).
	CountTenant(&resources.Env{}, synced, b, "t1")
	if got := b.Used("t1")[corev1.ResourcePods]; got.Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("t1 uses %s pods after counting twice, want 2", got.String())
	}
}

// racyInformer's store runs afterList once its List has been taken: a change the informer
// makes (and hands to its handlers) while CountTenant works through that list.
type racyInformer struct {
	cache.SharedIndexInformer
	afterList func()
}

type racyStore struct {
	cache.Store
	afterList func()
}

func (r racyInformer) GetStore() cache.Store {
	return racyStore{r.SharedIndexInformer.GetStore(), r.afterList}
}

func (s racyStore) List() []any {
	l := s.Store.List()
	s.afterList()
	return l
}

// A super Pod deleted (and its deletion handed to the handlers) after CountTenant listed the
// cache is not counted back in from the stale list: the look-up after each observation sees it
// gone.
func TestCountTenantDoesNotUndoALaterDeletion(t *testing.T) {
	inf := informers.NewSharedInformerFactory(fake.NewClientset(), 0).Core().V1().Pods().Informer()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "t1-app", Name: "gone",
		Annotations: map[string]string{policy.AnnotationCharge: policy.FormatCharge(corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")})}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	conversion.Stamp(&p.ObjectMeta, conversion.Owner{Tenant: "t1", TenantUID: "uid-t1", Namespace: "app", Name: "gone", UID: "u-gone"})
	cp := cached(t, p)
	if err := inf.GetStore().Add(cp); err != nil {
		t.Fatal(err)
	}
	b := admission.NewBudget(admission.BudgetOptions[resources.Request]{Wake: func(resources.Request) {}})
	racy := racyInformer{inf, func() {
		// The informer's deletion: the cache first, then the handler.
		if err := inf.GetStore().Delete(cp); err != nil {
			t.Error(err)
		}
		b.Observe("t1", resources.BudgetKey(resources.KindPod, "t1-app", "gone"), nil)
	}}
	CountTenant(&resources.Env{}, map[resources.Kind]resources.Resource{resources.KindPod: superPodsOnly{racy}}, b, "t1")
	if got := b.Used("t1"); len(got) != 0 {
		t.Errorf("t1 uses %v after its only Pod was deleted while it was counted, want nothing", got)
	}
}
