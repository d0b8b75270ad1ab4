package restart_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// TestStopDuringReconcileKeepsChange (issue #37, the chaos soak's seed 1): a tenant
// ConfigMap's change whose reconcile is cut by a SIGTERM (its write to the super apiserver,
// which hangs, fails with the cancelled context) reaches the super copy after the restart.
// The change was acked in the tenant Source when it was enqueued, so the resume does not
// enqueue it again: it must come back from the final checkpoint's queue. Before the fix the
// cut request was forgotten and the super copy kept the old data for good (remediation is
// off here, as it would only repair it a scan interval or two later).
func TestStopDuringReconcileKeepsChange(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real control planes")
	}
	o := startOneTenantBin(t, nil, "1h", "") // the only checkpoints are the final ones of graceful stops
	env, tc, p, c := o.env, o.tc, o.p, o.c
	ctx := t.Context()
	superNS := conversion.SuperNamespace(tc.Name, itest.TenantUID(t, c, tc.Name), "app")
	itest.MustCreateNS(t, tc.Client, "app")
	itest.Created(t)(tc.Client.CoreV1().ConfigMaps("app").Create(ctx, configMap(0, "v1"), metav1.CreateOptions{}))
	superData := func(want string) func(context.Context) error {
		return func(ctx context.Context) error {
			cm, err := env.Super.Client.CoreV1().ConfigMaps(superNS).Get(ctx, "cm-0", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if cm.Data["v"] != want {
				return fmt.Errorf("super cm-0 has v=%q", cm.Data["v"])
			}
			return nil
		}
	}
	itest.Eventually(t, time.Minute, "cm-0 v1 synced", superData("v1"))
	inFlight := func() float64 {
		return itest.ScrapeSum(t, o.port, "vcsyncer_queue_in_flight", map[string]string{"tenant": tc.Name, "direction": "downward"})
	}
	itest.Eventually(t, time.Minute, "no downward reconcile running", func(context.Context) error {
		if n := inFlight(); n != 0 {
			return fmt.Errorf("%v in flight", n)
		}
		return nil
	})

	// The super apiserver hangs: the reconcile of the change below blocks on its write.
	superPID := env.Super.PIDs()[localcluster.KubeAPIServer]
	if err := syscall.Kill(superPID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := syscall.Kill(superPID, syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer resume()
	cm, err := tc.Client.CoreV1().ConfigMaps("app").Get(ctx, "cm-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"v": "v2"}
	if _, err := tc.Client.CoreV1().ConfigMaps("app").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	itest.Eventually(t, 30*time.Second, "the reconcile of cm-0 v2 running (blocked on the super apiserver)", func(context.Context) error {
		if n := inFlight(); n < 1 {
			return fmt.Errorf("%v in flight", n)
		}
		return nil
	})
	p.Stop(t) // SIGTERM: the reconcile is cut; the final checkpoint goes to a file
	resume()
	p.Start(t)
	itest.WaitRunning(t, c, tc.Name)
	itest.Eventually(t, time.Minute, "cm-0 v2 synced after the restart", superData("v2"))
	if err := p.Exited(); err != nil {
		t.Fatal(err)
	}
}
