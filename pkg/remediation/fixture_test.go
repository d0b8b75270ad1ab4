package remediation

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/configmap"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// The fixture runs the Scanner on real informer stores: informers over empty fake clientsets
// are started and synced, then objects are put into their indexers directly (no watch events),
// which is what the scanner reads.

type recorded struct {
	req    resources.Request
	upward bool
}

type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

func (r *recorder) Requeue(req resources.Request, upward bool) {
	r.mu.Lock()
	r.reqs = append(r.reqs, recorded{req, upward})
	r.mu.Unlock()
}

func (r *recorder) take() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

type fakeTenants map[string]*tenant.Cluster

func (f fakeTenants) Names() []string {
	var out []string
	for n := range f {
		out = append(out, n)
	}
	return out
}

func (f fakeTenants) Get(n string) (*tenant.Cluster, bool) { c, ok := f[n]; return c, ok }

type fixture struct {
	env     *resources.Env
	tenants fakeTenants
	ready   map[string]bool // tenant name → TenantReady answer
	q       *recorder
	sc      *Scanner
	res     []resources.Resource
	ctx     context.Context
}

var kinds = []resources.Resource{pod.Resource, configmap.Resource}

func newFixture(t testing.TB) *fixture {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	superCS := fake.NewClientset()
	env := &resources.Env{
		Super:          superCS,
		SuperInformers: informers.NewSharedInformerFactory(superCS, 0),
		SuperNodes:     informers.NewSharedInformerFactory(superCS, 0),
	}
	for _, r := range kinds {
		r.SuperInformer(env)
	}
	env.SuperNodes.Core().V1().Nodes().Informer()
	env.SuperInformers.Start(ctx.Done())
	env.SuperNodes.Start(ctx.Done())
	env.SuperInformers.WaitForCacheSync(ctx.Done())
	env.SuperNodes.WaitForCacheSync(ctx.Done())
	f := &fixture{env: env, tenants: fakeTenants{}, ready: map[string]bool{}, q: &recorder{}, res: kinds, ctx: ctx}
	sc, err := New(Options{
		Interval: time.Minute, Env: env, Resources: kinds, Tenants: f.tenants, Queue: f.q,
		TenantReady: func(c *tenant.Cluster) (bool, string) {
			if f.ready[c.Name] {
				return true, ""
			}
			return false, SkipTenantNotSynced
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.sc = sc
	return f
}

// addTenant registers a tenant Cluster; started reports whether its informers are started
// (and synced) — a Cluster whose informers never listed has caches that must not be trusted.
func (f *fixture) addTenant(name string, ready, started bool) *tenant.Cluster {
	cs := fake.NewClientset()
	c := &tenant.Cluster{Name: name, UID: "uid-" + name, Client: cs, Informers: informers.NewSharedInformerFactory(cs, 0)}
	for _, r := range f.res {
		r.TenantInformer(c)
	}
	if started {
		c.Informers.Start(f.ctx.Done())
		c.Informers.WaitForCacheSync(f.ctx.Done())
	}
	f.tenants[name] = c
	f.ready[name] = ready
	return c
}

func (f *fixture) tenantStore(c *tenant.Cluster, r resources.Resource) cache.Indexer {
	return r.TenantInformer(c).GetIndexer()
}

func (f *fixture) superStore(r resources.Resource) cache.Indexer {
	return r.SuperInformer(f.env).GetIndexer()
}

func mustAdd(t testing.TB, s cache.Store, obj any) {
	t.Helper()
	if err := s.Add(obj); err != nil {
		t.Fatal(err)
	}
}

// tenantPod returns a tenant Pod of namespace app, bound to node n1, Running.
func tenantPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "app", UID: types.UID("t-" + name), ResourceVersion: "5",
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "x"},
		},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "nginx:1"}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.0.0.1", HostIP: "192.168.0.1", QOSClass: corev1.PodQOSBestEffort,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue},
			},
		},
	}
}

// superPodOf returns the super copy of tenant Pod tp of tenant c as the downward reconcile
// writes it (pod.Desired), scheduled to the same node with the same status.
func superPodOf(c *tenant.Cluster, tp *corev1.Pod) *corev1.Pod {
	sp := pod.Desired(c, tp, resources.SuperNamespace(c, tp.Namespace), nil)
	sp.UID = types.UID("s-" + string(tp.UID))
	sp.ResourceVersion = "100"
	sp.Spec.NodeName = tp.Spec.NodeName
	sp.Status = *tp.Status.DeepCopy()
	return sp
}

func tenantConfigMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "app", UID: types.UID("t-" + name), ResourceVersion: "7"},
		Data:       map[string]string{"k": "v"},
	}
}

func superConfigMapOf(c *tenant.Cluster, tc *corev1.ConfigMap) *corev1.ConfigMap {
	sc := configmap.Desired(nil, c, tc, resources.SuperNamespace(c, tc.Namespace), nil)
	sc.UID = types.UID("s-" + string(tc.UID))
	sc.ResourceVersion = "200"
	return sc
}

func req(c *tenant.Cluster, kind resources.Kind, name string) resources.Request {
	return resources.Request{Tenant: c.Name, Kind: kind, Namespace: "app", Name: name}
}

func (r recorded) String() string { return fmt.Sprintf("%s upward=%v", r.req, r.upward) }
