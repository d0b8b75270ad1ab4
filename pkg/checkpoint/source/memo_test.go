package source

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// TestCoreInformersKept checks that a Factory's Pod, Node, Namespace and Service accessors
// return the factory's one shared informer, with a lister over its cache, without allocating
// after the first call (client-go's accessors allocate a prototype object on each).
func TestCoreInformersKept(t *testing.T) {
	client := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}})
	f := NewFactory(NewRegistry(), "t", client, FactoryOptions{})
	pods := f.Core().V1().Pods().Informer()
	// client-go hands out the shared informer in a typed wrapper: compare their caches.
	if got := f.InformerFor(&corev1.Pod{}, nil); got.GetIndexer() != pods.GetIndexer() {
		t.Fatal("Core().V1().Pods().Informer() is not the factory's Pod informer")
	}
	if f.Core().V1().Nodes().Informer() == nil || f.Core().V1().Namespaces().Informer() == nil || f.Core().V1().Services().Informer() == nil {
		t.Fatal("a kept informer is nil")
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx.Done())
	defer func() { cancel(); f.Shutdown() }()
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced) {
		t.Fatal("the Pod informer never synced")
	}
	if _, err := f.Core().V1().Pods().Lister().Pods("ns").Get("p"); err != nil {
		t.Fatalf("the kept lister does not read the informer's cache: %v", err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		_ = f.Core().V1().Pods().Informer()
		_ = f.Core().V1().Pods().Lister()
		_ = f.Core().V1().Nodes().Lister()
		_ = f.Core().V1().Namespaces().Lister()
		_ = f.Core().V1().Services().Lister()
	})
	if allocs != 0 {
		t.Errorf("the kept accessors allocate %.0f times per round; want 0", allocs)
	}
}
