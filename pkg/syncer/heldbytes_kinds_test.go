package syncer

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// bigService returns tenant Service app/name with n bytes of annotations at resourceVersion rv.
func bigService(name, rv string, n int) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: name, UID: types.UID("uid-" + name), ResourceVersion: rv,
		Annotations: map[string]string{"note": strings.Repeat("s", n)}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Port: 80}}}}
}

// Kinds other than Secrets and ConfigMaps are held out and readmitted the same way: a Service
// and a Pod beyond limits.maxCachedBytes are stubs, are read from the tenant apiserver once
// the cap is raised, and are in the cache in full (the Pod in its compact form) and enqueued.
func TestHeldOutServiceAndPodAreReadmitted(t *testing.T) {
	ctx := context.Background()
	s, c := capFixture(t, "held-kinds", 100)
	heldPolicy(c, "1Ki")
	svcIdx := s.resources[resources.KindService].TenantInformer(c).GetIndexer()
	podIdx := s.resources[resources.KindPod].TenantInformer(c).GetIndexer()
	for _, name := range []string{"a", "b"} {
		o := bigService(name, "1", 700)
		if _, err := c.Client.CoreV1().Services("app").Create(ctx, o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := svcIdx.Add(c.Readmit(o)); err != nil {
			t.Fatal(err)
		}
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "p", UID: "uid-p", ResourceVersion: "1",
		Annotations: map[string]string{"note": strings.Repeat("p", 700)}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	if _, err := c.Client.CoreV1().Pods("app").Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := podIdx.Add(c.Readmit(p.DeepCopy())); err != nil {
		t.Fatal(err)
	}
	if cached, _, _ := svcIdx.GetByKey("app/b"); !tenant.IsHeldOut(cached) {
		t.Fatal("b fits beside a in 1Ki: the fixture is wrong")
	}
	if cached, _, _ := podIdx.GetByKey("app/p"); !tenant.IsHeldOut(cached) {
		t.Fatalf("the Pod fits beside a in 1Ki: the fixture is wrong (%T)", cached)
	}
	heldPolicy(c, "8Ki")
	before := s.down.Size()
	s.gate.ReadmitOnce(c)
	if cached, _, _ := svcIdx.GetByKey("app/b"); tenant.IsHeldOut(cached) || len(cached.(*corev1.Service).Annotations["note"]) != 700 {
		t.Fatalf("Service b is not in the cache in full after the cap was raised: %+v", cached)
	}
	cached, _, _ := podIdx.GetByKey("app/p")
	if _, ok := cached.(*podcache.Pod); !ok || tenant.IsHeldOut(cached) {
		t.Fatalf("Pod p is not in the cache in full, in its compact form: %T held out %v", cached, tenant.IsHeldOut(cached))
	}
	if _, out := c.Held.Totals(); out != 0 {
		t.Errorf("%d objects still held out", out)
	}
	if got := s.down.Size() - before; got < 2 {
		t.Errorf("%d downward requests enqueued, want the Service and the Pod", got)
	}
}

// A readmission never puts an older copy over a newer version the informer delivered: when a
// newer version of the held-out object passed the informers' transform after the stub (here
// a newer stub), ReadmitHeldOut writes nothing.
func TestReadmissionNeverReplacesANewerVersion(t *testing.T) {
	_, c := capFixture(t, "held-race", 100)
	heldPolicy(c, "2Ki")
	_ = c.Readmit(bigService("a", "1", 700))     // held (about 1.5 KB on the heap)
	stub := c.Readmit(bigService("b", "1", 700)) // held out at version 1
	if !tenant.IsHeldOut(stub) {
		t.Fatal("b fits beside a in 2Ki: the fixture is wrong")
	}
	out := c.Held.Fitting(nil, -1)
	if len(out) != 1 {
		t.Fatalf("held out: %+v", out)
	}
	o := out[0]
	// Version 2 arrives through the informer (its transform): a stub again.
	if !tenant.IsHeldOut(c.Readmit(bigService("b", "2", 900))) {
		t.Fatal("version 2 fits: the fixture is wrong")
	}
	heldPolicy(c, "8Ki")
	wrote := false
	if c.ReadmitHeldOut(o, bigService("b", "1", 700), func(any) error { wrote = true; return nil }) || wrote {
		t.Fatal("version 1, read before version 2 was delivered, was written into the cache")
	}
	// Readmitting the current stub (version 2) writes it.
	cur := c.Held.Fitting(nil, -1)
	if len(cur) != 1 || cur[0].ResourceVersion != "2" {
		t.Fatalf("held out: %+v, want b at version 2", cur)
	}
	var got any
	if !c.ReadmitHeldOut(cur[0], bigService("b", "2", 900), func(obj any) error { got = obj; return nil }) {
		t.Fatal("the current version was not readmitted")
	}
	if svc, ok := got.(*corev1.Service); !ok || svc.ResourceVersion != "2" || tenant.IsHeldOut(svc) {
		t.Fatalf("wrote %+v", got)
	}
}
