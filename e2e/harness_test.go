package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// syncerProcess is a running `vc-syncer run`.
type syncerProcess struct {
	bin     string
	super   *localcluster.ControlPlane
	logPath string
	cmd     *exec.Cmd
	done    chan error
}

// startSyncer runs `vc-syncer run` against the super cluster until the test ends. The child
// dies with the test binary (Pdeathsig) and logs to a file that is kept when the test fails.
func startSyncer(t *testing.T, bin string, super *localcluster.ControlPlane) *syncerProcess {
	t.Helper()
	p := &syncerProcess{bin: bin, super: super, logPath: filepath.Join(t.TempDir(), "vc-syncer.log"), done: make(chan error, 1)}
	logFile, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, "run", "--super-kubeconfig", super.KubeconfigPath,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--zap-log-level", "debug", "--leader-elect=false",
		"--opt-in-kinds=Ingress,NetworkPolicy,PodDisruptionBudget,Event")
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("failed to start vc-syncer: %v", err)
	}
	go func() { p.done <- p.cmd.Wait(); logFile.Close() }()
	t.Logf("vc-syncer run started (pid %d), log %s", p.cmd.Process.Pid, p.logPath)
	t.Cleanup(func() {
		var exited bool
		select {
		case err := <-p.done:
			exited = true
			t.Errorf("vc-syncer exited before the end of the test: %v", err)
		default:
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case err := <-p.done:
				if err != nil {
					t.Logf("vc-syncer stopped on SIGTERM: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Errorf("vc-syncer did not stop within 30s of SIGTERM; killing it")
				_ = p.cmd.Process.Kill()
				t.Logf("vc-syncer killed: %v", <-p.done)
			}
		}
		if exited {
			t.Logf("vc-syncer log tail:\n%s", itest.Tail(p.logPath, 30))
		}
	})
	return p
}

// keepSyncerLog registers a cleanup that copies the syncer log (*logPath, once set) to the
// test's artifacts directory when the test failed. Register it before framework.StartT: the
// framework's cleanup empties that directory before copying the control-plane logs, and
// cleanups run last-registered first.
func keepSyncerLog(t *testing.T, logPath *string) {
	t.Cleanup(func() {
		if !t.Failed() || *logPath == "" {
			return
		}
		dest := filepath.Join(itest.ArtifactsDir(t), "vc-syncer.log")
		if err := copyFile(*logPath, dest); err != nil {
			t.Logf("failed to keep the vc-syncer log: %v", err)
		} else {
			t.Logf("vc-syncer log kept in %s", dest)
		}
	})
}

// exited reports an error when the syncer process is no longer running.
func (p *syncerProcess) exited() error {
	select {
	case err := <-p.done:
		p.done <- err
		return fmt.Errorf("vc-syncer exited: %w; log tail:\n%s", err, itest.Tail(p.logPath, 30))
	default:
		return nil
	}
}

// grepLog returns the syncer log lines that contain every one of words (at most max lines).
func (p *syncerProcess) grepLog(max int, words ...string) []string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		ok := true
		for _, w := range words {
			if !strings.Contains(line, w) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, line)
			if len(out) > max {
				out = out[1:]
			}
		}
	}
	return out
}

// addTenant registers a tenant control plane with `vc-syncer tenant add`, with its Service
// range (so tenant ClusterIPs are the super copies').
func (p *syncerProcess) addTenant(t *testing.T, cp *localcluster.ControlPlane) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), p.bin, "tenant", "add", cp.Name, "--service-cidr", cp.ServiceCIDR,
		"--kubeconfig", cp.KubeconfigPath, "--super-kubeconfig", p.super.KubeconfigPath).CombinedOutput()
	if err != nil {
		t.Fatalf("vc-syncer tenant add %s: %v\n%s", cp.Name, err, out)
	}
	t.Logf("vc-syncer tenant add %s: %s", cp.Name, strings.TrimSpace(string(out)))
}

var tenantGVR = schema.GroupVersionResource{Group: "tenancy.vcsyncer.io", Version: "v1alpha1", Resource: "tenants"}

// waitTenantRunning waits until Tenant name has status.phase Running and returns its UID.
func waitTenantRunning(t *testing.T, p *syncerProcess, superDyn dynamic.Interface, name string) string {
	t.Helper()
	var uid string
	err := poll(t.Context(), 2*time.Minute, time.Second, func(ctx context.Context) error {
		if err := p.exited(); err != nil {
			return stopPolling{err}
		}
		u, err := superDyn.Resource(tenantGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		phase, _ := unstructuredString(u.Object, "status", "phase")
		if phase != "Running" {
			return fmt.Errorf("Tenant %s is in phase %q, not Running; status: %v", name, phase, u.Object["status"])
		}
		uid = string(u.GetUID())
		return nil
	})
	if err != nil {
		t.Fatalf("Tenant %s did not become Running: %v", name, err)
	}
	return uid
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool) {
	cur := any(obj)
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		if cur, ok = m[f]; !ok {
			return "", false
		}
	}
	s, ok := cur.(string)
	return s, ok
}

// kubectl runs the kubectl built by hack/build-tools.sh against one control plane.
type kubectl struct {
	bin, kubeconfig, cacheDir string
}

func newKubectl(t *testing.T, cp *localcluster.ControlPlane) *kubectl {
	return &kubectl{
		bin:        filepath.Join(localcluster.ToolsDir(), "bin", "kubectl"),
		kubeconfig: cp.KubeconfigPath,
		cacheDir:   filepath.Join(t.TempDir(), "kubectl-cache"),
	}
}

// run runs kubectl with args and returns stdout, stderr and the exit error.
func (k *kubectl) run(ctx context.Context, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"--kubeconfig", k.kubeconfig, "--cache-dir", k.cacheDir}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// clusterClients are the dynamic client and REST mapper of one control plane.
type clusterClients struct {
	dyn    dynamic.Interface
	disc   discovery.DiscoveryInterface
	mapper meta.RESTMapper
}

func newClusterClients(t *testing.T, cp *localcluster.ControlPlane) *clusterClients {
	t.Helper()
	cfg := rest.CopyConfig(cp.RESTConfig)
	cfg.WarningHandler = rest.NoWarnings{} // listing every resource would print deprecation warnings
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &clusterClients{dyn: dyn, disc: disc}
	c.refreshMapper(t)
	return c
}

// refreshMapper rebuilds the REST mapper from discovery (call after installing CRDs).
func (c *clusterClients) refreshMapper(t *testing.T) {
	t.Helper()
	groups, err := restmapper.GetAPIGroupResources(c.disc)
	if err != nil {
		t.Fatalf("discovery failed: %v", err)
	}
	c.mapper = restmapper.NewDiscoveryRESTMapper(groups)
}

// listableResources returns every resource of the cluster that supports list, with its scope.
func (c *clusterClients) listableResources() ([]*meta.RESTMapping, error) {
	lists, err := c.disc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return nil, err
	}
	var out []*meta.RESTMapping
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !contains(r.Verbs, "list") {
				continue
			}
			scope := meta.RESTScopeRoot
			if r.Namespaced {
				scope = meta.RESTScopeNamespace
			}
			out = append(out, &meta.RESTMapping{
				Resource:         gv.WithResource(r.Name),
				GroupVersionKind: gv.WithKind(r.Kind),
				Scope:            scope,
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource.String() < out[j].Resource.String() })
	return out, nil
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// stopPolling wraps an error that makes poll give up at once.
type stopPolling struct{ error }

// poll calls check every interval until it returns nil or timeout passes; it then returns
// check's last error. A stopPolling error ends the poll at once.
func poll(ctx context.Context, timeout, interval time.Duration, check func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	for {
		callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := check(callCtx)
		cancel()
		if err == nil {
			return nil
		}
		var stop stopPolling
		if errors.As(err, &stop) {
			return stop.error
		}
		if time.Now().Add(interval).After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("still failing after %s: %w", timeout, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}

// eventually calls check every interval until it reports no problem or timeout passes, and
// returns the problems of the last call (nil on success).
func eventually(ctx context.Context, timeout, interval time.Duration, check func(context.Context) []string) []string {
	deadline := time.Now().Add(timeout)
	for {
		callCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
		problems := check(callCtx)
		cancel()
		if len(problems) == 0 {
			return nil
		}
		if time.Now().Add(interval).After(deadline) || ctx.Err() != nil {
			return problems
		}
		select {
		case <-ctx.Done():
			return problems
		case <-time.After(interval):
		}
	}
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}
