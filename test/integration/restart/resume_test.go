package restart_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// TestResumeWithinWatchWindow restarts the syncer gracefully, changes a few tenant objects
// while it is down, and checks the resume: every tenant informer resumes from the checkpoint's
// position (mode "watch", no LIST of synced kinds on either apiserver), only the changed
// objects are reconciled, and the changes converge.
func TestResumeWithinWatchWindow(t *testing.T) {
	testResume(t, nil, "watch")
}

// TestResumeAfterWatchExpired is the 410 test: the apiservers run without a watch cache and
// compact etcd every second, so the checkpoint's positions have expired by the time the syncer
// restarts. The informers list once more ("too old resource version", then a watch-list
// stream: no LIST request) and the syncer still reconciles only the objects that changed
// (mode "relist-diff").
func TestResumeAfterWatchExpired(t *testing.T) {
	testResume(t, []string{"--watch-cache=false", "--etcd-compaction-interval=1s"}, "relist-diff")
}

// watchedResources are resources the syncer's informers list in tenants and the super cluster,
// and nothing else in this test lists after start-up.
var watchedResources = []string{"configmaps", "pods", "services", "serviceaccounts", "namespaces", "endpoints"}

func testResume(t *testing.T, apiserverArgs []string, wantMode string) {
	testResumeFrom(t, apiserverArgs, wantMode, "", "")
}

// testResumeFrom is testResume where the first process runs binary from (built by the
// caller) and the restarted one binary to: an upgrade (or, swapped, a rollback). Empty: both
// run the repository's build.
func testResumeFrom(t *testing.T, apiserverArgs []string, wantMode, from, to string) {
	o := startOneTenantBin(t, apiserverArgs, "1s", from)
	env, tc, p, c, port, ckpt := o.env, o.tc, o.p, o.c, o.port, o.ckpt
	ctx := t.Context()
	superNS := conversion.SuperNamespace(tc.Name, itest.TenantUID(t, c, tc.Name), "app")
	itest.MustCreateNS(t, tc.Client, "app")
	const n = 30
	for i := range n {
		itest.Created(t)(tc.Client.CoreV1().ConfigMaps("app").Create(ctx, configMap(i, "v1"), metav1.CreateOptions{}))
	}
	itest.Created(t)(tc.Client.CoreV1().Pods("app").Create(ctx, pod("web-0"), metav1.CreateOptions{}))
	itest.Eventually(t, 2*time.Minute, "ConfigMaps synced and Pod Ready", func(ctx context.Context) error {
		cms, err := env.Super.Client.CoreV1().ConfigMaps(superNS).List(ctx, metav1.ListOptions{LabelSelector: "resume-test"})
		if err != nil || len(cms.Items) != n {
			return fmt.Errorf("%d super ConfigMaps (%w)", len(cms.Items), err)
		}
		return podReadyErr(ctx, tc.Client, "web-0")
	})
	before := readyTransition(t, tc.Client, "web-0")
	// A periodic checkpoint taken after the convergence with every queue item done and acked.
	itest.WaitCheckpoint(t, port, time.Now(), time.Minute)
	firstAdds := itest.ScrapeSum(t, port, "vcsyncer_queue_adds_total", map[string]string{"tenant": tc.Name})

	// Graceful stop: the final checkpoint is written.
	p.Stop(t)
	if _, err := os.Stat(ckpt); err != nil {
		t.Fatalf("no checkpoint after a graceful stop: %v", err)
	}
	if d := os.Getenv("VCSYNCER_KEEP_CHECKPOINT"); d != "" {
		data, _ := os.ReadFile(ckpt)
		_ = os.WriteFile(d, data, 0o600)
	}

	// Changes while the syncer is down.
	cm := configMap(1, "v2")
	if _, err := tc.Client.CoreV1().ConfigMaps("app").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := tc.Client.CoreV1().ConfigMaps("app").Delete(ctx, "cm-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	itest.Created(t)(tc.Client.CoreV1().ConfigMaps("app").Create(ctx, configMap(n, "v1"), metav1.CreateOptions{}))
	itest.Created(t)(tc.Client.CoreV1().Pods("app").Create(ctx, pod("web-1"), metav1.CreateOptions{}))
	if wantMode == "relist-diff" {
		// Let etcd compact past the checkpoint's positions (compaction runs every second and
		// keeps one interval of history), with writes in between so the revision moves on.
		for i := range 5 {
			time.Sleep(time.Second)
			for _, cs := range []kubernetes.Interface{tc.Client, env.Super.Client} {
				_, _ = cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{GenerateName: fmt.Sprintf("tick-%d-", i)}}, metav1.CreateOptions{})
			}
		}
	}
	tenantLists := apiserverLists(t, tc.Client)
	superLists := apiserverLists(t, env.Super.Client)

	if to != "" {
		p.SetBinary(to)
	}
	p.Start(t)
	itest.Eventually(t, 2*time.Minute, "changes made while down converged", func(ctx context.Context) error {
		if err := p.Exited(); err != nil {
			t.Fatal(err)
		}
		got, err := env.Super.Client.CoreV1().ConfigMaps(superNS).Get(ctx, "cm-1", metav1.GetOptions{})
		if err != nil || got.Data["v"] != "v2" {
			return fmt.Errorf("cm-1 not updated in the super cluster: %v %w", got.Data, err)
		}
		if _, err := env.Super.Client.CoreV1().ConfigMaps(superNS).Get(ctx, "cm-2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("cm-2 still in the super cluster (%w)", err)
		}
		if _, err := env.Super.Client.CoreV1().ConfigMaps(superNS).Get(ctx, fmt.Sprintf("cm-%d", n), metav1.GetOptions{}); err != nil {
			return fmt.Errorf("new ConfigMap not in the super cluster: %w", err)
		}
		return podReadyErr(ctx, tc.Client, "web-1")
	})
	// Stragglers in the queue show up in the counters: wait for a checkpoint, taken after the
	// convergence, that finds every queue empty.
	itest.WaitCheckpoint(t, port, time.Now(), time.Minute)

	modes := itest.ScrapeSeries(t, port, "vcsyncer_source_resume_mode", map[string]string{"tenant": tc.Name})
	if len(modes) == 0 {
		t.Fatal("no vcsyncer_source_resume_mode series for the tenant")
	}
	for labels, v := range modes {
		if v == 1 && strings.Contains(labels, `kind="ConfigMap"`) && !strings.Contains(labels, `mode="`+wantMode+`"`) {
			t.Errorf("tenant ConfigMap source resumed as %s, want mode %q", labels, wantMode)
		}
	}
	adds := itest.ScrapeSum(t, port, "vcsyncer_queue_adds_total", map[string]string{"tenant": tc.Name})
	t.Logf("queue adds for %s: first start %.0f, after the restart %.0f (4 objects changed while down)", tc.Name, firstAdds, adds)
	// Cold, the restart enqueues every object again, as the first start did (firstAdds);
	// resumed, only the changed objects, their super copies' events, the new Pod's status
	// updates and, after a 410, the tick ConfigMaps written while the syncer was down.
	if adds >= firstAdds/2 {
		t.Errorf("restart enqueued %.0f requests, the cold first start %.0f; want well under half (only changes)", adds, firstAdds)
	}
	after := readyTransition(t, tc.Client, "web-0")
	if !after.Equal(&before) {
		t.Errorf("web-0's Ready condition changed across the restart: lastTransitionTime %s, then %s", before, after)
	}
	tl, sl := apiserverLists(t, tc.Client), apiserverLists(t, env.Super.Client)
	for r, n := range tl {
		if d := n - tenantLists[r]; d != 0 && !slices.Contains(watchedResources, r) {
			t.Logf("LIST %s during the restart: tenant %.0f (not a synced kind)", r, d)
			// Within the watch window only the Event count lists (?limit=1): kinds the
			// syncer does not sync (opt-in kinds not opted in) are not counted.
			if wantMode == "watch" && r != "events" {
				t.Errorf("LIST %s during a resume within the watch window: tenant %.0f; want 0", r, d)
			}
		}
	}
	for _, r := range watchedResources {
		dt, ds := tl[r]-tenantLists[r], sl[r]-superLists[r]
		t.Logf("LIST %s during the restart: tenant %.0f, super %.0f", r, dt, ds)
		// Within the watch window nothing is listed; after a 410 the informers list again by
		// streams (watch-list), never by LIST requests.
		if dt != 0 || ds != 0 {
			t.Errorf("LIST %s during a resume (mode %s): tenant %.0f, super %.0f; want 0", r, wantMode, dt, ds)
		}
	}
	if to != "" {
		if d := itest.ScrapeSum(t, port, "vcsyncer_checkpoint_discarded_total", nil); d != 0 {
			t.Errorf("the upgraded syncer discarded %.0f checkpoints, want 0", d)
		}
	}
	if wantMode == "watch" {
		if avoided := itest.ScrapeSum(t, port, "vcsyncer_checkpoint_lists_avoided_total", nil); avoided < float64(len(watchedResources)) {
			t.Errorf("vcsyncer_checkpoint_lists_avoided_total = %.0f, want at least %d", avoided, len(watchedResources))
		}
	}
}

func configMap(i int, v string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "app", Labels: map[string]string{"resume-test": "true"}},
		Data:       map[string]string{"v": v},
	}
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "app"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}},
	}
}

func podReadyErr(ctx context.Context, cs kubernetes.Interface, name string) error {
	p, err := cs.CoreV1().Pods("app").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("tenant Pod %s not Ready (phase %q)", name, p.Status.Phase)
}

func readyTransition(t *testing.T, cs kubernetes.Interface, name string) metav1.Time {
	t.Helper()
	p, err := cs.CoreV1().Pods("app").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.LastTransitionTime
		}
	}
	t.Fatalf("tenant Pod %s has no Ready condition", name)
	return metav1.Time{}
}

// apiserverLists returns apiserver_request_total{verb="LIST"} of an apiserver by resource.
func apiserverLists(t *testing.T, cs kubernetes.Interface) map[string]float64 {
	return itest.APIServerRequests(t, cs, "LIST")
}

// oneTenant is a super cluster with one tenant and a `vc-syncer run` process on it.
type oneTenant struct {
	env  *localcluster.Environment
	tc   *localcluster.ControlPlane
	p    *itest.SyncerProc
	c    client.Client // the super cluster's
	port int           // the syncer's metrics port
	ckpt string        // the syncer's file checkpoint
}

// startOneTenant starts a super cluster and one tenant (extra kube-apiserver flags
// apiserverArgs), builds and starts `vc-syncer run` on it with a file checkpoint store written
// every interval, metrics on a free loopback port, no leader election and no remediation scans,
// registers the tenant and waits until it is Running (failing at once if the syncer exits).
func startOneTenant(t *testing.T, apiserverArgs []string, interval string) *oneTenant {
	t.Helper()
	return startOneTenantBin(t, apiserverArgs, interval, "")
}

// startOneTenantBin is startOneTenant running binary bin ("": the repository's, built here).
func startOneTenantBin(t *testing.T, apiserverArgs []string, interval, bin string) *oneTenant {
	t.Helper()
	if bin == "" {
		bin = itest.BuildSyncer(t)
	}
	var logPath string
	itest.KeepLog(t, &logPath)
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 1, Options: localcluster.Options{APIServerArgs: apiserverArgs}}, 1)
	o := &oneTenant{env: env, tc: env.Tenants[0], port: itest.FreePort(t), ckpt: filepath.Join(t.TempDir(), "ckpt")}
	args := []string{"run", "--super-kubeconfig", env.Super.KubeconfigPath,
		"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(o.port), "--metrics-secure=false", "--health-probe-bind-address", "0",
		"--leader-elect=false", "--remediation-interval", "0",
		"--checkpoint-store", "file:" + o.ckpt, "--checkpoint-interval", interval}
	o.p = itest.NewSyncerProc(t, bin, args)
	logPath = o.p.LogPath
	o.p.Start(t)
	ctx := t.Context()
	if err := app.InstallCRD(ctx, env.Super.RESTConfig); err != nil {
		t.Fatal(err)
	}
	var err error
	if o.c, err = client.New(env.Super.RESTConfig, client.Options{Scheme: app.Scheme()}); err != nil {
		t.Fatal(err)
	}
	if err := app.AddTenant(ctx, o.c, itest.KubeconfigNS, o.tc.Name, o.tc.Kubeconfig, 1); err != nil {
		t.Fatal(err)
	}
	itest.Eventually(t, 2*time.Minute, "Tenant Running", func(ctx context.Context) error {
		if err := o.p.Exited(); err != nil {
			t.Fatal(err)
		}
		tn := &tenancyv1alpha1.Tenant{}
		if err := o.c.Get(ctx, client.ObjectKey{Name: o.tc.Name}, tn); err != nil {
			return err
		}
		if tn.Status.Phase != tenancyv1alpha1.TenantRunning {
			return fmt.Errorf("phase %q", tn.Status.Phase)
		}
		return nil
	})
	return o
}
