package tenant

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// TestWaitForSyncWaitsForHandlers: the Cluster counts as synced only once a handler added
// with AddEventHandler has been handed every object of the initial list. A slow handler is
// still working through the initial adds when the informer's own store has synced; were
// Synced set then, a handler that drops events until Synced would take the rest of the
// initial list for live changes (a resumed tenant's unchanged objects reconciled again).
func TestWaitForSyncWaitsForHandlers(t *testing.T) {
	const n = 100
	objs := make([]runtime.Object, n)
	for i := range objs {
		objs[i] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: fmt.Sprintf("cm-%d", i), ResourceVersion: "1"}}
	}
	f := informers.NewSharedInformerFactory(fake.NewClientset(objs...), 0)
	c := &Cluster{Name: "t", Informers: f}
	var handled atomic.Int32
	inf := f.Core().V1().ConfigMaps().Informer()
	if err := c.AddEventHandler(inf, cache.ResourceEventHandlerFuncs{AddFunc: func(any) {
		time.Sleep(2 * time.Millisecond)
		handled.Add(1)
	}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	f.StartWithContext(ctx)
	defer f.Shutdown() // after cancel: it waits for the informers to stop
	defer cancel()
	if !c.waitForSync(ctx) {
		t.Fatal("waitForSync = false before the test's context ended")
	}
	if got := handled.Load(); got != n {
		t.Errorf("synced with %d of the %d initial adds handed to the handler, want all", got, n)
	}
}
