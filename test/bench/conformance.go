package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/localcluster"
)

// conformanceFocus selects the Kubernetes project's conformance tests.
const conformanceFocus = `\[Conformance\]`

// conformanceSkip is one skip expression of the conformance subset with the reason for it.
type conformanceSkip struct {
	Pattern string `json:"pattern"`
	Reason  string `json:"reason"`
}

// conformanceSkips are the conformance tests left out of the comparison, each for a reason
// that holds on the local super cluster itself: its kwok Nodes run no containers (no exec,
// logs, files written by a container, probes or Pod network), and the run is parallel.
var conformanceSkips = []conformanceSkip{
	{`\[Serial\]|\[Disruptive\]`, "changes cluster-wide state (Node taints and labels, preemption, evictions) and cannot share a parallel run"},
	{`\[sig-storage\] (ConfigMap|Secrets|Projected|Downward API volume|EmptyDir|Subpath|HostPath)`, "reads files a container wrote or sees in its volumes (container output; kwok runs no containers)"},
	{`\[sig-node\] (Downward API|ConfigMap should be consumable via (environment variable|the environment)|Secrets should be consumable (from pods in env|via the environment)|Variable Expansion|Containers should|Docker Containers|Security Context|Sysctls|Kubelet|Container Runtime|Container Lifecycle Hook|InitContainer|Probing container|PreStop|Ephemeral Containers|Pods Extended|ImageCredentialProvider)`, "checks what a running container prints, its exit code, probes or kubelet behaviour (kwok runs no containers)"},
	{`should (support remote command execution|support retrieving logs|be able to .*exec|contain environment variables for services)|\[sig-node\] Pods should get a host IP|Pods should be updated|Pods should delete a collection|Pods should run through the lifecycle`, "exec, logs or a container's environment (kwok runs no containers)"},
	{`\[sig-network\] (DNS|Networking|Proxy|HostPort|Service endpoints latency)|\[sig-network\] Services should (serve|be able to (change|switch|create a functioning)|have session affinity)|\[sig-network\] .*(connectivity|should function for)`, "needs Pod networking or a DNS or proxy backend in a Pod (kwok Pods serve no traffic)"},
	{`AdmissionWebhook|CustomResourceConversionWebhook|Aggregator|sample-apiserver|CustomResourceDefinition resources \[Privileged:ClusterAdmin\] .*conversion`, "needs a webhook or an extension apiserver served by a Pod (kwok Pods serve no traffic)"},
	{`\[sig-cli\]`, "kubectl tests run guestbook, proxy, port-forward, exec or logs against running containers"},
	{`ServiceAccounts should (mount|allow opting out|run through the lifecycle of a ServiceAccount|guarantee kube-root-ca.crt exist in any namespace|update a ServiceAccount)|ServiceAccountIssuerDiscovery`, "reads a mounted token from inside a container, or serves OIDC discovery to a Pod"},
	{`ClusterTrustBundleProjection\] should (be able to mount|be capable to mount|prevent a pod from starting)|Projected PodCertificate|ImageVolume|Pod InPlace Resize|consumable as environment variable names|Pods should allow activeDeadlineSeconds`, "needs a kubelet: mounted trust bundles and certificates, image volumes, in-place resize, a container's environment, deadlines enforced on a running container"},
	{`\[sig-apps\] Job (should adopt matching orphans|should apply changes to a job status|should delete a job|with successPolicy|should allow to use (a|the) pod failure policy|should execute all indexes despite|should terminate job execution when the number of failed|should mark indexes as failed|should run a job to completion when tasks sometimes fail|should create pods for an Indexed job)`, "kwok finishes every Job Pod within a second with exit code 0: tests that need Job Pods to stay active, fail or exit with a given code race it and wait out 15-minute timeouts"},
	{`Should recreate evicted statefulset|deployment should support proportional scaling|should be able to specify multiple CTB volumes|EndpointSlice should support a Service with multiple (endpoint IPs|ports) specified`, "needs a kubelet that refuses a Pod (hostPort conflict), Pods that stay unavailable, mounted trust bundles, or Pod traffic; each waits out a timeout of 2 to 5 minutes"},
	{`\[sig-apps\] (Daemon set|CronJob should (schedule multiple jobs concurrently|replace jobs when ReplaceConcurrent|not schedule jobs when suspended|not schedule new jobs when ForbidConcurrent))|StatefulSet Basic StatefulSet functionality \[StatefulSetBasic\] (Burst scaling|Scaling should happen in predictable order|should perform rolling updates and roll backs)`, "waits minutes for schedules or for Pods to run and exit (kwok never finishes a Pod outside a Job), or execs into Pods"},
}

// conformanceSmokeFocus is the parity smoke the README's test command runs: a dozen fast tests
// over the kinds a tenant uses most (ConfigMaps, Secrets, Pods, Services, EndpointSlices,
// ReplicaSets, ReplicationControllers, Deployments, Leases, LimitRanges, RuntimeClasses,
// ResourceQuotas), none of which races kwok.
var conformanceSmokeFocus = []string{
	`\[sig-node\] ConfigMap should run through a ConfigMap lifecycle`,
	`\[sig-node\] Secrets should patch a secret`,
	`\[sig-node\] Pods should patch a pod status`,
	`\[sig-network\] EndpointSlice should support creating EndpointSlice API operations`,
	`\[sig-network\] Services should delete a collection of services`,
	`\[sig-apps\] ReplicaSet should adopt matching pods on creation and release no longer matching pods`,
	`\[sig-apps\] Deployment deployment should support rollover`,
	`\[sig-apps\] ReplicationController should adopt matching pods on creation`,
	`\[sig-node\] Lease lease API should be available`,
	`\[sig-scheduling\] LimitRange should create a LimitRange with defaults and ensure pod has those defaults applied`,
	`\[sig-node\] RuntimeClass should schedule a Pod requesting a RuntimeClass and initialize its Overhead`,
	`\[sig-api-machinery\] ResourceQuota should create a ResourceQuota and capture the life of a configMap`,
}

// conformanceConfig holds the conformance comparison's flags.
type conformanceConfig struct {
	out, results string
	procs, nodes int
	timeout      time.Duration
	smoke        bool
}

// conformanceSide is what one run of the subset gave against one cluster.
type conformanceSide struct {
	Passed []string          `json:"passed"`
	Failed map[string]string `json:"failed"` // test name → failure message
	// Skipped counts the specs ginkgo skipped: left out by focus and skip, or by the test itself.
	Skipped int `json:"skipped"`
	skipped map[string]bool
	Seconds float64 `json:"seconds"`
}

// conformanceResult is docs/conformance/result.json. The keys superPassed, tenantPassed,
// selected and onlySuperPassed are the contract of the conformance issue.
type conformanceResult struct {
	Date            string            `json:"date"`
	Kubernetes      string            `json:"kubernetes"`
	Smoke           bool              `json:"smoke"`
	Procs           int               `json:"procs"`
	Focus           []string          `json:"focus"`
	Skip            []conformanceSkip `json:"skip"`
	Selected        int               `json:"selected"`
	SuperPassed     int               `json:"superPassed"`
	TenantPassed    int               `json:"tenantPassed"`
	OnlySuperPassed []parityFailure   `json:"onlySuperPassed"`
	// OnlyTenantPassed are tests that failed on the super cluster and passed on the tenant
	// (kwok's limits showing on one side only, or flakes).
	OnlyTenantPassed []string        `json:"onlyTenantPassed"`
	Super            conformanceSide `json:"super"`
	Tenant           conformanceSide `json:"tenant"`
}

// parityFailure is a test that passed on the super cluster and failed on the tenant.
type parityFailure struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

func runConformance(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("conformance", flag.ExitOnError)
	var c conformanceConfig
	fs.StringVar(&c.out, "out", "bench-out/conformance", "directory for the JUnit reports, ginkgo output and component logs")
	fs.StringVar(&c.results, "results", "", "directory for result.json and result.md (default: --out)")
	fs.IntVar(&c.procs, "procs", 8, "parallel ginkgo processes per run")
	fs.IntVar(&c.nodes, "nodes", 3, "kwok Nodes in the super cluster")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Minute, "ginkgo suite timeout of each run (super, then tenant)")
	fs.BoolVar(&c.smoke, "smoke", false, "run the parity smoke (a dozen fast tests) instead of the whole subset")
	_ = fs.Parse(args)
	if c.results == "" {
		c.results = c.out
	}
	// Absolute: ginkgo runs e2e.test in the binary's directory, where a relative
	// --report-dir would land.
	out, err := filepath.Abs(c.out)
	if err != nil {
		return err
	}
	c.out = out
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	tools, err := ensureE2ETools(ctx)
	if err != nil {
		return err
	}
	bin, err := buildSyncer(ctx)
	if err != nil {
		return err
	}
	devDir := filepath.Join(c.out, "dev")
	stop, err := startDev(ctx, bin, devDir, c.nodes, filepath.Join(c.out, "dev.log"))
	if err != nil {
		return err
	}
	defer stop()
	focus := []string{conformanceFocus}
	if c.smoke {
		focus = conformanceSmokeFocus
	}
	res := conformanceResult{
		Date: time.Now().UTC().Format(time.RFC3339), Kubernetes: "v1.37.2", Smoke: c.smoke, Procs: c.procs,
		Focus: focus, Skip: conformanceSkips,
	}
	for _, side := range []struct {
		name string
		dst  *conformanceSide
	}{{"super", &res.Super}, {"tenant", &res.Tenant}} {
		kc := filepath.Join(devDir, side.name+".kubeconfig")
		if side.name == "tenant" {
			kc = filepath.Join(devDir, "tenant-1.kubeconfig")
			if err := warmUpTenant(ctx, kc); err != nil {
				return fmt.Errorf("the tenant's warm-up Pod %s/warm-up is not Running: %w (see %s)", warmUpNamespace, err, filepath.Join(c.out, "dev.log"))
			}
		}
		logf("conformance: %s run against %s (%d processes; follow it with tail -f %s)", side.name, kc, c.procs,
			filepath.Join(c.out, side.name, "ginkgo.log"))
		s, err := runE2E(ctx, tools, kc, filepath.Join(c.out, side.name), focus, c)
		if err != nil {
			return fmt.Errorf("%s run: %w", side.name, err)
		}
		*side.dst = s
		logf("conformance: %s: %d passed, %d failed in %.0fs", side.name, len(s.Passed), len(s.Failed), s.Seconds)
	}
	res.compare()
	if err := os.MkdirAll(c.results, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.results, "result.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.results, "result.md"), []byte(res.markdown(args)), 0o644); err != nil {
		return err
	}
	logf("conformance: selected %d, super passed %d, tenant passed %d, only on super: %d",
		res.Selected, res.SuperPassed, res.TenantPassed, len(res.OnlySuperPassed))
	return nil
}

// ensureE2ETools returns the tools directory with e2e.test and ginkgo in bin/, building them
// (hack/build-tools.sh e2e, about 11 minutes on 2 cores) when missing.
func ensureE2ETools(ctx context.Context) (string, error) {
	dir := localcluster.ToolsDir()
	if fileExists(filepath.Join(dir, "bin", "e2e.test")) && fileExists(filepath.Join(dir, "bin", "ginkgo")) && localcluster.CheckTools(dir) == nil {
		return dir, nil
	}
	logf("building the control-plane tools, e2e.test and ginkgo (hack/build-tools.sh e2e)")
	cmd := exec.CommandContext(ctx, "hack/build-tools.sh", "e2e")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("hack/build-tools.sh e2e: %w", err)
	}
	return dir, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// startDev runs `vc-syncer dev` with one tenant into dir and waits until the tenant is
// Running. The returned function stops it (SIGTERM, then waits).
func startDev(ctx context.Context, bin, dir string, nodes int, logPath string) (func(), error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "dev", "--tenants", "1", "--nodes", fmt.Sprint(nodes), "--dir", dir,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0")
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				logf("conformance: vc-syncer dev: %v", err)
			}
		case <-time.After(45 * time.Second):
			_ = cmd.Process.Kill()
		}
		f.Close()
	}
	var cl client.Client // built once dev has written its kubeconfigs
	err = wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			if err == nil {
				err = errors.New("exit status 0")
			}
			return false, fmt.Errorf("vc-syncer dev exited (%w); see %s", err, logPath)
		default:
		}
		if cl == nil {
			if !fileExists(filepath.Join(dir, "tenant-1.kubeconfig")) {
				return false, nil
			}
			cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "super.kubeconfig"))
			if err != nil {
				return false, nil
			}
			if cl, err = client.New(cfg, client.Options{Scheme: app.Scheme()}); err != nil {
				return false, nil
			}
		}
		var tl tenancyv1alpha1.TenantList
		if err := cl.List(ctx, &tl); err != nil || len(tl.Items) == 0 {
			return false, nil
		}
		return tl.Items[0].Status.Phase == tenancyv1alpha1.TenantRunning, nil
	})
	if err != nil {
		stop()
		return nil, fmt.Errorf("waiting for vc-syncer dev's tenant: %w", err)
	}
	logf("conformance: vc-syncer dev is up in %s", dir)
	return stop, nil
}

// warmUpNamespace holds the Pod warmUpTenant runs in the tenant for the whole tenant run.
const warmUpNamespace = "conformance-warm-up"

// warmUpTenant runs one Pod in the tenant behind kubeconfig kc and waits until it is Running,
// so the tenant has a Node (the vNode of the super Node the Pod runs on) before the tests
// start: a tenant shows only the vNodes of super Nodes that host its Pods, while the tests, as
// in any real cluster, expect Nodes before anything runs (some pick one at random).
func warmUpTenant(ctx context.Context, kc string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: warmUpNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "warm-up"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10.2"}},
	}}
	return wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(warmUpNamespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			// The namespace's default ServiceAccount may not exist yet: retry the create.
			_, _ = cs.CoreV1().Pods(warmUpNamespace).Create(ctx, pod, metav1.CreateOptions{})
			return false, nil
		}
		if err != nil {
			return false, nil
		}
		return p.Status.Phase == corev1.PodRunning, nil
	})
}

// runE2E runs e2e.test under ginkgo against kubeconfig kc with the subset's focus and skip
// expressions, and reads its JUnit report from reportDir.
func runE2E(ctx context.Context, tools, kc, reportDir string, focus []string, c conformanceConfig) (conformanceSide, error) {
	if err := os.RemoveAll(reportDir); err != nil {
		return conformanceSide{}, err
	}
	if err := os.MkdirAll(reportDir, 0o755); err != nil {
		return conformanceSide{}, err
	}
	args := []string{"--procs", fmt.Sprint(c.procs), "--timeout", c.timeout.String(), "--no-color", "--silence-skips"}
	for _, f := range focus {
		args = append(args, "--focus", f)
	}
	for _, s := range conformanceSkips {
		args = append(args, "--skip", s.Pattern)
	}
	args = append(args, filepath.Join(tools, "bin", "e2e.test"), "--",
		"--kubeconfig", kc, "--provider", "skeleton", "--report-dir", reportDir,
		"--kubectl-path", filepath.Join(tools, "bin", "kubectl"),
		// A tenant has no Nodes until its first Pod is bound to a vNode, and runs no kube-system Pods.
		"--num-nodes", fmt.Sprint(c.nodes), "--allowed-not-ready-nodes", "-1", "--minStartupPods", "0",
		"--disable-log-dump")
	out, err := os.Create(filepath.Join(reportDir, "ginkgo.log"))
	if err != nil {
		return conformanceSide{}, err
	}
	defer out.Close()
	start := time.Now()
	cmd := exec.CommandContext(ctx, filepath.Join(tools, "bin", "ginkgo"), args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	runErr := cmd.Run()
	var exit *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exit) {
		return conformanceSide{}, runErr // ginkgo did not run; a failing test exits non-zero
	}
	s, err := readJUnit(filepath.Join(reportDir, "junit_01.xml"))
	if err != nil {
		if runErr != nil {
			return conformanceSide{}, fmt.Errorf("%w (ginkgo: %w; see %s)", err, runErr, out.Name())
		}
		return conformanceSide{}, fmt.Errorf("%w (see %s)", err, out.Name())
	}
	s.Seconds = time.Since(start).Seconds()
	return s, nil
}

type junitSuites struct {
	Suites []struct {
		Cases []struct {
			Name    string `xml:"name,attr"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// readJUnit reads the passed, failed and skipped tests of a ginkgo JUnit report. Setup nodes
// (BeforeSuite, ReportAfterSuite and the like) are not tests and are left out.
func readJUnit(path string) (conformanceSide, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return conformanceSide{}, err
	}
	var js junitSuites
	if err := xml.Unmarshal(b, &js); err != nil {
		return conformanceSide{}, fmt.Errorf("%s: %w", path, err)
	}
	s := conformanceSide{Failed: map[string]string{}, skipped: map[string]bool{}}
	for _, suite := range js.Suites {
		for _, tc := range suite.Cases {
			if !strings.HasPrefix(tc.Name, "[It] ") {
				continue
			}
			name := strings.TrimPrefix(tc.Name, "[It] ")
			switch {
			case tc.Skipped != nil:
				s.Skipped++
				s.skipped[name] = true
			case tc.Failure != nil:
				s.Failed[name] = firstLine(tc.Failure.Message, tc.Failure.Text)
			case tc.Error != nil:
				s.Failed[name] = firstLine(tc.Error.Message, "")
			default:
				s.Passed = append(s.Passed, name)
			}
		}
	}
	sort.Strings(s.Passed)
	return s, nil
}

// firstLine returns a failure's reason in one line of at most 400 bytes.
func firstLine(msg, text string) string {
	if strings.TrimSpace(msg) == "" {
		msg = text
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 400 {
		msg = msg[:400] + "…"
	}
	return msg
}

// compare fills the counts and the parity lists from the two sides.
func (r *conformanceResult) compare() {
	onSuper, onTenant := map[string]bool{}, map[string]bool{}
	for _, n := range r.Super.Passed {
		onSuper[n] = true
	}
	for _, n := range r.Tenant.Passed {
		onTenant[n] = true
	}
	// A report names each test once: selected is what ran on the super cluster.
	r.Selected = len(r.Super.Passed) + len(r.Super.Failed)
	r.SuperPassed, r.TenantPassed = len(r.Super.Passed), len(r.Tenant.Passed)
	r.OnlySuperPassed, r.OnlyTenantPassed = []parityFailure{}, []string{}
	for _, n := range r.Super.Passed {
		if !onTenant[n] {
			reason, ok := r.Tenant.Failed[n]
			switch {
			case ok:
			case r.Tenant.skipped[n]:
				reason = "skipped itself on the tenant (see its ginkgo.log)"
			default:
				reason = "did not run on the tenant (suite timeout or interrupted)"
			}
			r.OnlySuperPassed = append(r.OnlySuperPassed, parityFailure{Name: n, Reason: reason})
		}
	}
	for _, n := range r.Tenant.Passed {
		if !onSuper[n] {
			r.OnlyTenantPassed = append(r.OnlyTenantPassed, n)
		}
	}
	sort.Strings(r.OnlyTenantPassed)
}

// markdown renders result.md: the counts, the parity failures, the subset's expressions and
// the reason of every skip.
func (r *conformanceResult) markdown(args []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Conformance parity (%s)\n\n", r.Date[:10])
	fmt.Fprintf(&b, "Command: `go run ./test/bench conformance %s`\n\n", strings.Join(args, " "))
	fmt.Fprintf(&b, "Kubernetes %s `e2e.test`, ginkgo with %d processes; (A) the local super cluster "+
		"(kwok Nodes) directly, then (B) a tenant served by vc-syncer, both started by `vc-syncer dev`. "+
		"Before (B), one Pod runs in the tenant's namespace %s for the whole run: a tenant shows the vNodes of the "+
		"super Nodes its Pods run on, and no Node before its first Pod, while the tests expect Nodes from the start "+
		"(the VolumeAttachment test picks one at random).\n\n", r.Kubernetes, r.Procs, warmUpNamespace)
	fmt.Fprintf(&b, "| | super cluster | tenant |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| selected | %d | %d |\n", r.Selected, r.Selected)
	fmt.Fprintf(&b, "| passed | %d | %d |\n", r.SuperPassed, r.TenantPassed)
	fmt.Fprintf(&b, "| failed | %d | %d |\n", len(r.Super.Failed), len(r.Tenant.Failed))
	fmt.Fprintf(&b, "| run time | %.0f s | %.0f s |\n\n", r.Super.Seconds, r.Tenant.Seconds)
	fmt.Fprintf(&b, "## Passed on the super cluster, failed on the tenant (onlySuperPassed): %d\n\n", len(r.OnlySuperPassed))
	for _, f := range r.OnlySuperPassed {
		fmt.Fprintf(&b, "- %s\n  - %s\n", f.Name, f.Reason)
	}
	fmt.Fprintf(&b, "\n## Passed on the tenant, failed on the super cluster: %d\n\n", len(r.OnlyTenantPassed))
	for _, n := range r.OnlyTenantPassed {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	fmt.Fprintf(&b, "\n## The subset\n\nFocus (any of):\n\n")
	for _, f := range r.Focus {
		fmt.Fprintf(&b, "- `%s`\n", f)
	}
	fmt.Fprintf(&b, "\nSkip (any of), with the reason, which holds on the super cluster itself:\n\n")
	for _, s := range r.Skip {
		fmt.Fprintf(&b, "- `%s`: %s\n", s.Pattern, s.Reason)
	}
	fmt.Fprintf(&b, "\n## Failures on both sides\n\n")
	var both []string
	for n, reason := range r.Super.Failed {
		if _, ok := r.Tenant.Failed[n]; ok {
			both = append(both, fmt.Sprintf("- %s\n  - super: %s", n, reason))
		}
	}
	sort.Strings(both)
	b.WriteString(strings.Join(both, "\n"))
	b.WriteString("\n")
	return b.String()
}
