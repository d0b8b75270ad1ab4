package syncer

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// TestReadyCheck: /readyz fails until the super caches have synced, then passes. The super
// Pod LIST is held back to keep the caches from syncing.
func TestReadyCheck(t *testing.T) {
	cs := fake.NewClientset()
	release := make(chan struct{})
	listing := make(chan struct{}, 1)
	cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		select {
		case listing <- struct{}{}:
		default:
		}
		<-release
		return false, nil, nil // fall through to the object tracker
	})
	s, err := New(Options{Super: cs, DownwardWorkers: 1, UpwardWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ReadyCheck(nil); !errors.Is(err, ErrNotReady) {
		t.Fatalf("ReadyCheck before Start = %v, want ErrNotReady", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.SetRegistry(tenant.NewRegistry(ctx, s))
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Start: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("Start did not return within 30s of cancel")
		}
	}()

	// Started, and the Pod cache's LIST held: the cache cannot sync, so still not ready.
	select {
	case <-listing:
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatal("the super Pod informer did not LIST within 30 s of Start")
	}
	if err := s.ReadyCheck(nil); !errors.Is(err, ErrNotReady) {
		close(release)
		t.Fatalf("ReadyCheck with a super cache not synced = %v, want ErrNotReady", err)
	}
	close(release)
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return s.ReadyCheck(nil) == nil, nil
	})
	if err != nil {
		t.Fatalf("ReadyCheck after the super caches synced: %v", s.ReadyCheck(nil))
	}
}

// TestClusterSyncedWaitsForSuperCaches: a tenant whose caches sync before the super caches
// have is diffed against them only once they have; before, its super objects would all look
// deleted and be reconciled again.
func TestClusterSyncedWaitsForSuperCaches(t *testing.T) {
	s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.SetRegistry(tenant.NewRegistry(t.Context(), s))
	cs := fake.NewClientset()
	c := &tenant.Cluster{Name: "t1", UID: "uid-t1", Client: cs,
		Informers: s.tenantInformers("t1", cs, nil), Recorder: record.NewFakeRecorder(100)}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", UID: "u1", ResourceVersion: "5"}}
	if err := s.resources[resources.KindConfigMap].TenantInformer(c).GetIndexer().Add(cm); err != nil {
		t.Fatal(err)
	}
	s.ClusterSynced(c)
	if n := len(s.down.Snapshot().Queued); n != 0 {
		t.Fatalf("%d requests enqueued before the super caches synced, want 0", n)
	}
	s.markReady()
	want := resources.Request{Tenant: "t1", Kind: resources.KindConfigMap, Namespace: "ns", Name: "cm"}
	if q := s.down.Snapshot().Queued; !slices.Contains(q, want) {
		t.Errorf("after the super caches synced, queued %v, want %v among them", q, want)
	}
}
