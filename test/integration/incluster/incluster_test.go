package incluster_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

const (
	leaseNS   = itest.KubeconfigNS
	leaseName = "vc-syncer.tenancy.vcsyncer.io"
	// grace is the --graceful-shutdown-timeout given to the replicas.
	grace = 10 * time.Second
)

// replica is one running `vc-syncer run` process.
type replica struct {
	name            string
	cmd             *exec.Cmd
	metrics, health string // host:port
	logPath         string
	exited          chan struct{}
	exitErr         error
}

func TestTwoReplicas(t *testing.T) {
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 1}, 1)
	bin := itest.BuildSyncer(t)
	kubeconfig := filepath.Join(t.TempDir(), "super.kubeconfig")
	if err := os.WriteFile(kubeconfig, env.Super.Kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	leases := env.Super.Client.CoordinationV1().Leases(leaseNS)

	a := startReplica(t, bin, "a", kubeconfig)
	waitReady(t, a)
	itest.Eventually(t, time.Minute, "replica a holds the Lease", func(ctx context.Context) error {
		return leaderIs(ctx, env, a)
	})
	b := startReplica(t, bin, "b", kubeconfig)

	c, err := client.New(env.Super.RESTConfig, client.Options{Scheme: app.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	t1 := env.Tenants[0]
	if err := itest.AddTenant(ctx, c, itest.KubeconfigNS, t1, 1); err != nil {
		t.Fatal(err)
	}
	itest.WaitRunning(t, c, t1.Name)

	t.Run("the standby is ready and reports itself as standby", func(t *testing.T) {
		waitReady(t, b)
		if leader := statusLeader(t, b); leader {
			t.Error("standby's status.json says leader")
		}
		if leader := statusLeader(t, a); !leader {
			t.Error("leader's status.json says standby")
		} // Warm standby: its super caches run before it wins (the Warmup runnable), so its
		// super sources already report how they started.
		itest.Eventually(t, 30*time.Second, "standby's super caches started", func(context.Context) error {
			_, body := get(b.metrics + "/metrics")
			if !regexp.MustCompile(`vcsyncer_source_resume_mode\{kind="Pod",mode="[a-z-]+",tenant="_super"\} 1`).MatchString(body) {
				return errors.New("no vcsyncer_source_resume_mode series for the super cluster's Pods on the standby")
			}
			return nil
		})
	})

	t.Run("SIGTERM: the leader stops within the grace period and hands the Lease over", func(t *testing.T) {
		stopped := time.Now()
		if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case <-a.exited:
		case <-time.After(grace + 5*time.Second):
			t.Fatalf("replica a still running %s after SIGTERM (--graceful-shutdown-timeout=%s)", grace+5*time.Second, grace)
		}
		t.Logf("replica a exited %s after SIGTERM: %v", time.Since(stopped).Round(10*time.Millisecond), a.exitErr)
		if a.exitErr != nil {
			t.Errorf("replica a exited with %v, want status 0", a.exitErr)
		}
		// The Lease lasts 15 s and was renewed at most 2 s before SIGTERM: a takeover well
		// before 13 s means it was released, not left to expire.
		itest.Eventually(t, 10*time.Second, "replica b holds the Lease", func(ctx context.Context) error {
			return leaderIs(ctx, env, b)
		})
		t.Logf("replica b leads %s after replica a's SIGTERM", time.Since(stopped).Round(10*time.Millisecond))
		itest.Eventually(t, 30*time.Second, "replica b ready and reporting itself leader", func(context.Context) error {
			if code, body := get(b.health + "/readyz"); code != http.StatusOK {
				return fmt.Errorf("/readyz %d: %s", code, body)
			}
			if !statusLeader(t, b) {
				return errors.New("status.json still says standby")
			}
			return nil
		})
		// The new leader syncs: a new tenant namespace gets its super copy.
		itest.MustCreateNS(t, t1.Client, "after-failover")
		tn := &tenancyv1alpha1.Tenant{}
		if err := c.Get(ctx, client.ObjectKey{Name: t1.Name}, tn); err != nil {
			t.Fatal(err)
		}
		superNS := tn.Status.SuperNamespacePrefix + "after-failover"
		itest.Eventually(t, time.Minute, "namespace synced by the new leader", func(ctx context.Context) error {
			_, err := env.Super.Client.CoreV1().Namespaces().Get(ctx, superNS, metav1.GetOptions{})
			return err
		})
		if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case <-b.exited:
		case <-time.After(grace + 5*time.Second):
			t.Fatalf("replica b still running %s after SIGTERM", grace+5*time.Second)
		}
		l, err := leases.Get(ctx, leaseName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if h := l.Spec.HolderIdentity; h != nil && *h != "" {
			t.Errorf("Lease still held by %q after the last replica stopped", *h)
		}
	})

	t.Run("in a Pod every log line is JSON", func(t *testing.T) {
		for _, r := range []*replica{a, b} {
			f, err := os.Open(r.logPath)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				if len(sc.Bytes()) == 0 {
					continue
				}
				n++
				var entry map[string]any
				if err := json.Unmarshal(sc.Bytes(), &entry); err != nil || entry["msg"] == nil || entry["level"] == nil {
					t.Errorf("replica %s: log line %d is not a JSON entry with level and msg: %s", r.name, n, sc.Text())
					break
				}
			}
			f.Close()
			if n < 5 {
				t.Errorf("replica %s logged only %d lines", r.name, n)
			}
		}
	})
}

// startReplica runs `vc-syncer run` as a Deployment's container would: with
// $KUBERNETES_SERVICE_HOST set and no logging or leader-election flags.
func startReplica(t *testing.T, bin, name, kubeconfig string) *replica {
	t.Helper()
	r := &replica{
		name: name, metrics: "127.0.0.1:" + freePort(t), health: "127.0.0.1:" + freePort(t),
		logPath: filepath.Join(t.TempDir(), "vc-syncer-"+name+".log"), exited: make(chan struct{}),
	}
	logFile, err := os.Create(r.logPath)
	if err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(bin, "run", "--super-kubeconfig", kubeconfig, "--install-crds=true",
		"--metrics-bind-address", r.metrics, "--health-probe-bind-address", r.health,
		// Plain HTTP on loopback: this test reads the status page of each replica to tell the
		// leader; authenticated serving is test/integration/deploy's subject.
		"--metrics-secure=false",
		"--graceful-shutdown-timeout", grace.String())
	r.cmd.Env = append(os.Environ(), "KUBERNETES_SERVICE_HOST=10.96.0.1", "KUBERNETES_SERVICE_PORT=443")
	r.cmd.Stdout, r.cmd.Stderr = logFile, logFile
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.exitErr = r.cmd.Wait()
		logFile.Close()
		close(r.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-r.exited:
		default:
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
		if t.Failed() {
			if data, err := os.ReadFile(r.logPath); err == nil {
				if len(data) > 6000 {
					data = data[len(data)-6000:]
				}
				t.Logf("replica %s log tail:\n%s", name, data)
			}
		}
	})
	return r
}

// waitReady waits until r's /readyz and its status.json both answer 200.
func waitReady(t *testing.T, r *replica) {
	t.Helper()
	itest.Eventually(t, 2*time.Minute, "replica "+r.name+" ready", func(context.Context) error {
		select {
		case <-r.exited:
			return fmt.Errorf("exited: %w", r.exitErr)
		default:
		}
		if code, body := get(r.health + "/readyz?verbose"); code != http.StatusOK {
			return fmt.Errorf("/readyz %d: %s", code, body)
		}
		// The metrics server (which serves the status page) starts beside the health probe
		// server, not before it: a replica can be ready a moment before status.json answers.
		if code, body := get(r.metrics + "/status.json"); code != http.StatusOK {
			return fmt.Errorf("status.json %d: %s", code, body)
		}
		return nil
	})
}

// leaderIs returns nil when the syncer's Lease is held by replica r (controller-runtime's
// identity is "<hostname>_<uuid>", so r is recognised through its status page).
func leaderIs(ctx context.Context, env *localcluster.Environment, r *replica) error {
	l, err := env.Super.Client.CoordinationV1().Leases(leaseNS).Get(ctx, leaseName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return errors.New("Lease not held")
	}
	code, body := get(r.metrics + "/status.json")
	if code != http.StatusOK {
		return fmt.Errorf("status.json of %s: %d", r.name, code)
	}
	var s struct {
		Leader bool `json:"leader"`
	}
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		return err
	}
	if !s.Leader {
		return fmt.Errorf("Lease held by %s, not replica %s", *l.Spec.HolderIdentity, r.name)
	}
	return nil
}

func statusLeader(t *testing.T, r *replica) bool {
	t.Helper()
	code, body := get(r.metrics + "/status.json")
	if code != http.StatusOK {
		t.Fatalf("status.json of %s: %d %s", r.name, code, body)
	}
	var s struct {
		Leader bool `json:"leader"`
	}
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatal(err)
	}
	return s.Leader
}

func get(hostPath string) (int, string) {
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + hostPath)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func freePort(t *testing.T) string {
	t.Helper()
	return fmt.Sprint(itest.FreePort(t))
}
