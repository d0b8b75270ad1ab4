package restart_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// TestResumeCopiesStatusWhileTenantCacheReplays: Pods created and Running after the last
// checkpoint, then a SIGKILL; while the syncer is down their super Pods change (a container
// restart, as a kubelet reports it). On restart the tenant Pod cache resumes from the
// checkpoint, without those Pods until its watch replays them, while the upward requests for
// the changed super Pods run at once. A request that finds no tenant Pod in the cache must be
// retried, not dropped: the tenant Pod's arrival in the cache enqueues it downward only, and
// the super Pods do not change again, so every restart count must still come up (remediation
// is off; TestKillRestart once ended with a Pod left Pending with nodeName set this way).
func TestResumeCopiesStatusWhileTenantCacheReplays(t *testing.T) {
	o := startOneTenant(t, nil, "1h") // the only checkpoints are the final ones of graceful stops
	env, tc, p, c := o.env, o.tc, o.p, o.c
	ctx := t.Context()
	superNS := conversion.SuperNamespace(tc.Name, itest.TenantUID(t, c, tc.Name), "app")
	itest.MustCreateNS(t, tc.Client, "app")
	p.Stop(t) // the checkpoint: namespace "app", no Pods
	p.Start(t)
	itest.WaitRunning(t, c, tc.Name)

	const n = 40
	for i := range n {
		itest.Created(t)(tc.Client.CoreV1().Pods("app").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%02d", i)},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}}, metav1.CreateOptions{}))
	}
	itest.Eventually(t, 2*time.Minute, "all Pods Running in the tenant", func(ctx context.Context) error {
		pods, err := tc.Client.CoreV1().Pods("app").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 {
				running++
			}
		}
		if running != n {
			return fmt.Errorf("%d of %d Running", running, n)
		}
		return nil
	})

	p.Kill(t) // no checkpoint since the Pods were created
	for i := range n {
		name := fmt.Sprintf("p-%02d", i)
		sp, err := env.Super.Client.CoreV1().Pods(superNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cs := sp.Status.ContainerStatuses[0]
		cs.RestartCount = 1
		patch, _ := json.Marshal(map[string]any{"status": map[string]any{"containerStatuses": []corev1.ContainerStatus{cs}}})
		itest.Created(t)(env.Super.Client.CoreV1().Pods(superNS).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"))
	}
	p.Start(t)
	itest.WaitRunning(t, c, tc.Name)
	itest.Eventually(t, time.Minute, "every restart count copied up", func(ctx context.Context) error {
		if err := p.Exited(); err != nil {
			t.Fatal(err)
		}
		pods, err := tc.Client.CoreV1().Pods("app").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		var stale []string
		for _, p := range pods.Items {
			if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].RestartCount != 1 {
				stale = append(stale, p.Name)
			}
		}
		if len(stale) > 0 {
			return fmt.Errorf("%d of %d tenant Pods without the super Pod's restart: %v", len(stale), n, stale)
		}
		return nil
	})
}
