package remediation_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

const (
	kubeconfigNS = "vc-syncer-system"
	mismatches   = "vcsyncer_remediation_mismatches_total"
	fixes        = "vcsyncer_remediation_fixes_total"
	skips        = "vcsyncer_remediation_skips_total"
	scans        = "vcsyncer_remediation_scan_duration_seconds"
)

func TestRemediation(t *testing.T) {
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 1}, 1)
	c := startSyncer(t, env.Super.RESTConfig, time.Second)
	super := env.Super.Client
	ctx := context.Background()
	t1 := env.Tenants[0]

	kc := t1.Kubeconfig
	if err := app.AddTenant(ctx, c, kubeconfigNS, t1.Name, kc, 1); err != nil {
		t.Fatal(err)
	}
	// A second Tenant whose apiserver never answers: its Cluster never syncs.
	if err := app.AddTenant(ctx, c, kubeconfigNS, "down", itest.Unreachable(t, kc), 1); err != nil {
		t.Fatal(err)
	}
	itest.WaitRunning(t, c, t1.Name)
	uid1 := itest.TenantUID(t, c, t1.Name)
	uidDown := itest.TenantUID(t, c, "down")

	itest.MustCreateNS(t, t1.Client, "app")
	if _, err := t1.Client.CoreV1().ConfigMaps("app").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"k": "v"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := t1.Client.CoreV1().Pods("app").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	superNS := conversion.SuperNamespace(t1.Name, uid1, "app")
	itest.Eventually(t, time.Minute, "tenant Pod Ready and super ConfigMap synced", func(ctx context.Context) error {
		if _, err := super.CoreV1().ConfigMaps(superNS).Get(ctx, "cfg", metav1.GetOptions{}); err != nil {
			return err
		}
		p, err := t1.Client.CoreV1().Pods("app").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !itest.PodReady(p) {
			return itest.Errorf("tenant Pod not Ready: %+v", p.Status)
		}
		return nil
	})

	t.Run("steady state reports no mismatch", func(t *testing.T) {
		// Let the initial sync settle, then watch five scans.
		waitScans(t, 2)
		before := metricValue(t, mismatches, map[string]string{"tenant": t1.Name})
		waitScans(t, 5)
		if after := metricValue(t, mismatches, map[string]string{"tenant": t1.Name}); after != before {
			t.Errorf("mismatches of a synced, unchanged tenant went from %v to %v", before, after)
		}
	})

	t.Run("tenant Pod status changed behind the syncer is restored from the super Pod", func(t *testing.T) {
		// A status-only change of a tenant Pod produces no event the syncer acts on (only
		// super-side changes drive the upward path), so only the scan can notice it.
		labels := map[string]string{"tenant": t1.Name, "kind": "Pod", "reason": "status_differs"}
		mBefore, fBefore := metricValue(t, mismatches, labels), metricValue(t, fixes, labels)
		p, err := t1.Client.CoreV1().Pods("app").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.PodReady {
				p.Status.Conditions[i].Status = corev1.ConditionFalse
				p.Status.Conditions[i].Reason = "Tampered"
			}
		}
		if _, err := t1.Client.CoreV1().Pods("app").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, time.Minute, "tenant Pod Ready again", func(ctx context.Context) error {
			p, err := t1.Client.CoreV1().Pods("app").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !itest.PodReady(p) {
				return itest.Errorf("still not Ready")
			}
			return nil
		})
		if got := metricValue(t, mismatches, labels); got < mBefore+1 {
			t.Errorf("%s%v = %v, want at least %v", mismatches, labels, got, mBefore+1)
		}
		itest.Eventually(t, 30*time.Second, "fix counted", func(context.Context) error {
			if got := metricValue(t, fixes, labels); got < fBefore+1 {
				return itest.Errorf("%s%v = %v", fixes, labels, got)
			}
			return nil
		})
	})

	t.Run("orphan the event path cannot map is deleted through the downward reconcile", func(t *testing.T) {
		// Owned by tenant 1 (UID label and annotation), but its tenant-name annotation is not
		// tenant 1's: the super event handler, which maps by name, drops it; the scan maps
		// owners by UID.
		labels := map[string]string{"tenant": t1.Name, "kind": "ConfigMap", "reason": "orphan_in_super"}
		mBefore, fBefore := metricValue(t, mismatches, labels), metricValue(t, fixes, labels)
		ghost := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ghost", Namespace: superNS}, Data: map[string]string{"k": "v"}}
		conversion.Stamp(&ghost.ObjectMeta, conversion.Owner{Tenant: "renamed", TenantUID: uid1, Namespace: "app", Name: "ghost", UID: "deleted-long-ago"})
		if _, err := super.CoreV1().ConfigMaps(superNS).Create(ctx, ghost, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		created := time.Now()
		itest.Eventually(t, time.Minute, "orphan deleted", func(ctx context.Context) error {
			_, err := super.CoreV1().ConfigMaps(superNS).Get(ctx, "ghost", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return itest.Errorf("still there: %v", err)
		})
		// Confirmed on two scans one second apart before it was re-enqueued.
		if d := time.Since(created); d < time.Second {
			t.Errorf("orphan deleted %v after creation, before a second scan could confirm it", d)
		}
		if got := metricValue(t, mismatches, labels); got < mBefore+1 {
			t.Errorf("%s%v = %v, want at least %v", mismatches, labels, got, mBefore+1)
		}
		itest.Eventually(t, 30*time.Second, "fix counted", func(context.Context) error {
			if got := metricValue(t, fixes, labels); got < fBefore+1 {
				return itest.Errorf("%s%v = %v", fixes, labels, got)
			}
			return nil
		})
		if _, err := super.CoreV1().ConfigMaps(superNS).Get(ctx, "cfg", metav1.GetOptions{}); err != nil {
			t.Errorf("the synced ConfigMap is gone: %v", err)
		}
	})

	t.Run("a tenant whose caches never synced is skipped and keeps its super objects", func(t *testing.T) {
		downNS := conversion.SuperNamespace("down", uidDown, "app")
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: downNS}}
		conversion.Stamp(&ns.ObjectMeta, conversion.Owner{Tenant: "down", TenantUID: uidDown, Namespace: "app", Name: "app", UID: "ns-uid"})
		if _, err := super.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "left", Namespace: downNS}}
		conversion.Stamp(&cm.ObjectMeta, conversion.Owner{Tenant: "down", TenantUID: uidDown, Namespace: "app", Name: "left", UID: "cm-uid"})
		if _, err := super.CoreV1().ConfigMaps(downNS).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		skipLabels := map[string]string{"tenant": "down", "reason": "tenant_not_synced"}
		before := metricValue(t, skips, skipLabels)
		itest.Eventually(t, time.Minute, "three scans skip the tenant", func(context.Context) error {
			if got := metricValue(t, skips, skipLabels); got < before+3 {
				return itest.Errorf("%s%v = %v", skips, skipLabels, got)
			}
			return nil
		})
		if got := metricValue(t, mismatches, map[string]string{"tenant": "down"}); got != 0 {
			t.Errorf("mismatches counted for a tenant that never synced: %v", got)
		}
		gotNS, err := super.CoreV1().Namespaces().Get(ctx, downNS, metav1.GetOptions{})
		if err != nil || gotNS.DeletionTimestamp != nil {
			t.Errorf("super namespace of the unsynced tenant deleted or terminating: %v %v", err, gotNS.DeletionTimestamp)
		}
		if _, err := super.CoreV1().ConfigMaps(downNS).Get(ctx, "left", metav1.GetOptions{}); err != nil {
			t.Errorf("super ConfigMap of the unsynced tenant: %v", err)
		}
	})
}

// waitScans waits until n more remediation scans have finished.
func waitScans(t *testing.T, n int) {
	t.Helper()
	before := metricValue(t, scans, nil)
	itest.Eventually(t, time.Duration(n)*10*time.Second, "remediation scans", func(context.Context) error {
		if got := metricValue(t, scans, nil); got < before+float64(n) {
			return itest.Errorf("%v scans so far", got-before)
		}
		return nil
	})
}
