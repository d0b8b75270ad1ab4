package syncer

import (
	"slices"
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

// Issue 43: a resumed tenant whose caches synced while the super caches were still taking in
// the checkpoint's objects was reconciled whole. The super ResourceQuotas' initial adds (a
// ready quota wakes the objects of its namespace without a super copy, admit.Gate.EnqueueWaitingIn) and
// the super Pod dependencies' (enqueueWaitingPods) looked the tenant's objects up in super
// caches still filling, found none, and enqueued every object of the namespace downward
// (upgrade benchmark: 4 and 11 of 30 tenants, about 1019 requests each). Those wakes wait for
// the super caches (afterReady), run once per namespace however many adds asked for them, and
// then enqueue only the objects that have no super copy.
func TestWakesWaitForSuperCaches(t *testing.T) {
	s, c := newSyncerWithTenant(t)
	superNS := resources.SuperNamespace(c, "shop")
	for _, cm := range []string{"synced", "new"} {
		if err := s.resources[resources.KindConfigMap].TenantInformer(c).GetIndexer().Add(&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: cm}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"web-0", "web-1"} {
		if err := s.resources[resources.KindPod].TenantInformer(c).GetIndexer().Add(&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: p}}); err != nil {
			t.Fatal(err)
		}
	}
	queued := func() []string {
		var out []string
		for _, r := range s.down.Snapshot().Queued {
			out = append(out, r.String())
		}
		sort.Strings(out)
		return out
	}

	// The super caches' initial list is still arriving: their stores lack every super copy.
	for range 3 {
		s.gate.EnqueueWaitingIn(c, "shop", superNS) // the quota of "shop" (and of repeated adds)
		s.enqueueWaitingPods(c, resources.KindServiceAccount, conversion.Owner{Namespace: "shop", Name: "default"})
	}
	if got := queued(); len(got) != 0 {
		t.Fatalf("before the super caches synced, %d requests enqueued (objects whose super copies the caches had not taken in yet): %q", len(got), got)
	}

	// The rest of the initial list: the super copies of synced and web-0.
	if err := s.env.SuperInformers.Core().V1().ConfigMaps().Informer().GetIndexer().Add(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: superNS, Name: "synced"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.env.SuperInformers.Core().V1().Pods().Informer().GetIndexer().Add(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: superNS, Name: "web-0"}}); err != nil {
		t.Fatal(err)
	}
	before := s.down.Size()
	s.markReady()
	want := []string{"team-a/ConfigMap/shop/new", "team-a/Pod/shop/web-1"}
	if diff := cmp.Diff(want, queued()); diff != "" {
		t.Errorf("after the super caches synced, enqueued (-want +got):\n%s", diff)
	}
	if n := s.down.Size() - before; n != len(want) {
		t.Errorf("queue grew by %d, want %d", n, len(want))
	}

	// Once ready, a wake runs at once.
	if err := s.resources[resources.KindConfigMap].TenantInformer(c).GetIndexer().Add(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "later"}}); err != nil {
		t.Fatal(err)
	}
	s.gate.EnqueueWaitingIn(c, "shop", superNS)
	if got := queued(); !slices.Contains(got, "team-a/ConfigMap/shop/later") {
		t.Errorf("a wake after the super caches synced did not enqueue shop/later: %q", got)
	}
}

// newSyncerWithTenant returns a Syncer on a fake super clientset (one worker each way) and a
// tenant Cluster team-a on a fake tenant clientset, neither started: its caches are filled by
// the test.
func newSyncerWithTenant(t *testing.T) (*Syncer, *tenant.Cluster) {
	t.Helper()
	s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	tenantCS := fake.NewClientset()
	return s, &tenant.Cluster{Name: "team-a", UID: "6f1c9e0a-4a43-4d8e-9d5e-3b9e8f0c2a17",
		Client: tenantCS, Informers: informers.NewSharedInformerFactory(tenantCS, 0)}
}
