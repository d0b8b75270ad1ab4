package syncer

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// stubResource is a Resource whose Downward returns err.
type stubResource struct {
	resources.Resource
	err error
}

func (r stubResource) Downward(context.Context, *resources.Env, *tenant.Cluster, string, string) error {
	return r.err
}

// A namespace-collision refusal is final (nil: the worker forgets the request, no backoff
// retry); other errors are still returned for a retry.
func TestNamespaceCollisionIsNotRetried(t *testing.T) {
	s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	req := resources.Request{Tenant: "t", Kind: resources.KindConfigMap, Namespace: "ns", Name: "cfg"}
	refused := fmt.Errorf("ConfigMap: %w", fmt.Errorf("tenant namespace ns: %w", admit.ErrNamespaceCollision))
	if err := s.downward(t.Context(), stubResource{err: refused}, &tenant.Cluster{}, req); err != nil {
		t.Errorf("downward with a namespace collision = %v, want nil (not retried)", err)
	}
	other := errors.New("conflict")
	if err := s.downward(t.Context(), stubResource{err: other}, &tenant.Cluster{}, req); !errors.Is(err, other) {
		t.Errorf("downward with another error = %v, want it returned for a retry", err)
	}
}

// When the super namespace held by one tenant namespace is deleted and that namespace is gone,
// the other tenant namespaces mapping to the same name are enqueued with all their objects
// (their refusals were not retried); while the holder still exists nothing else is.
func TestSuperNamespaceDeletionEnqueuesColliders(t *testing.T) {
	s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	tenantCS := fake.NewClientset()
	c := &tenant.Cluster{Name: "team-a", UID: "0b5f9d1e-3c55-4a36-9b58-5d2f0a0d6c11",
		Client: tenantCS, Informers: informers.NewSharedInformerFactory(tenantCS, 0)}
	long, short, superNS := restest.CollidingNamespaces(t, c)
	tLong := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: long, UID: "tns-long"}}
	add := func(inf cache.SharedIndexInformer, objs ...any) {
		for _, o := range objs {
			if err := inf.GetIndexer().Add(o); err != nil {
				t.Fatal(err)
			}
		}
	}
	nsInf := s.resources[resources.KindNamespace].TenantInformer(c)
	add(nsInf, tLong,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: short, UID: "tns-short"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "unrelated", UID: "tns-u"}})
	add(s.resources[resources.KindConfigMap].TenantInformer(c),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: short}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "unrelated"}})
	add(s.resources[resources.KindPod].TenantInformer(c),
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: short}})
	sns := resources.DesiredNamespace(s.env, c, tLong, nil)

	queued := func() []string {
		var out []string
		for _, r := range s.down.Snapshot().Queued {
			out = append(out, r.String())
		}
		sort.Strings(out)
		return out
	}

	s.gate.SuperNamespaceGone(c, sns) // the holder still exists (deleted by hand): it takes it back
	if got := queued(); len(got) != 0 {
		t.Errorf("enqueued while the holder exists: %q", got)
	}
	if err := nsInf.GetIndexer().Delete(tLong); err != nil {
		t.Fatal(err)
	}
	s.gate.SuperNamespaceGone(c, sns)
	want := []string{
		"team-a/ConfigMap/" + short + "/cfg",
		"team-a/Namespace//" + short,
		"team-a/Pod/" + short + "/p",
	}
	if diff := cmp.Diff(want, queued()); diff != "" {
		t.Errorf("enqueued after the holder's super namespace %s was deleted (-want +got):\n%s", superNS, diff)
	}
}
