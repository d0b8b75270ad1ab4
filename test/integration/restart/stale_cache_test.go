package restart_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// TestResumeKeepsSuperCopiesWhileTenantCacheReplays (review finding R3): objects created and synced
// after the last checkpoint, then a SIGKILL. On restart the tenant informer resumes from the
// checkpoint (its cache lacks the new objects until the watch replays them), while the super
// cache already has their super copies, with no ack entry: ClusterSynced's super diff enqueues
// them downward and reconcile.Reconcile, finding no tenant object in the stale tenant cache,
// deletes the super copy (no live read, unlike Pods and namespaces). The replay then creates
// it again. A super object of a live tenant object must never be deleted by a restart (for a
// PersistentVolumeClaim this loses the volume, for a Service its ClusterIP).
func TestResumeKeepsSuperCopiesWhileTenantCacheReplays(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real control planes")
	}
	// A long interval: the only checkpoints are the final ones of graceful stops.
	o := startOneTenant(t, nil, "1h")
	env, tc, p, c := o.env, o.tc, o.p, o.c
	ctx := t.Context()
	superNS := conversion.SuperNamespace(tc.Name, itest.TenantUID(t, c, tc.Name), "app")
	itest.MustCreateNS(t, tc.Client, "app")
	itest.Created(t)(tc.Client.CoreV1().ConfigMaps("app").Create(ctx, configMap(0, "v1"), metav1.CreateOptions{}))
	itest.Eventually(t, time.Minute, "cm-0 synced", func(ctx context.Context) error {
		_, err := env.Super.Client.CoreV1().ConfigMaps(superNS).Get(ctx, "cm-0", metav1.GetOptions{})
		return err
	})
	p.Stop(t) // the checkpoint: tenant "app" with cm-0
	p.Start(t)
	itest.WaitRunning(t, c, tc.Name)

	// After the checkpoint: new objects, synced.
	const n = 40
	for i := 1; i <= n; i++ {
		itest.Created(t)(tc.Client.CoreV1().ConfigMaps("app").Create(ctx, configMap(i, "v1"), metav1.CreateOptions{}))
	}
	uids := map[string]types.UID{}
	itest.Eventually(t, time.Minute, "new ConfigMaps synced", func(ctx context.Context) error {
		cms, err := env.Super.Client.CoreV1().ConfigMaps(superNS).List(ctx, metav1.ListOptions{LabelSelector: "resume-test"})
		if err != nil || len(cms.Items) != n+1 {
			return fmt.Errorf("%d super ConfigMaps (%w)", len(cms.Items), err)
		}
		for _, cm := range cms.Items {
			uids[cm.Name] = cm.UID
		}
		return nil
	})
	list, err := env.Super.Client.CoreV1().ConfigMaps(superNS).List(ctx, metav1.ListOptions{LabelSelector: "resume-test"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := env.Super.Client.CoreV1().ConfigMaps(superNS).Watch(ctx, metav1.ListOptions{LabelSelector: "resume-test", ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var deleted []string
	go func() {
		for ev := range w.ResultChan() {
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok && ev.Type == watch.Deleted {
				mu.Lock()
				deleted = append(deleted, cm.Name)
				mu.Unlock()
			}
		}
	}()
	defer w.Stop()

	p.Kill(t) // no checkpoint since the new objects
	p.Start(t)
	itest.WaitRunning(t, c, tc.Name)
	time.Sleep(15 * time.Second)
	if err := p.Exited(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(deleted) > 0 {
		t.Errorf("the restart deleted the super copies of %d live tenant ConfigMaps: %s", len(deleted), strings.Join(deleted, " "))
	}
	cms, err := env.Super.Client.CoreV1().ConfigMaps(superNS).List(ctx, metav1.ListOptions{LabelSelector: "resume-test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		if uids[cm.Name] != cm.UID {
			t.Errorf("super ConfigMap %s was re-created across the restart (UID %s, then %s)", cm.Name, uids[cm.Name], cm.UID)
		}
	}
}
