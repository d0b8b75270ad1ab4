package statuspage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// row is one tenant row as the browser renders it (innerText of each cell).
type row struct {
	Name, Phase, Reason, Weight string
	DownDepth, DownOldest       string
	UpDepth, UpOldest           string
	LastSync, LastCheckpoint    string
	Visible                     bool
}

// readRows returns the tenant rows of the page by name, plus the page's marker (set by
// markPage; lost when the page reloads).
const readRows = `
var rows = Array.from(document.querySelectorAll("#tenants tbody tr[data-tenant]")).map(function (tr) {
  function txt(i) { return tr.cells[i] ? tr.cells[i].innerText.trim() : ""; }
  var badge = tr.querySelector(".badge"), reason = tr.querySelector(".reason");
  var r = tr.getBoundingClientRect();
  return {Name: tr.getAttribute("data-tenant"), Phase: badge ? badge.innerText.trim() : "",
    Reason: reason ? reason.innerText.trim() : "", Weight: txt(2), DownDepth: txt(3), DownOldest: txt(4),
    UpDepth: txt(5), UpOldest: txt(6), LastSync: txt(7), LastCheckpoint: txt(8),
    Visible: r.width > 0 && r.height > 0};
});
return {rows: rows, marker: window.vcsyncerTestMarker || ""};`

type page struct {
	Rows   []row  `json:"rows"`
	Marker string `json:"marker"`
}

func (p page) byName() map[string]row {
	out := map[string]row{}
	for _, r := range p.Rows {
		out[r.Name] = r
	}
	return out
}

func TestStatusPage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real control planes and Chromium")
	}
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 1}, 2)
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", itest.FreePort(t))
	healthAddr := fmt.Sprintf("127.0.0.1:%d", itest.FreePort(t))
	c := itest.StartSyncer(t, env.Super.RESTConfig, func(o *options.Options) {
		o.MetricsBindAddress, o.HealthProbeBindAddress = metricsAddr, healthAddr
		o.MetricsSecure = false // plain HTTP on loopback, as `vc-syncer dev` serves it
		// One downward worker, so that a burst of ConfigMaps visibly queues up.
		o.DownwardWorkers = 1
	})
	ctx := context.Background()
	t1, t2 := env.Tenants[0], env.Tenants[1]
	weights := map[string]int32{t1.Name: 1, t2.Name: 3, "offline": 2, "no-secret": 1}
	for _, cp := range []*localcluster.ControlPlane{t1, t2} {
		if err := itest.AddTenant(ctx, c, itest.KubeconfigNS, cp, weights[cp.Name]); err != nil {
			t.Fatal(err)
		}
	}
	if err := app.AddTenant(ctx, c, itest.KubeconfigNS, "offline", itest.Unreachable(t, t1.Kubeconfig), weights["offline"]); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "no-secret"},
		Spec: tenancyv1alpha1.TenantSpec{KubeconfigSecretRef: tenancyv1alpha1.SecretKeyRef{Namespace: itest.KubeconfigNS, Name: "no-secret-kubeconfig"}}}); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, c, t1.Name, tenancyv1alpha1.TenantRunning)
	waitPhase(t, c, t2.Name, tenancyv1alpha1.TenantRunning)
	waitPhase(t, c, "offline", tenancyv1alpha1.TenantUnreachable)
	waitPhase(t, c, "no-secret", tenancyv1alpha1.TenantPending)

	t.Run("healthz and readyz", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/readyz"} {
			itest.Eventually(t, 30*time.Second, path+" OK", func(ctx context.Context) error {
				code, body := httpGet(ctx, "http://"+healthAddr+path+"?verbose")
				if code != http.StatusOK {
					return itest.Errorf("HTTP %d: %s", code, body)
				}
				return nil
			})
		}
		if _, body := httpGet(ctx, "http://"+healthAddr+"/readyz?verbose"); !strings.Contains(body, "[+]syncer ok") {
			t.Errorf("/readyz does not run the syncer's check:\n%s", body)
		}
	})

	b := startBrowser(t)
	url := "http://" + metricsAddr + "/"
	b.navigate(t, url)

	t.Run("every tenant is shown with its phase and weight", func(t *testing.T) {
		checkRows(t, b, c, weights, t1.Name, t2.Name)
	})

	t.Run("the page refreshes itself in place", func(t *testing.T) {
		if err := b.eval(`window.vcsyncerTestMarker = "loaded-once"; return null;`, nil); err != nil {
			t.Fatal(err)
		}
		tn := &tenancyv1alpha1.Tenant{}
		if err := c.Get(ctx, client.ObjectKey{Name: t2.Name}, tn); err != nil {
			t.Fatal(err)
		}
		tn.Spec.Paused = true
		if err := c.Update(ctx, tn); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, 30*time.Second, t2.Name+" shown Paused without a reload", func(context.Context) error {
			p, err := read(b)
			if err != nil {
				return err
			}
			if p.Marker != "loaded-once" {
				return fmt.Errorf("the page was reloaded (marker %q); it must update in place", p.Marker)
			}
			r := p.byName()[t2.Name]
			if r.Phase != string(tenancyv1alpha1.TenantPaused) {
				return itest.Errorf("%s shown as %q", t2.Name, r.Phase)
			}
			// Paused: no connection, so no queues, but the last sync before the pause stays.
			if r.LastSync == "never" || r.DownDepth != "–" || r.UpDepth != "–" {
				return itest.Errorf("paused %s shown as %+v", t2.Name, r)
			}
			return nil
		})
		// Everything else the script rendered is right too (the first check may have read
		// the server-rendered table).
		checkRows(t, b, c, weights, t1.Name)
	})

	t.Run("a downward queue burst is shown, then its drain", func(t *testing.T) {
		ns := "burst"
		itest.MustCreateNS(t, t1.Client, ns)
		fast := rest.CopyConfig(t1.RESTConfig)
		fast.QPS, fast.Burst = 2000, 2000
		cs := kubernetes.NewForConfigOrDie(fast)
		const n, parallel = 1500, 16
		var wg sync.WaitGroup
		errs := make(chan error, parallel)
		for w := range parallel {
			wg.Go(func() {
				for i := w; i < n; i += parallel {
					cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", i)}, Data: map[string]string{"i": strconv.Itoa(i)}}
					if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		var peak row
		itest.Eventually(t, time.Minute, t1.Name+" downward queue shown non-empty", func(context.Context) error {
			p, err := read(b)
			if err != nil {
				return err
			}
			r := p.byName()[t1.Name]
			if d, _ := strconv.Atoi(r.DownDepth); d == 0 || r.DownOldest == "–" {
				return itest.Errorf("downward depth %q oldest %q", r.DownDepth, r.DownOldest)
			}
			peak = r
			return nil
		})
		t.Logf("page showed %s with %s queued downward, oldest %s", t1.Name, peak.DownDepth, peak.DownOldest)
		if path := os.Getenv("VCSYNCER_STATUS_SCREENSHOT"); path != "" {
			if !filepath.IsAbs(path) {
				path = filepath.Join("..", "..", "..", path) // the repository root
			}
			b.screenshot(t, path)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("creating ConfigMaps in %s: %v", t1.Name, err)
		}
		itest.Eventually(t, 3*time.Minute, t1.Name+" downward queue shown drained", func(context.Context) error {
			p, err := read(b)
			if err != nil {
				return err
			}
			if r := p.byName()[t1.Name]; r.DownDepth != "0" || r.DownOldest != "–" {
				return itest.Errorf("downward depth %q oldest %q", r.DownDepth, r.DownOldest)
			}
			return nil
		})
		// Drained on the page means synced: the last ConfigMap has its super copy.
		superNS := ""
		if err := func() error {
			tn := &tenancyv1alpha1.Tenant{}
			if err := c.Get(ctx, client.ObjectKey{Name: t1.Name}, tn); err != nil {
				return err
			}
			superNS = tn.Status.SuperNamespacePrefix + ns
			return nil
		}(); err != nil {
			t.Fatal(err)
		}
		if _, err := env.Super.Client.CoreV1().ConfigMaps(superNS).Get(ctx, fmt.Sprintf("cm-%04d", n-1), metav1.GetOptions{}); err != nil {
			t.Errorf("page shows the queue drained, but the last ConfigMap is not in the super cluster: %v", err)
		}
	})

	t.Run("status.json lists every tenant", func(t *testing.T) {
		_, body := httpGet(ctx, url+"status.json")
		var snap struct {
			Leader  bool `json:"leader"`
			Tenants []struct {
				Name  string `json:"name"`
				Phase string `json:"phase"`
			} `json:"tenants"`
		}
		if err := json.Unmarshal([]byte(body), &snap); err != nil {
			t.Fatalf("status.json: %v\n%s", err, body)
		}
		if !snap.Leader || len(snap.Tenants) != len(weights) {
			t.Errorf("status.json: leader %v, %d tenants, want true and %d:\n%s", snap.Leader, len(snap.Tenants), len(weights), body)
		}
	})
}

// checkRows waits until the page shows exactly the Tenant objects, each with its phase, its
// weight and a last checkpoint of "never"; the synced tenants with a last sync and queue
// figures; the ones that never connected without.
func checkRows(t *testing.T, b *browser, c client.Client, weights map[string]int32, synced ...string) {
	t.Helper()
	itest.Eventually(t, 30*time.Second, "page rows match the Tenant objects", func(ctx context.Context) error {
		var list tenancyv1alpha1.TenantList
		if err := c.List(ctx, &list); err != nil {
			return err
		}
		p, err := read(b)
		if err != nil {
			return err
		}
		rows := p.byName()
		if len(rows) != len(list.Items) || len(rows) != len(weights) {
			return itest.Errorf("page shows %d tenants, %d Tenant objects exist: %+v", len(rows), len(list.Items), p.Rows)
		}
		for _, tn := range list.Items {
			r, ok := rows[tn.Name]
			switch {
			case !ok:
				return itest.Errorf("tenant %s not on the page", tn.Name)
			case !r.Visible:
				return itest.Errorf("row of %s is not visible", tn.Name)
			case r.Phase != string(tn.Status.Phase):
				return itest.Errorf("%s: page phase %q, Tenant phase %q", tn.Name, r.Phase, tn.Status.Phase)
			case r.Weight != strconv.Itoa(int(weights[tn.Name])):
				return itest.Errorf("%s: page weight %q, want %d", tn.Name, r.Weight, weights[tn.Name])
			case r.LastCheckpoint != "never":
				return itest.Errorf("%s: last checkpoint %q before any checkpointer exists", tn.Name, r.LastCheckpoint)
			}
		}
		// Synced tenants have synced something (their namespaces) and have queue figures;
		// the others have neither.
		for _, name := range synced {
			if r := rows[name]; r.LastSync == "never" || r.DownDepth == "–" || r.UpDepth == "–" {
				return itest.Errorf("%s: running tenant shows %+v", name, r)
			}
		}
		for _, name := range []string{"offline", "no-secret"} {
			if r := rows[name]; r.LastSync != "never" {
				return itest.Errorf("%s: tenant that never connected shows last sync %q", name, r.LastSync)
			}
		}
		if r := rows["offline"]; r.Reason == "" {
			return itest.Errorf("offline: no reason shown for phase %s", r.Phase)
		}
		return nil
	})
}

// read returns the page's tenant rows as the browser shows them.
func read(b *browser) (page, error) {
	var p page
	err := b.eval(readRows, &p)
	return p, err
}

// waitPhase waits until Tenant name reports phase.
func waitPhase(t *testing.T, c client.Client, name string, phase tenancyv1alpha1.TenantPhase) {
	t.Helper()
	itest.Eventually(t, 2*time.Minute, "Tenant "+name+" "+string(phase), func(ctx context.Context) error {
		tn := &tenancyv1alpha1.Tenant{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, tn); err != nil {
			return err
		}
		if tn.Status.Phase != phase {
			return itest.Errorf("phase %q", tn.Status.Phase)
		}
		return nil
	})
}

func httpGet(ctx context.Context, url string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}
