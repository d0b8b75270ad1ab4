package app

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	"github.com/vcsyncer/syncer/pkg/localcluster"
)

func newDevCommand() *cobra.Command {
	var tenants, nodes int
	var dir string
	o := options.NewOptions()
	o.MetricsBindAddress = "127.0.0.1:8080"
	// Plain HTTP without authentication, so a browser opens the status page: dev listens on
	// loopback, where only this machine's users reach it.
	o.MetricsSecure = false
	o.HealthProbeBindAddress = "127.0.0.1:8081"
	o.LeaderElect = false // one local syncer: no Lease to wait for after a restart
	o.LogFormat = options.LogFormatConsole
	// The vNodes' kubelet API on loopback, where the tenant apiservers run (not 10250, which a
	// real kubelet on this machine may hold).
	o.KubeletBindAddress = "127.0.0.1:10260"
	// kwok serves each fake Node's resource metrics under its own path; the local super
	// cluster is the developer's own, so its node stats are on.
	o.KubeletSuperMetricsPath = localcluster.KwokMetricsPath
	o.KubeletNodeStats = true
	var superExec bool
	var superPortForward string
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a local super cluster, tenants and the syncer until Ctrl-C",
		Long: `Start everything on this machine, on loopback ports: a super cluster (etcd, kube-apiserver,
kube-controller-manager, kube-scheduler and kwok with fake Nodes that run Pods), --tenants
tenant control planes (etcd, kube-apiserver, kube-controller-manager), register the tenants,
and run the syncer against them. Kubeconfigs are written to --dir (super.kubeconfig,
tenant-1.kubeconfig, ...). Ctrl-C stops everything.

The control-plane binaries are built from Go modules on first use (about 10 minutes on 2
cores) into a cache outside the repository; later starts take seconds. Run it from a clone of
the repository so it can build them, or build them first with 'make tools'. Only what control
planes need is built (not helm or the npm Dockerfile linter).

Ctrl-C, SIGINT or SIGTERM stop everything; so does the end of the process that started dev.
hack/dev.sh (make dev) compiles vc-syncer with progress lines and then becomes vc-syncer dev, so
a signal sent to its pid arrives here. Under 'go run', the go command ignores SIGINT (it
expects the terminal to signal the whole process group): Ctrl-C works, a 'kill -INT' sent to
the go command's pid does not reach dev; SIGTERM to it does (dev stops when go exits).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tenants < 1 || nodes < 1 {
				return fmt.Errorf("--tenants and --nodes must be at least 1")
			}
			o.Zap.Development = true
			ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.Zap)))
			return runDev(cmd.Context(), cmd, o, dir, tenants, nodes, superExec, superPortForward)
		},
	}
	cmd.Flags().IntVar(&tenants, "tenants", 2, "Number of tenant control planes to start.")
	cmd.Flags().IntVar(&nodes, "nodes", 3, "Number of fake (kwok) Nodes in the super cluster.")
	cmd.Flags().StringVar(&dir, "dir", ".dev", "Directory for kubeconfigs and control-plane state (logs, etcd data); recreated on start.")
	cmd.Flags().IntVar(&o.DownwardWorkers, "downward-workers", o.DownwardWorkers, "Number of downward workers (goroutines).")
	cmd.Flags().IntVar(&o.UpwardWorkers, "upward-workers", o.UpwardWorkers, "Number of upward workers (goroutines).")
	cmd.Flags().StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "Address that serves /metrics and the status page over plain HTTP without authentication (keep it on loopback); \"0\" turns it off.")
	cmd.Flags().StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "Address that serves /healthz and /readyz; \"0\" turns it off.")
	cmd.Flags().StringSliceVar(&o.OptInKinds, "opt-in-kinds", o.OptInKinds, "Comma-separated opt-in kinds to sync: Ingress, NetworkPolicy, PodDisruptionBudget (Event is synced by default). Empty: none.")
	cmd.Flags().StringVar(&o.KubeletBindAddress, "kubelet-bind-address", o.KubeletBindAddress, "host:port of the virtual Nodes' kubelet API, which serves the tenants' kubectl logs, exec, attach, port-forward and cp (keep it on loopback); \"0\" turns it off.")
	cmd.Flags().BoolVar(&superExec, "super-exec", false, "Let kwok answer exec into super Pods by running the requested command ON THIS MACHINE (in an empty temporary directory, as user nobody when dev runs as root): tenant users' kubectl exec and cp then work, and run what they ask here (cp reads and writes that directory). Off: exec and cp fail, logs and attach work.")
	cmd.Flags().StringVar(&superPortForward, "super-port-forward-target", "", "host:port of a TCP server on this machine's loopback (e.g. 127.0.0.1:9000, a server you start) to which kwok connects every port-forward into a super Pod, whatever the Pod and port: tenant users' kubectl port-forward then reaches that server. Empty: port-forward fails; logs and attach (which follows the Pod log file) work.")
	cmd.Flags().StringSliceVar(&o.DisabledKinds, "disabled-kinds", o.DisabledKinds, "Comma-separated default kinds not to sync: Event. Empty: none.")
	return cmd
}

func runDev(ctx context.Context, cmd *cobra.Command, o *options.Options, dir string, tenants, nodes int, superExec bool, superPortForward string) error {
	out := cmd.OutOrStdout()
	start := time.Now()
	progress := func(s string) { fmt.Fprintf(out, "[dev +%5.1fs] %s\n", time.Since(start).Seconds(), s) }
	if note := stopWithParent(); note != "" {
		progress(note)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// One dev environment per directory: a second one would wipe the first one's state and
	// kubeconfigs while it runs. The lock is released when the process exits, however it exits.
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(lock.Name())
		return fmt.Errorf("another vc-syncer dev (pid %s) is using %s: stop it, or pass a different --dir", strings.TrimSpace(string(holder)), dir)
	}
	if err := devPortsFree([]boundFlag{
		{"metrics-bind-address", o.MetricsBindAddress},
		{"health-probe-bind-address", o.HealthProbeBindAddress},
		{"kubelet-bind-address", o.KubeletBindAddress},
	}); err != nil {
		return err
	}
	_ = lock.Truncate(0)
	_, _ = lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	if err := os.RemoveAll(filepath.Join(dir, "state")); err != nil {
		return err
	}
	progress("checking control-plane binaries (the first run builds them: ~10 min)")
	tools, err := localcluster.EnsureTools(ctx, progress)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	env, err := localcluster.Start(ctx, localcluster.SuperOptions{
		Options: localcluster.Options{Dir: filepath.Join(dir, "state"), ToolsDir: tools, Progress: progress},
		Nodes:   nodes, KubeletExec: superExec, KubeletPortForwardTarget: superPortForward,
	}, tenants)
	if err != nil {
		if ctx.Err() != nil {
			progress("interrupted during start-up; everything started so far was stopped")
			return nil
		}
		return err
	}
	defer func() {
		progress("stopping control planes")
		_ = env.Stop()
		progress("stopped")
	}()

	// kwok's kubelet API listens on loopback, which the super apiserver does not proxy to.
	o.KubeletSuperMetricsURL = env.Super.KwokMetricsURL()
	superKC := filepath.Join(dir, "super.kubeconfig")
	if err := os.WriteFile(superKC, env.Super.Kubeconfig, 0o600); err != nil {
		return err
	}
	if err := InstallCRD(ctx, env.Super.RESTConfig); err != nil {
		return err
	}
	c, err := client.New(env.Super.RESTConfig, client.Options{Scheme: Scheme()})
	if err != nil {
		return err
	}
	var tenantKCs []string
	for i, t := range env.Tenants {
		path := filepath.Join(dir, fmt.Sprintf("tenant-%d.kubeconfig", i+1))
		if err := os.WriteFile(path, t.Kubeconfig, 0o600); err != nil {
			return err
		}
		tenantKCs = append(tenantKCs, path)
		if err := AddTenantWithOptions(ctx, c, o.KubeconfigNamespace, t.Name, t.Kubeconfig, TenantOptions{Weight: 1, ServiceCIDRs: []string{t.ServiceCIDR}, KubeletClientCA: t.KubeletClientCA}); err != nil {
			return err
		}
		progress("registered Tenant " + t.Name)
	}
	dnsHelp, err := startDevTenantDNS(ctx, env, progress)
	if err != nil {
		return err
	}
	kubectl := filepath.Join(tools, "bin", "kubectl")
	rel := func(p string) string {
		if wd, err := os.Getwd(); err == nil {
			if r, err := filepath.Rel(wd, p); err == nil {
				return r
			}
		}
		return p
	}
	fmt.Fprintf(out, `
vc-syncer dev is up in %.1fs. Try, in another terminal:

  alias kubectl=%s
  kubectl --kubeconfig %s get tenants                 # the super cluster's view of the tenants
  kubectl --kubeconfig %s apply -f examples/guestbook/
  kubectl --kubeconfig %s -n guestbook get pods -o wide  # tenant Pods: Running on vNodes
  kubectl --kubeconfig %s get pods -A -o wide           # the same Pods in the super cluster
  kubectl --kubeconfig %s get nodes                    # vNodes named after super Nodes
  kubectl --kubeconfig %s -n guestbook logs <pod>        # served by the syncer's kubelet API (kwok's log file %s)
%s
%sStatus page: http://%s/  Metrics: http://%s/metrics  Health: http://%s/readyz  Logs of components: %s
Press Ctrl-C to stop everything.

`, time.Since(start).Seconds(), kubectl, rel(superKC), rel(tenantKCs[0]), rel(tenantKCs[0]), rel(superKC), rel(tenantKCs[0]),
		rel(tenantKCs[0]), rel(env.Super.PodLogFile()), devKubeletHelp(rel(tenantKCs[0]), env.Super, superPortForward),
		dnsHelp, o.MetricsBindAddress, o.MetricsBindAddress, o.HealthProbeBindAddress, filepath.Join(rel(dir), "state"))
	if o.CheckpointStore == "" {
		// dev keeps its checkpoint next to its control planes. They are new on every start, so
		// a checkpoint left by an earlier start describes other clusters: it is removed.
		ckpt := filepath.Join(dir, "checkpoint")
		if err := os.Remove(ckpt); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("removing the previous run's checkpoint: %w", err)
		}
		o.CheckpointStore = "file:" + ckpt
	}
	err = Run(ctx, o, env.Super.RESTConfig)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// devKubeletHelp returns the walkthrough lines of the kubelet API beyond logs: attach always;
// exec and cp with --super-exec; port-forward with --super-port-forward-target.
func devKubeletHelp(kc string, super *localcluster.ControlPlane, portForwardTarget string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  kubectl --kubeconfig %s -n guestbook attach <pod>      # follows the same log file: lines written to it from now on\n", kc)
	if d := super.ExecDir(); d != "" {
		fmt.Fprintf(&b, "  kubectl --kubeconfig %s -n guestbook exec <pod> -- ls   # runs on this machine, in %s\n", kc, d)
		fmt.Fprintf(&b, "  kubectl --kubeconfig %s -n guestbook cp README.md <pod>:README.md  # lands in that directory\n", kc)
	}
	if portForwardTarget != "" {
		fmt.Fprintf(&b, "  kubectl --kubeconfig %s -n guestbook port-forward <pod> 8000:80  # localhost:8000 reaches %s\n", kc, portForwardTarget)
	}
	return b.String()
}

// stopWithParent asks the kernel to send this process SIGTERM when its parent exits
// (prctl PR_SET_PDEATHSIG, Linux), so dev stops its control planes when whatever started it —
// `go run`, make, a shell script — is killed, instead of running on as an orphan. It returns a
// note for the user when the parent is the go command (`go run`), whose handling of SIGINT
// keeps a `kill -INT` from reaching dev, or "" otherwise.
func stopWithParent() string {
	ppid := os.Getppid()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0); err == nil && os.Getppid() != ppid {
		// The parent exited before the request took effect.
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", ppid))
	if err != nil || strings.TrimSpace(string(comm)) != "go" {
		return ""
	}
	return fmt.Sprintf("started by `go run` (pid %d): stop with Ctrl-C, `kill %d` (SIGTERM) or `kill -INT %d`; "+
		"the go command ignores a SIGINT sent to its own pid. ./hack/dev.sh avoids this", ppid, ppid, os.Getpid())
}

// startDevTenantDNS starts a CoreDNS for each dev tenant (ControlPlane.StartCoreDNS: it stands
// in for the tenant's CoreDNS Pod, answering the tenant's names from the tenant apiserver; the
// tenants' Stop stops it) and returns the lines that tell how to query them. The super Pods'
// nameserver is the super ClusterIP of the tenant's kube-dns copy, which is not routable on
// this machine; these local servers give the same answers.
func startDevTenantDNS(ctx context.Context, env *localcluster.Environment, progress func(string)) (string, error) {
	var b strings.Builder
	b.WriteString("Tenant DNS (CoreDNS reading each tenant apiserver; tenant Pods' nameserver is their tenant's kube-dns):\n")
	for _, t := range env.Tenants {
		d, err := t.StartCoreDNS(ctx)
		if err != nil {
			return "", fmt.Errorf("starting the DNS of %s: %w", t.Name, err)
		}
		progress(fmt.Sprintf("%s: CoreDNS answers on %s (udp/tcp)", t.Name, d.Addr))
		fmt.Fprintf(&b, "  %-10s %s\n", t.Name, d.DigCommand("frontend.guestbook.svc.cluster.local"))
	}
	b.WriteString("\n")
	return b.String(), nil
}

// boundFlag is a listen address and the flag that sets it.
type boundFlag struct{ flag, addr string }

// devPortsFree returns an error naming the first of addrs (skipping "0" and "", which turn a
// listener off) that cannot be listened on now, with the flag that moves it, so that a second
// dev environment on one machine stops before it starts any control plane rather than after.
// A port freed between this check and the syncer's own listen is not a problem; one taken in
// between still fails there.
func devPortsFree(addrs []boundFlag) error {
	for _, b := range addrs {
		if b.addr == "0" || b.addr == "" {
			continue
		}
		l, err := net.Listen("tcp", b.addr)
		if err != nil {
			return fmt.Errorf("%s is in use (another vc-syncer dev?): stop it, or pass --%s with a free address (\"0\" turns it off): %w", b.addr, b.flag, err)
		}
		_ = l.Close()
	}
	return nil
}
