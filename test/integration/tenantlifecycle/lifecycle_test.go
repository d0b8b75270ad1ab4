package tenantlifecycle

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/tenant"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

func TestTenantLifecycle(t *testing.T) {
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 1}, 2)
	c := itest.StartSyncer(t, env.Super.RESTConfig, nil)
	ctx := context.Background()
	super := env.Super.Client
	t1, t2 := env.Tenants[0], env.Tenants[1]
	start := time.Now()
	// The counters below are process-wide and tenant names repeat between runs (-count=2):
	// the test reads their rise since now.
	lagWritesBefore := metrics.TenantLagWrites(t1.Name)
	quotaRetriesBefore := retries(t1.Name, "Secret", "downward", "Quota")
	for _, tc := range []*localcluster.ControlPlane{t1, t2} {
		if err := itest.AddTenant(ctx, c, itest.KubeconfigNS, tc, 1); err != nil {
			t.Fatal(err)
		}
	}
	itest.WaitRunning(t, c, t1.Name)
	itest.WaitRunning(t, c, t2.Name)

	t.Run("kubectl get tenants shows the lag; a waiting request raises it, its success clears it", func(t *testing.T) {
		itest.Eventually(t, time.Minute, "lag 0 written", func(ctx context.Context) error {
			tn := getTenant(ctx, t, c, t1.Name)
			if tn.Status.LagSeconds == nil || *tn.Status.LagSeconds != 0 {
				return itest.Errorf("lagSeconds %v", tn.Status.LagSeconds)
			}
			return nil
		})
		cols := tableRow(t, env.Super.RESTConfig, t1.Name)
		if v, ok := cols["Lag"]; !ok || v != float64(0) {
			t.Fatalf("kubectl get tenants row %v: want a Lag column of 0", cols)
		}

		uid := itest.TenantUID(t, c, t1.Name)
		itest.MustCreateNS(t, t1.Client, "lag")
		superNS := conversion.SuperNamespace(t1.Name, uid, "lag")
		// A provider's own ResourceQuota in the super namespace (not the tenant's budget, whose
		// refusals wait parked and are no lag): two Secrets fit (whichever the workers create
		// first); the super apiserver refuses the third, which waits with retries.
		itest.Eventually(t, time.Minute, "super namespace "+superNS, func(ctx context.Context) error {
			_, err := super.CoreV1().Namespaces().Get(ctx, superNS, metav1.GetOptions{})
			return err
		})
		itest.Created(t)(super.CoreV1().ResourceQuotas(superNS).Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "provider-secrets"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceSecrets: resource.MustParse("2")}}}, metav1.CreateOptions{}))
		itest.Eventually(t, time.Minute, "provider quota computed", func(ctx context.Context) error {
			q, err := super.CoreV1().ResourceQuotas(superNS).Get(ctx, "provider-secrets", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if _, ok := q.Status.Used[corev1.ResourceSecrets]; !ok {
				return itest.Errorf("status %+v", q.Status)
			}
			return nil
		})
		names := []string{"a", "b", "c"}
		for _, name := range names {
			itest.Created(t)(t1.Client.CoreV1().Secrets("lag").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}))
		}
		var synced, waiting []string
		itest.Eventually(t, time.Minute, "two of three Secrets synced", func(ctx context.Context) error {
			synced, waiting = nil, nil
			for _, n := range names {
				if _, err := super.CoreV1().Secrets(superNS).Get(ctx, n, metav1.GetOptions{}); err == nil {
					synced = append(synced, n)
				} else {
					waiting = append(waiting, n)
				}
			}
			if len(synced) != 2 {
				return itest.Errorf("synced %v", synced)
			}
			return nil
		})
		itest.Eventually(t, 2*time.Minute, "downward lag written for the Secret waiting for quota", func(ctx context.Context) error {
			tn := getTenant(ctx, t, c, t1.Name)
			if tn.Status.DownwardLagSeconds == nil || *tn.Status.DownwardLagSeconds < 5 || *tn.Status.LagSeconds < *tn.Status.DownwardLagSeconds {
				return itest.Errorf("lag %v downward %v", tn.Status.LagSeconds, tn.Status.DownwardLagSeconds)
			}
			return nil
		})
		if got := retries(t1.Name, "Secret", "downward", "Quota") - quotaRetriesBefore; got < 1 {
			t.Errorf("vcsyncer_sync_retries_total{reason=Quota} rose by %v, want ≥ 1", got)
		}
		// Room again: the waiting Secret is synced and the lag goes back to 0.
		if err := t1.Client.CoreV1().Secrets("lag").Delete(ctx, synced[0], metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, 3*time.Minute, waiting[0]+" synced and lag 0", func(ctx context.Context) error {
			if _, err := super.CoreV1().Secrets(superNS).Get(ctx, waiting[0], metav1.GetOptions{}); err != nil {
				return err
			}
			tn := getTenant(ctx, t, c, t1.Name)
			if tn.Status.LagSeconds == nil || *tn.Status.LagSeconds != 0 {
				return itest.Errorf("lagSeconds %v", tn.Status.LagSeconds)
			}
			return nil
		})
		// One write per tick at most (every 10 s), and far fewer: only on changes.
		writes := metrics.TenantLagWrites(t1.Name) - lagWritesBefore
		ticks := time.Since(start)/tenant.DefaultLagInterval + 1
		t.Logf("%v lag writes for tenant 1 in %v (%d ticks)", writes, time.Since(start).Round(time.Second), ticks)
		if writes < 3 || writes > float64(ticks) {
			t.Errorf("%v lag writes, want 3 (0, raised, 0) to %d (one per tick)", writes, ticks)
		}
	})

	t.Run("a Tenant for a control plane another Tenant syncs is DuplicateControlPlane, not Unreachable", func(t *testing.T) {
		if err := app.AddTenant(ctx, c, itest.KubeconfigNS, "dup", t1.Kubeconfig, 1); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, time.Minute, "dup refused", func(ctx context.Context) error {
			tn := getTenant(ctx, t, c, "dup")
			synced := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionSynced)
			if tn.Status.Phase != tenancyv1alpha1.TenantDuplicateControlPlane || synced == nil || synced.Reason != tenant.ReasonDuplicateControlPlane {
				return itest.Errorf("phase %q Synced %+v", tn.Status.Phase, synced)
			}
			return nil
		})
		if cols := tableRow(t, env.Super.RESTConfig, "dup"); cols["Phase"] != "DuplicateControlPlane" {
			t.Errorf("kubectl get tenants row %v: want Phase DuplicateControlPlane", cols)
		}
		if err := c.Delete(ctx, &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "dup"}}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("remove then add within a second ends with a fresh Running Tenant syncing its objects", func(t *testing.T) {
		itest.MustCreateNS(t, t2.Client, "keep")
		itest.Created(t)(t2.Client.CoreV1().ConfigMaps("keep").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}))
		oldUID := itest.TenantUID(t, c, t2.Name)
		oldNS := conversion.SuperNamespace(t2.Name, oldUID, "keep")
		itest.Eventually(t, time.Minute, "cm synced", func(ctx context.Context) error {
			_, err := super.CoreV1().ConfigMaps(oldNS).Get(ctx, "cm", metav1.GetOptions{})
			return err
		})
		// `tenant remove` (Tenant and Secret), then the add's writes 0.5 s later: the Secret at
		// once, the Tenant as soon as the old one is gone.
		secName := t2.Name + "-kubeconfig"
		if err := c.Delete(ctx, &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: t2.Name}}); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: itest.KubeconfigNS, Name: secName}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		itest.Created(t)(nil, c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: itest.KubeconfigNS, Name: secName},
			Data: map[string][]byte{"kubeconfig": t2.Kubeconfig}}))
		itest.Eventually(t, 2*time.Minute, "old Tenant gone", func(ctx context.Context) error {
			err := c.Get(ctx, client.ObjectKey{Name: t2.Name}, &tenancyv1alpha1.Tenant{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return itest.Errorf("still there: %v", err)
		})
		if err := itest.AddTenant(ctx, c, itest.KubeconfigNS, t2, 1); err != nil {
			t.Fatal(err)
		}
		itest.WaitRunning(t, c, t2.Name)
		newUID := itest.TenantUID(t, c, t2.Name)
		if newUID == oldUID {
			t.Fatal("the Tenant was not re-created")
		}
		newNS := conversion.SuperNamespace(t2.Name, newUID, "keep")
		itest.Eventually(t, time.Minute, "cm synced for the new Tenant", func(ctx context.Context) error {
			_, err := super.CoreV1().ConfigMaps(newNS).Get(ctx, "cm", metav1.GetOptions{})
			return err
		})
		itest.Created(t)(t2.Client.CoreV1().ConfigMaps("keep").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}))
		itest.Eventually(t, time.Minute, "a new object synced", func(ctx context.Context) error {
			_, err := super.CoreV1().ConfigMaps(newNS).Get(ctx, "after", metav1.GetOptions{})
			return err
		})
		itest.Eventually(t, 2*time.Minute, "old super namespace deleted", func(ctx context.Context) error {
			_, err := super.CoreV1().Namespaces().Get(ctx, oldNS, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return itest.Errorf("%s: %v", oldNS, err)
		})
	})
}

func getTenant(ctx context.Context, t *testing.T, c client.Client, name string) *tenancyv1alpha1.Tenant {
	t.Helper()
	tn := &tenancyv1alpha1.Tenant{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, tn); err != nil {
		t.Fatal(err)
	}
	return tn
}

// tableRow returns Tenant name's row of `kubectl get tenants` (the server-side Table the
// apiserver builds from the CRD's printer columns), by column name.
func tableRow(t *testing.T, cfg *rest.Config, name string) map[string]any {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, cfg.Host+"/apis/"+tenancyv1alpha1.GroupVersion.String()+"/tenants/"+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tbl metav1.Table
	if err := json.NewDecoder(resp.Body).Decode(&tbl); err != nil {
		t.Fatal(err)
	}
	if len(tbl.Rows) != 1 {
		t.Fatalf("table has %d rows (HTTP %d)", len(tbl.Rows), resp.StatusCode)
	}
	out := map[string]any{}
	for i, col := range tbl.ColumnDefinitions {
		out[col.Name] = tbl.Rows[0].Cells[i]
	}
	return out
}

// retries reads vcsyncer_sync_retries_total of the in-process syncer.
func retries(tenantName, kind, direction, reason string) float64 {
	return testutil.ToFloat64(metrics.SyncRetriesVec().WithLabelValues(tenantName, kind, direction, reason))
}
