package namespace_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/namespace"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// fixture is one tenant with its (never started) caches, fed by hand from the fake clients.
type fixture struct {
	c        *tenant.Cluster
	env      *resources.Env
	tenantCS *fake.Clientset
	superCS  *fake.Clientset
	rec      *record.FakeRecorder
}

func newFixture(t *testing.T, tenantNamespaces ...string) *fixture {
	t.Helper()
	var objs []corev1.Namespace
	for i, n := range tenantNamespaces {
		objs = append(objs, corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: n, UID: types.UID("tns-uid-" + string(rune('a'+i))), ResourceVersion: "1"}})
	}
	tenantCS := fake.NewClientset()
	for i := range objs {
		if _, err := tenantCS.CoreV1().Namespaces().Create(context.Background(), &objs[i], metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rec := record.NewFakeRecorder(100)
	c := &tenant.Cluster{Name: "team-a", UID: "0b5f9d1e-3c55-4a36-9b58-5d2f0a0d6c11", Client: tenantCS,
		Informers: informers.NewSharedInformerFactory(tenantCS, 0), Recorder: rec}
	superCS := fake.NewClientset()
	env := &resources.Env{Super: superCS, SuperInformers: informers.NewSharedInformerFactory(superCS, 0)}
	f := &fixture{c: c, env: env, tenantCS: tenantCS, superCS: superCS, rec: rec}
	f.resync(t)
	return f
}

// resync makes both namespace caches what the fake apiservers hold, as a watch would.
func (f *fixture) resync(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	tl, err := f.tenantCS.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sl, err := f.superCS.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var tItems, sItems []any
	for i := range tl.Items {
		tItems = append(tItems, &tl.Items[i])
	}
	for i := range sl.Items {
		sItems = append(sItems, &sl.Items[i])
	}
	if err := (namespace.Resource).TenantInformer(f.c).GetIndexer().Replace(tItems, ""); err != nil {
		t.Fatal(err)
	}
	if err := (namespace.Resource).SuperInformer(f.env).GetIndexer().Replace(sItems, ""); err != nil {
		t.Fatal(err)
	}
}

// count returns how many super namespace writes of verb the fake super apiserver saw.
func (f *fixture) count(verb string) int {
	n := 0
	for _, a := range f.superCS.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == "namespaces" {
			if _, ok := a.(k8stesting.CreateAction); ok || verb == "delete" {
				n++
			}
		}
	}
	return n
}

// Two tenant namespaces of one tenant that map to one super namespace: a 63-character name
// and the tail of its cut form. Reconciling both, round after round, must settle: the first
// keeps the super namespace, the second is refused, and nothing is ever deleted.
func TestCollidingNamespacesDoNotDeleteEachOther(t *testing.T) {
	ctx := context.Background()
	long, short, superNS := restest.CollidingNamespaces(t, &tenant.Cluster{Name: "team-a", UID: "0b5f9d1e-3c55-4a36-9b58-5d2f0a0d6c11"})
	f := newFixture(t, long, short)
	denials := func() float64 {
		return metrics.PolicyDenials(f.c.Name, string(resources.KindNamespace), string(policy.RuleNamespaceCollision))
	}
	before := denials()
	for round := range 5 {
		for _, ns := range []string{long, short} {
			err := (namespace.Resource).Downward(ctx, f.env, f.c, "", ns)
			f.resync(t)
			if round > 0 && ns == short && !errors.Is(err, admit.ErrNamespaceCollision) {
				t.Errorf("round %d: Downward(%s) = %v, want ErrNamespaceCollision", round, ns, err)
			}
		}
	}
	if d := f.count("delete"); d > 0 {
		t.Fatalf("5 rounds: %d super namespace deletions, %d creations: the two tenant namespaces delete each other's super namespace",
			d, f.count("create"))
	}
	if n := f.count("create"); n != 1 {
		t.Errorf("%d super namespace creations, want 1", n)
	}
	sns, err := f.superCS.CoreV1().Namespaces().Get(ctx, superNS, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := sns.Annotations[conversion.AnnotationNamespace]; got != long {
		t.Errorf("super namespace holds tenant namespace %q, want the first one %q", got, long)
	}
	// Reported once (five refusals of the same namespace version), on the refused namespace.
	events := restest.Drain(f.rec)
	if len(events) != 1 || !strings.Contains(events[0], "Warning PolicyDenied namespaceCollision: namespace "+short) ||
		!strings.Contains(events[0], long) {
		t.Errorf("events = %q, want one PolicyDenied namespaceCollision Warning for %s naming %s", events, short, long)
	}
	if got := denials() - before; got != 1 {
		t.Errorf("vcsyncer_policy_denials_total grew by %v, want 1", got)
	}
	if !admit.NamespaceRefused(f.c, short) || admit.NamespaceRefused(f.c, long) {
		t.Errorf("NamespaceRefused(%s, %s) = %v, %v; want true, false", short, long,
			admit.NamespaceRefused(f.c, short), admit.NamespaceRefused(f.c, long))
	}

	// The holder goes: its super namespace is deleted, and the next reconcile of the other
	// namespace (enqueued by the super namespace's deletion) takes the name.
	if err := f.tenantCS.CoreV1().Namespaces().Delete(ctx, long, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.resync(t)
	if err := (namespace.Resource).Downward(ctx, f.env, f.c, "", long); err != nil {
		t.Fatalf("Downward(%s) after its deletion: %v", long, err)
	}
	f.resync(t)
	if err := (namespace.Resource).Downward(ctx, f.env, f.c, "", short); err != nil {
		t.Fatalf("Downward(%s) once the name is free: %v", short, err)
	}
	f.resync(t)
	sns, err = f.superCS.CoreV1().Namespaces().Get(ctx, superNS, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := sns.Annotations[conversion.AnnotationNamespace]; got != short {
		t.Errorf("super namespace holds %q after %s was deleted, want %q", got, long, short)
	}
	if admit.NamespaceRefused(f.c, short) {
		t.Errorf("%s still counted as refused after it was synced", short)
	}
}
