package syncer

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// The super copy of the tenant's DNS Service enqueues the tenant Pods of every namespace that
// have no super copy yet (they wait for its ClusterIP); another Service enqueues none, and a
// ServiceAccount only the Pods of its namespace.
func TestDNSServiceEnqueuesWaitingPods(t *testing.T) {
	s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1, TenantDNS: true})
	if err != nil {
		t.Fatal(err)
	}
	tenantCS := fake.NewClientset()
	c := &tenant.Cluster{Name: "team-a", UID: "0b5f9d1e-3c55-4a36-9b58-5d2f0a0d6c11",
		Client: tenantCS, Informers: informers.NewSharedInformerFactory(tenantCS, 0)}
	for _, p := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "synced"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "mysql-0"}},
	} {
		if err := s.resources[resources.KindPod].TenantInformer(c).GetIndexer().Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.env.SuperInformers.Core().V1().Pods().Informer().GetIndexer().Add(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: resources.SuperNamespace(c, "shop"), Name: "synced"}}); err != nil {
		t.Fatal(err)
	}
	s.markReady() // the super caches have synced: the wakes look super Pods up at once
	queued := func() []string {
		var out []string
		for _, r := range s.down.Snapshot().Queued {
			out = append(out, r.String())
		}
		sort.Strings(out)
		return out
	}
	s.enqueueWaitingPods(c, resources.KindService, conversion.Owner{Namespace: "shop", Name: "web"})
	s.enqueueWaitingPods(c, resources.KindService, conversion.Owner{Namespace: "kube-system", Name: "other"})
	if got := queued(); len(got) != 0 {
		t.Fatalf("a Service other than kube-system/kube-dns enqueued %q", got)
	}
	s.enqueueWaitingPods(c, resources.KindServiceAccount, conversion.Owner{Namespace: "db", Name: "mysql"})
	if diff := cmp.Diff([]string{"team-a/Pod/db/mysql-0"}, queued()); diff != "" {
		t.Errorf("after ServiceAccount db/mysql (-want +got):\n%s", diff)
	}
	s.enqueueWaitingPods(c, resources.KindService, conversion.Owner{Namespace: "kube-system", Name: "kube-dns"})
	if diff := cmp.Diff([]string{"team-a/Pod/db/mysql-0", "team-a/Pod/shop/web-0"}, queued()); diff != "" {
		t.Errorf("after the tenant DNS Service's super copy (-want +got):\n%s", diff)
	}
}
