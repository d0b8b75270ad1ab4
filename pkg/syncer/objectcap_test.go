package syncer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/admit"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/configmap"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// capFixture: a Syncer on a fake super cluster and a tenant whose policy caps each kind at
// maxObjects objects (and sets no quota).
func capFixture(t *testing.T, name string, maxObjects int32) (*Syncer, *tenant.Cluster) {
	t.Helper()
	s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	tenantCS := fake.NewClientset()
	c := &tenant.Cluster{Name: name, UID: "uid-" + name, Client: tenantCS,
		Informers: informers.NewSharedInformerFactory(tenantCS, 0), Recorder: record.NewFakeRecorder(1000)}
	c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{
		MaxObjects: &maxObjects, Quota: corev1.ResourceList{}, LimitRange: []corev1.LimitRangeItem{}}}))
	return s, c
}

func configMaps(n int) []any {
	var out []any
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		out = append(out, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: fmt.Sprintf("cm-%d", i),
			UID: "u", ResourceVersion: "1", CreationTimestamp: metav1.NewTime(base.Add(time.Duration(i) * time.Second))}})
	}
	return out
}

func recorded(c *tenant.Cluster) []string { return restest.Drain(c.Recorder.(*record.FakeRecorder)) }

// On the initial list, objects that have super copies are admitted first whatever the cap;
// then the oldest others; the rest are refused, each reported once (objectCount), and the
// downward requests of refused objects are dropped without a reconcile.
func TestInitialListAdmission(t *testing.T) {
	s, c := capFixture(t, "cap-initial", 3)
	objs := configMaps(5)
	// cm-4, the newest, already has a super copy: it keeps its slot.
	tenantCM := objs[4].(*corev1.ConfigMap)
	super := configmap.Desired(nil, c, tenantCM, resources.SuperNamespace(c, "app"), nil)
	if err := s.resources[resources.KindConfigMap].SuperInformer(s.env).GetIndexer().Add(super); err != nil {
		t.Fatal(err)
	}
	idx := s.resources[resources.KindConfigMap].TenantInformer(c).GetIndexer()
	for _, o := range objs {
		if err := idx.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	before := metrics.PolicyDenials("cap-initial", "ConfigMap", "objectCount")
	s.gate.AdmitInitial(c, resources.KindConfigMap, objs)
	s.gate.AdmitInitial(c, resources.KindConfigMap, objs) // again (a relist): nothing new is reported
	want := map[string]bool{"cm-0": false, "cm-1": false, "cm-2": true, "cm-3": true, "cm-4": false}
	for name, refused := range want {
		if got := s.gate.CountRefused(c, resources.KindConfigMap, "app", name); got != refused {
			t.Errorf("%s refused = %v, want %v", name, got, refused)
		}
	}
	if got := metrics.PolicyDenials("cap-initial", "ConfigMap", "objectCount") - before; got != 2 {
		t.Errorf("refusals counted %v, want 2 (once per object)", got)
	}
	ev := recorded(c)
	if len(ev) != 2 || !strings.Contains(ev[0], "PolicyDenied objectCount:") || !strings.Contains(ev[0], "limits.maxObjects") {
		t.Errorf("events = %q, want two objectCount refusals", ev)
	}
	req := resources.Request{Tenant: c.Name, Kind: resources.KindConfigMap, Namespace: "app", Name: "cm-3"}
	if skip, _ := s.gate.SkipRefused(context.Background(), c, s.resources[resources.KindConfigMap], req); !skip {
		t.Error("a refused object's request is reconciled")
	}
	if !admit.IsRefused(c, resources.KindConfigMap, objs[3].(*corev1.ConfigMap)) {
		t.Error("a refused object is not marked refused for remediation")
	}
	req.Name = "cm-0"
	if skip, _ := s.gate.SkipRefused(context.Background(), c, s.resources[resources.KindConfigMap], req); skip {
		t.Error("an admitted object's request is dropped")
	}

	// A deletion frees a slot: a refused object takes it, and is enqueued.
	s.gate.Release(c, resources.KindConfigMap, "app/cm-0")
	a, r := s.gate.Counts(c, resources.KindConfigMap)
	if a != 3 || r != 1 {
		t.Errorf("after a delete: %d admitted, %d refused; want 3, 1", a, r)
	}
	if s.down.Len() != 1 {
		t.Errorf("promoted object not enqueued (queue length %d)", s.down.Len())
	}
}

// A tenant namespace over the cap gets no super namespace, so nothing is synced into it, and
// the requests of its objects are not retried.
func TestRefusedNamespaceGetsNoSuperNamespace(t *testing.T) {
	s, c := capFixture(t, "cap-ns", 1)
	nsIdx := c.Informers.Core().V1().Namespaces().Informer().GetIndexer()
	for _, n := range []string{"first", "second"} {
		if err := nsIdx.Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n, UID: types.UID("uid-" + n)}}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if _, err := admit.EnsureSuperNamespace(ctx, s.env, c, "first"); err != nil {
		t.Fatalf("first namespace: %v", err)
	}
	_, err := admit.EnsureSuperNamespace(ctx, s.env, c, "second")
	if !errors.Is(err, admit.ErrNamespaceRefused) {
		t.Fatalf("second namespace over the cap: %v, want ErrNamespaceRefused", err)
	}
	if admit.IgnoreNamespaceRefused(err) != nil {
		t.Error("a refused namespace's objects would be retried")
	}
	if _, err := s.env.Super.CoreV1().Namespaces().Get(ctx, resources.SuperNamespace(c, "second"), metav1.GetOptions{}); err == nil {
		t.Error("super namespace created for a refused tenant namespace")
	}
}

// A Pod over the cap gets condition PodScheduled=False (PolicyDenied), written from the
// worker (the refused Pod is enqueued once for that), not from the event handler.
func TestRefusedPodIsMarkedNotScheduled(t *testing.T) {
	s, c := capFixture(t, "cap-pod", 1)
	var objs []any
	for i, name := range []string{"old", "new"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1",
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, i, 0, 0, 0, time.UTC))}}
		if _, err := c.Client.CoreV1().Pods("app").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := s.resources[resources.KindPod].TenantInformer(c).GetIndexer().Add(p); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, p)
	}
	s.gate.AdmitInitial(c, resources.KindPod, objs)
	if !s.gate.CountRefused(c, resources.KindPod, "app", "new") || s.gate.CountRefused(c, resources.KindPod, "app", "old") {
		t.Fatal("the newer Pod should be the refused one")
	}
	if s.down.Len() != 1 {
		t.Fatalf("refused Pod not enqueued for its condition (queue length %d)", s.down.Len())
	}
	skip, err := s.gate.SkipRefused(context.Background(), c, s.resources[resources.KindPod],
		resources.Request{Tenant: c.Name, Kind: resources.KindPod, Namespace: "app", Name: "new"})
	if !skip || err != nil {
		t.Fatalf("SkipRefused = %v, %v", skip, err)
	}
	live, _ := c.Client.CoreV1().Pods("app").Get(context.Background(), "new", metav1.GetOptions{})
	if len(live.Status.Conditions) != 1 || live.Status.Conditions[0].Reason != policy.ReasonPolicyDenied ||
		!strings.Contains(live.Status.Conditions[0].Message, "objectCount") {
		t.Errorf("refused Pod's conditions = %+v, want PodScheduled=False PolicyDenied objectCount", live.Status.Conditions)
	}
}
