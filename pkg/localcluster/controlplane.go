package localcluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Component names; each is also the name of the component's log file in LogDir().
const (
	Etcd                  = "etcd"
	KubeAPIServer         = "kube-apiserver"
	KubeControllerManager = "kube-controller-manager"
	KubeScheduler         = "kube-scheduler"
	Kwok                  = "kwok"
)

// TenantControllers is the --controllers value of a tenant's kube-controller-manager: every
// default controller, node-lifecycle and taint-eviction included with their default settings
// (--node-monitor-grace-period 50s), except the PersistentVolume binder, attach-detach and
// expander controllers (the super cluster does that work). Tenant Nodes are virtual Nodes
// written by the syncer, which renews their Leases in kube-node-lease like a kubelet, so the
// tenant's node-lifecycle controller keeps them Ready. The names are the canonical ones of
// kube-controller-manager v1.37; unknown names make it exit.
const TenantControllers = "*,-persistentvolume-binder-controller," +
	"-persistentvolume-attach-detach-controller,-persistentvolume-expander-controller"

// Network layout of the local clusters.
const (
	superServiceCIDR = "10.96.0.0/16" // first IP 10.96.0.1 is in the super apiserver's SANs
	// defaultTenantServiceCIDR is the Service range of a tenant started by StartTenant without
	// Options.ServiceCIDR: outside the super cluster's range, so its ClusterIPs never work there.
	defaultTenantServiceCIDR = "10.0.0.0/24"
	podCIDR                  = "10.244.0.0/16"
	// FakeNodeAnnotation marks the Nodes kwok manages in the super cluster (key=value).
	FakeNodeAnnotation = "kwok.x-k8s.io/node"
	fakeNodeValue      = "fake"
	serviceAccountIss  = "https://kubernetes.default.svc.cluster.local"
)

// Bounds of the start-up steps. They are generous because a 2-core machine starting several
// apiservers at once is slow (7-8 s each for 7 in parallel); a healthy start takes a few seconds.
const (
	etcdTimeout      = 60 * time.Second
	apiserverTimeout = 3 * time.Minute
	clientTimeout    = 60 * time.Second // kcm, scheduler, kwok
	readyTimeout     = 2 * time.Minute  // default ServiceAccount, Ready Nodes
)

// ControlPlane is one running local Kubernetes control plane: its own etcd and kube-apiserver,
// a kube-controller-manager, and for the super cluster also kube-scheduler and kwok. All
// components listen on 127.0.0.1 only, on free ports. Create it with StartSuper or StartTenant
// and release it with Stop.
type ControlPlane struct {
	// Name identifies the control plane ("super", "tenant-1", ...); it is also the name of its
	// state directory and of its kubeconfig cluster and context.
	Name string
	// Dir is the state directory: pki/, logs/, etcd-data/ and admin.kubeconfig.
	Dir string
	// KubeconfigPath is the admin kubeconfig file (user in group system:masters) with the
	// certificates embedded, usable from any working directory.
	KubeconfigPath string
	// Kubeconfig is the content of KubeconfigPath.
	Kubeconfig []byte
	// RESTConfig is the admin rest config. Its client-side rate limit is raised to QPS 100,
	// Burst 200 (client-go defaults to 5/10), which suits tests and benchmarks.
	RESTConfig *rest.Config
	// Client is a clientset built from RESTConfig.
	Client kubernetes.Interface
	// KubeletClientCA is the PEM certificate of the CA that signed the kube-apiserver's
	// kubelet client certificate (--kubelet-client-certificate), and only that certificate:
	// register it as the Tenant's spec.kubeletClientCA so vc-syncer's kubelet API attributes
	// the apiserver's requests to this tenant. KubeletClientCert and KubeletClientKey are that
	// certificate and its key (PEM), for tests that call the kubelet API as the apiserver does.
	KubeletClientCA, KubeletClientCert, KubeletClientKey []byte
	// ServiceCIDR is the kube-apiserver's --service-cluster-ip-range. For a tenant started by
	// Start it is TenantServiceCIDR(i), a part of the super cluster's range: register it as
	// the Tenant's spec.serviceCIDRs so tenant ClusterIPs are the ones that work in the super
	// cluster.
	ServiceCIDR string
	// EtcdURL is the client URL of the control plane's etcd (plain HTTP on 127.0.0.1), for
	// tests that act on etcd itself (a compaction through its JSON gateway, /v3/kv/compaction).
	EtcdURL string

	toolsDir      string
	pki           *pki
	progress      func(string)
	removeDir     string // parent dir created by us (Options.Dir was empty); removed by a clean Stop
	superPlane    bool
	kubeletExec   bool
	execDir       string // ExecDir
	kwokPort      int    // kwok's kubelet API port (KwokMetricsURL)
	apiserverArgs []string
	// stopProvisioner stops the super cluster's volume provisioner (see runProvisioner).
	stopProvisioner context.CancelFunc
	// portForwardTarget is SuperOptions.KubeletPortForwardTarget.
	portForwardTarget string

	mu       sync.Mutex
	procs    []*process // in start order
	startup  time.Duration
	stopOnce sync.Once
	stopErr  error
}

// Options configures the start of a control plane.
type Options struct {
	// Dir is the parent state directory; the control plane lives in Dir/<name>, which must not
	// exist yet or be empty. Dir is created if missing. Defaults to a new os.MkdirTemp
	// directory, which a successful Stop removes again.
	Dir string
	// ToolsDir holds bin/ with the control-plane binaries and kwok-stages.yaml. Defaults to the
	// result of EnsureTools, which builds missing tools (about 10 minutes the first time).
	ToolsDir string
	// Progress, if set, receives human-readable progress lines such as
	// "tenant-1: kube-apiserver ready in 2.8s". It may be called from several goroutines when
	// an Environment starts tenants in parallel; Start serializes the calls.
	Progress func(string)
	// ServiceCIDR is a tenant's Service range (--service-cluster-ip-range; ignored for the
	// super cluster, whose range is 10.96.0.0/16). Empty: 10.0.0.0/24, outside the super
	// cluster's range. Start gives tenant i TenantServiceCIDR(i).
	ServiceCIDR string
	// APIServerArgs are extra kube-apiserver flags, appended last (so they override), e.g.
	// "--watch-cache=false" and "--etcd-compaction-interval=1s" to make watch positions
	// expire quickly.
	APIServerArgs []string
}

// SuperOptions configures the start of the super cluster.
type SuperOptions struct {
	Options
	// Nodes is the number of fake kwok Nodes ("kwok-node-0", ...) to create. Defaults to 3.
	// Use a negative value for none.
	Nodes int
	// SuperAPIServerArgs are extra kube-apiserver flags of the super cluster only, appended
	// after Options.APIServerArgs (which every control plane gets), e.g. an audit log.
	SuperAPIServerArgs []string
	// KubeletExec makes kwok answer exec requests for every super Pod (a ClusterExec) by
	// running the requested command ON THIS MACHINE, in the directory ExecDir() (empty at
	// start, writable by the command: `kubectl cp` copies into and out of it), as user nobody
	// (65534) when the process runs as root (as the invoking user otherwise).
	// Anyone who may exec into a super Pod (the super cluster's admins, and tenant users
	// through vc-syncer's kubelet API) then runs commands here, so it is off by default and
	// meant for tests on a machine that is theirs. Logs (PodLogFile) are always served.
	KubeletExec bool
	// KubeletPortForwardTarget is the host:port of a TCP server on this machine's loopback
	// (an IP of 127.0.0.0/8 or ::1, e.g. "127.0.0.1:8080") that kwok connects every
	// port-forward to, whatever the super Pod and port (a ClusterPortForward): tenant users'
	// `kubectl port-forward` reaches that server. Tests and benchmarks point it at a server of
	// their own, started before the super cluster. Empty: port-forward fails (kwok has no
	// target). Attach is always served: it follows PodLogFile from its end.
	KubeletPortForwardTarget string
}

// TenantServiceCIDR returns the Service range Start gives the i-th tenant (1-based, at most
// 255): 10.96.<i>.0/24, a part of the super cluster's 10.96.0.0/16 outside its first /24 (where
// the super apiserver prefers to put Services that ask for an address, such as a DNS Service
// at 10.96.0.10). The super cluster allocates other Services' addresses at random from the
// rest of its range, so a tenant address is taken there only by chance.
func TenantServiceCIDR(i int) string { return fmt.Sprintf("10.96.%d.0/24", i) }

// Name of the super cluster control plane.
const superName = "super"

var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// StartSuper starts the super cluster: etcd, kube-apiserver (service CIDR 10.96.0.0/16),
// kube-controller-manager with all default controllers, kube-scheduler and kwok, then creates
// o.Nodes fake Nodes "kwok-node-0".."kwok-node-<n-1>" (annotated kwok.x-k8s.io/node=fake,
// InternalIP 10.200.0.<i+1>, podCIDR 10.244.<i>.0/24 when there are at most 256 of them) and
// waits until they are Ready and untainted and the default ServiceAccount exists. It also creates
// the StorageClasses SuperStorageClasses (default "standard") and runs a volume provisioner
// for them until Stop (see runProvisioner), so claims bind as in a cluster with a CSI driver. Pods
// scheduled to the fake Nodes become Running with a Pod IP about 0.3 s after creation.
//
// ctx bounds the start-up only; the processes run until Stop. On error everything already
// started is stopped, the state directory is kept, and the error includes the tail of the
// failing component's log.
func StartSuper(ctx context.Context, o SuperOptions) (*ControlPlane, error) {
	nodes := o.Nodes
	if nodes == 0 {
		nodes = 3
	}
	so := o.Options
	so.APIServerArgs = append(slices.Clone(o.APIServerArgs), o.SuperAPIServerArgs...)
	if err := checkPortForwardTarget(o.KubeletPortForwardTarget); err != nil {
		return nil, err
	}
	return start(ctx, superName, so, true, max(nodes, 0), o.KubeletExec, o.KubeletPortForwardTarget)
}

// StartTenant starts a tenant control plane called name (a DNS label, e.g. "tenant-1"): etcd,
// kube-apiserver (service CIDR o.ServiceCIDR, default 10.0.0.0/24) and a kube-controller-manager running
// TenantControllers (every default controller, node-lifecycle included, but none of the
// PersistentVolume ones), and no scheduler: tenant Pods stay Pending until
// something binds them. It returns once the default ServiceAccount exists.
//
// ctx bounds the start-up only; the processes run until Stop. On error everything already
// started is stopped, the state directory is kept, and the error includes the tail of the
// failing component's log.
func StartTenant(ctx context.Context, name string, o Options) (*ControlPlane, error) {
	if name == superName {
		return nil, fmt.Errorf("tenant name %q is reserved for the super cluster", name)
	}
	return start(ctx, name, o, false, 0, false, "")
}

// start prepares the directories and PKI of a control plane and starts its components.
func start(ctx context.Context, name string, o Options, super bool, nodes int, kubeletExec bool, portForwardTarget string) (*ControlPlane, error) {
	if !nameRE.MatchString(name) {
		return nil, fmt.Errorf("invalid control plane name %q: must be a DNS label", name)
	}
	toolsDir := o.ToolsDir
	if toolsDir == "" {
		var err error
		if toolsDir, err = EnsureTools(ctx, o.Progress); err != nil {
			return nil, err
		}
	} else if missing := missingTools(toolsDir); len(missing) > 0 {
		return nil, missingToolsError(toolsDir, missing)
	}

	c := &ControlPlane{Name: name, toolsDir: toolsDir, progress: o.Progress, superPlane: super, apiserverArgs: o.APIServerArgs,
		kubeletExec: kubeletExec, portForwardTarget: portForwardTarget}
	parent := o.Dir
	if parent == "" {
		d, err := os.MkdirTemp("", "vc-syncer-"+name+"-")
		if err != nil {
			return nil, fmt.Errorf("failed to create state dir: %w", err)
		}
		parent, c.removeDir = d, d
	} else if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("failed to create state dir: %w", err)
	}
	abs, err := filepath.Abs(filepath.Join(parent, name))
	if err != nil {
		return nil, err
	}
	c.Dir = abs
	if entries, err := os.ReadDir(c.Dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("state dir %s of control plane %q already exists and is not empty; remove it or use another Options.Dir", c.Dir, name)
	}
	if err := os.MkdirAll(c.LogDir(), 0o755); err != nil {
		return nil, fmt.Errorf("failed to create log dir: %w", err)
	}
	serviceCIDR := o.ServiceCIDR
	switch {
	case super:
		serviceCIDR = superServiceCIDR
	case serviceCIDR == "":
		serviceCIDR = defaultTenantServiceCIDR
	}
	prefix, err := netip.ParsePrefix(serviceCIDR)
	if err != nil || !prefix.Addr().Is4() {
		return nil, fmt.Errorf("invalid service CIDR %q of control plane %q: want an IPv4 CIDR", serviceCIDR, name)
	}
	c.ServiceCIDR = prefix.Masked().String()
	// The apiserver's kubernetes Service takes the range's first address; in-cluster clients
	// verify the serving certificate against it.
	firstIP := net.IP(prefix.Masked().Addr().Next().AsSlice())
	if c.pki, err = generatePKI(filepath.Join(c.Dir, "pki"), firstIP); err != nil {
		return nil, err
	}
	c.KubeletClientCA, c.KubeletClientCert, c.KubeletClientKey = c.pki.kubeletClientCA, c.pki.kubeletClientCert, c.pki.kubeletClientKey

	if err := c.run(ctx, c.ServiceCIDR, nodes); err != nil {
		_ = c.stopProcesses()
		return nil, fmt.Errorf("failed to start control plane %q (state and logs kept in %s): %w", name, c.Dir, err)
	}
	return c, nil
}

// run starts the components in order and waits until the cluster is usable.
func (c *ControlPlane) run(ctx context.Context, serviceCIDR string, nodes int) error {
	t0 := time.Now()
	bin := func(name string) string { return filepath.Join(c.toolsDir, "bin", name) }
	p := c.pki.path

	// etcd
	var etcdURL string
	if err := c.startComponent(ctx, Etcd, etcdTimeout, func() ([]string, probe, error) {
		cp, err := FreePort()
		if err != nil {
			return nil, nil, err
		}
		pp, err := FreePort()
		if err != nil {
			return nil, nil, err
		}
		etcdURL = "http://127.0.0.1:" + strconv.Itoa(cp)
		peerURL := "http://127.0.0.1:" + strconv.Itoa(pp)
		return []string{
			"--name=" + c.Name,
			"--data-dir=" + filepath.Join(c.Dir, "etcd-data"),
			"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
			"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=" + c.Name + "=" + peerURL, "--initial-cluster-state=new",
			"--unsafe-no-fsync=true", "--quota-backend-bytes=" + strconv.Itoa(2<<30), "--log-level=warn",
		}, httpProbe(etcdURL+"/health", nil, `"health":"true"`), nil
	}, bin(Etcd)); err != nil {
		return err
	}
	c.EtcdURL = etcdURL

	// kube-apiserver
	adminTLS, err := c.pki.adminTLSConfig()
	if err != nil {
		return err
	}
	var server string
	if err := c.startComponent(ctx, KubeAPIServer, apiserverTimeout, func() ([]string, probe, error) {
		port, err := FreePort()
		if err != nil {
			return nil, nil, err
		}
		server = "https://127.0.0.1:" + strconv.Itoa(port)
		var superArgs []string
		if c.superPlane {
			// kwok's kubelet API listens on loopback; the fake Nodes carry 127.0.0.1 as their
			// InternalDNS address (fakeNode), which the apiserver dials for logs and exec.
			superArgs = []string{"--kubelet-preferred-address-types=InternalDNS"}
		}
		return append(append([]string{
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--endpoint-reconciler-type=none",
			"--secure-port=" + strconv.Itoa(port),
			"--etcd-servers=" + etcdURL,
			"--tls-cert-file=" + p(servingCertFile), "--tls-private-key-file=" + p(servingKeyFile),
			"--client-ca-file=" + p(caCertFile),
			"--service-account-issuer=" + serviceAccountIss,
			"--service-account-key-file=" + p(saPubFile), "--service-account-signing-key-file=" + p(saKeyFile),
			"--service-cluster-ip-range=" + serviceCIDR,
			"--authorization-mode=RBAC", "--allow-privileged=true",
			"--cert-dir=" + filepath.Join(c.Dir, "apiserver-certs"), "--profiling=false",
			"--kubelet-client-certificate=" + p(kubeletClientCertFile), "--kubelet-client-key=" + p(kubeletClientKeyFile),
		}, superArgs...), c.apiserverArgs...), httpProbe(server+"/readyz", adminTLS, ""), nil
	}, bin(KubeAPIServer)); err != nil {
		return err
	}
	if err := c.writeKubeconfig(server); err != nil {
		return err
	}

	// kube-controller-manager
	controllers := TenantControllers
	if c.superPlane {
		controllers = "*"
	}
	if err := c.startComponent(ctx, KubeControllerManager, clientTimeout, func() ([]string, probe, error) {
		port, err := FreePort()
		if err != nil {
			return nil, nil, err
		}
		return append(c.clientArgs(KubeControllerManager, port),
			"--use-service-account-credentials=false",
			"--service-account-private-key-file="+p(saKeyFile), "--root-ca-file="+p(caCertFile),
			"--cluster-signing-cert-file="+p(caCertFile), "--cluster-signing-key-file="+p(caKeyFile),
			"--controllers="+controllers, "--kube-api-qps=100", "--kube-api-burst=200",
		), insecureHealthz(port), nil
	}, bin(KubeControllerManager)); err != nil {
		return err
	}

	if c.superPlane {
		if err := c.startComponent(ctx, KubeScheduler, clientTimeout, func() ([]string, probe, error) {
			port, err := FreePort()
			if err != nil {
				return nil, nil, err
			}
			return c.clientArgs(KubeScheduler, port), insecureHealthz(port), nil
		}, bin(KubeScheduler)); err != nil {
			return err
		}
		debugConfig, err := c.writeKwokDebugConfig()
		if err != nil {
			return err
		}
		if err := c.startComponent(ctx, Kwok, clientTimeout, func() ([]string, probe, error) {
			port, err := FreePort()
			if err != nil {
				return nil, nil, err
			}
			c.kwokPort = port
			//nolint:gosec // loopback health probe of kwok, whose certificate the test CA signed
			kwokTLS := &tls.Config{InsecureSkipVerify: true}
			return []string{
				"--kubeconfig=" + c.KubeconfigPath,
				"--config=" + filepath.Join(c.toolsDir, kwokStagesFile),
				"--config=" + debugConfig,
				// The kubelet API of every fake Node: the Nodes' daemonEndpoints port, TLS.
				"--node-port=" + strconv.Itoa(port),
				"--tls-cert-file=" + p(kubeletServingCertFile), "--tls-private-key-file=" + p(kubeletServingKeyFile),
				"--manage-all-nodes=false",
				"--manage-nodes-with-annotation-selector=" + FakeNodeAnnotation + "=" + fakeNodeValue,
				"--node-lease-duration-seconds=40",
				"--cidr=" + podCIDR, "--node-ip=" + fallbackNodeIP,
				"--server-address=127.0.0.1:" + strconv.Itoa(port),
			}, httpProbe("https://127.0.0.1:"+strconv.Itoa(port)+"/healthz", kwokTLS, ""), nil
		}, bin(Kwok)); err != nil {
			return err
		}
		if nodes > 0 {
			t := time.Now()
			if err := createFakeNodes(ctx, c.Client, nodes); err != nil {
				return err
			}
			if err := c.waitNodesReady(ctx, nodes); err != nil {
				return err
			}
			c.report(fmt.Sprintf("%d fake Nodes Ready in %s", nodes, since(t)))
		}
		if err := createStorageClasses(ctx, c.Client); err != nil {
			return err
		}
		pctx, cancel := context.WithCancel(context.Background())
		c.stopProvisioner = cancel
		if err := runProvisioner(pctx, c.Client); err != nil {
			return err
		}
	}

	if err := c.waitDefaultServiceAccount(ctx); err != nil {
		return err
	}
	if !c.superPlane {
		if err := createClusterDNSService(ctx, c.Client); err != nil {
			return err
		}
	}
	c.mu.Lock()
	c.startup = time.Since(t0)
	c.mu.Unlock()
	c.report(fmt.Sprintf("ready in %s (%s)", since(t0), c.componentSummary()))
	return nil
}

// fallbackNodeIP is kwok's --node-ip, used only for Nodes without an InternalIP address.
const fallbackNodeIP = "10.200.255.254"

// clientArgs are the flags kube-controller-manager and kube-scheduler share.
func (c *ControlPlane) clientArgs(component string, port int) []string {
	return []string{
		"--kubeconfig=" + c.KubeconfigPath,
		"--authentication-kubeconfig=" + c.KubeconfigPath, "--authorization-kubeconfig=" + c.KubeconfigPath,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(c.Dir, component+"-certs"),
		"--leader-elect=false", "--profiling=false",
	}
}

// insecureHealthz probes https://127.0.0.1:port/healthz without verifying the self-signed
// serving certificate the component generated in its --cert-dir.
func insecureHealthz(port int) probe {
	//nolint:gosec // loopback health probe of a self-signed local component
	return httpProbe("https://127.0.0.1:"+strconv.Itoa(port)+"/healthz", &tls.Config{InsecureSkipVerify: true}, "")
}

// startComponent starts one component and waits until it is healthy. prepare picks fresh
// ports and returns the flags and the health probe; it is called again (at most
// maxBindAttempts times in all) when the component lost a race for a port.
func (c *ControlPlane) startComponent(ctx context.Context, name string, timeout time.Duration,
	prepare func() ([]string, probe, error), binary string) error {
	c.report("starting " + name)
	var lastErr error
	for attempt := 1; attempt <= maxBindAttempts; attempt++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("failed to start %s: %w", name, err)
		}
		args, check, err := prepare()
		if err != nil {
			return fmt.Errorf("failed to prepare %s: %w", name, err)
		}
		proc, err := startProcess(name, c.LogDir(), binary, args)
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.procs = append(c.procs, proc)
		c.mu.Unlock()
		lastErr = proc.waitHealthy(ctx, timeout, check)
		if lastErr == nil {
			c.report(fmt.Sprintf("%s ready in %s (pid %d)", name, proc.ready.Round(10*time.Millisecond), proc.pid()))
			return nil
		}
		proc.kill()
		c.mu.Lock()
		c.procs = c.procs[:len(c.procs)-1]
		c.mu.Unlock()
		if !errors.Is(lastErr, errBindConflict) {
			break
		}
		c.report(fmt.Sprintf("%s lost a race for its port, retrying with new ports", name))
	}
	return lastErr
}

// writeKubeconfig writes the admin kubeconfig for server and builds RESTConfig and Client.
func (c *ControlPlane) writeKubeconfig(server string) error {
	data, err := c.pki.adminKubeconfig(c.Name, server)
	if err != nil {
		return err
	}
	path := filepath.Join(c.Dir, "admin.kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("failed to write kubeconfig: %w", err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return fmt.Errorf("failed to load the kubeconfig just written: %w", err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("failed to create client: %w", err)
	}
	c.KubeconfigPath, c.Kubeconfig, c.RESTConfig, c.Client = path, data, cfg, client
	return nil
}

// waitDefaultServiceAccount waits until the service-account controller has created the
// ServiceAccount default/default, so that Pods can be created right away.
func (c *ControlPlane) waitDefaultServiceAccount(ctx context.Context) error {
	t := time.Now()
	err := poll(ctx, readyTimeout, func(ctx context.Context) error {
		_, err := c.Client.CoreV1().ServiceAccounts(corev1.NamespaceDefault).Get(ctx, "default", getOpts)
		return err
	}, c.processes()...)
	if err != nil {
		return fmt.Errorf("ServiceAccount default/default did not appear: %w", err)
	}
	c.report(fmt.Sprintf("default ServiceAccount present after %s", since(t)))
	return nil
}

// report sends a progress line prefixed with the control plane's name.
func (c *ControlPlane) report(msg string) { report(c.progress, c.Name+": "+msg) }

// componentSummary lists the start-up duration of each component, e.g. "etcd 0.4s, ...".
func (c *ControlPlane) componentSummary() string {
	var parts []string
	for _, p := range c.processes() {
		parts = append(parts, fmt.Sprintf("%s %s", p.name, p.ready.Round(10*time.Millisecond)))
	}
	return strings.Join(parts, ", ")
}

// processes returns a snapshot of the started processes in start order.
func (c *ControlPlane) processes() []*process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*process(nil), c.procs...)
}

// LogDir returns the directory that holds one log file per component (stdout and stderr
// together), named after the component: etcd.log, kube-apiserver.log,
// kube-controller-manager.log, kube-scheduler.log and kwok.log.
func (c *ControlPlane) LogDir() string { return filepath.Join(c.Dir, "logs") }

// StartupDuration returns the wall time from the exec of the first component (etcd) until
// the control plane was usable: every component healthy, the default ServiceAccount present
// and, for the super cluster, the fake Nodes Ready. It is zero while starting.
func (c *ControlPlane) StartupDuration() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.startup
}

// ComponentStartupDurations returns, per component name (Etcd, KubeAPIServer, ...), the wall
// time from its exec until its health endpoint answered OK.
func (c *ControlPlane) ComponentStartupDurations() map[string]time.Duration {
	m := map[string]time.Duration{}
	for _, p := range c.processes() {
		m[p.name] = p.ready
	}
	return m
}

// PIDs returns the process id of each component by component name. The processes lead their
// own process groups. After Stop the ids refer to exited processes.
func (c *ControlPlane) PIDs() map[string]int {
	m := map[string]int{}
	for _, p := range c.processes() {
		m[p.name] = p.pid()
	}
	return m
}

// RestartAPIServer kills the control plane's kube-apiserver (SIGKILL) and starts it again
// with the same flags (same port, certificates and etcd), and waits until it is ready; its
// clients (RESTConfig, Client, the kubeconfig) work again as they were. The kill is not an
// unexpected exit for Stop. It is for tests of clients of an apiserver that dies and comes back.
// It is StopAPIServer followed by StartAPIServer.
func (c *ControlPlane) RestartAPIServer(ctx context.Context) error {
	if err := c.StopAPIServer(); err != nil {
		return err
	}
	return c.StartAPIServer(ctx)
}

// apiServerProcess returns the kube-apiserver's process (running or exited), or nil if none
// was started. It takes c.mu.
func (c *ControlPlane) apiServerProcess() *process {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i := c.apiServerIndex(); i >= 0 {
		return c.procs[i]
	}
	return nil
}

// apiServerIndex returns the index of the kube-apiserver in c.procs (-1 if none). c.mu is held.
func (c *ControlPlane) apiServerIndex() int {
	for i, p := range c.procs {
		if p.name == KubeAPIServer {
			return i
		}
	}
	return -1
}

// StopAPIServer kills the control plane's kube-apiserver (SIGKILL) and returns once it is
// reaped; it stays down until StartAPIServer (for tests of an apiserver down for a long time).
// The kill is not an unexpected exit for Stop; stopping a stopped apiserver does nothing.
func (c *ControlPlane) StopAPIServer() error {
	old := c.apiServerProcess()
	if old == nil {
		return fmt.Errorf("%s: no %s running", c.Name, KubeAPIServer)
	}
	old.kill()
	return nil
}

// StartAPIServer starts the control plane's kube-apiserver again, after StopAPIServer, with
// the same flags (same port, certificates and etcd), and waits until it is ready. It fails if
// the apiserver still runs.
func (c *ControlPlane) StartAPIServer(ctx context.Context) error {
	old := c.apiServerProcess()
	if old == nil {
		return fmt.Errorf("%s: no %s to start again", c.Name, KubeAPIServer)
	}
	if !old.exited() {
		return fmt.Errorf("%s: %s still runs (pid %d)", c.Name, KubeAPIServer, old.pid())
	}
	adminTLS, err := c.pki.adminTLSConfig()
	if err != nil {
		return err
	}
	proc, err := startProcess(KubeAPIServer, c.LogDir(), old.cmd.Path, old.cmd.Args[1:])
	if err != nil {
		return fmt.Errorf("%s: restarting %s: %w", c.Name, KubeAPIServer, err)
	}
	c.mu.Lock()
	if i := c.apiServerIndex(); i >= 0 {
		c.procs[i] = proc
	}
	c.mu.Unlock()
	if err := proc.waitHealthy(ctx, apiserverTimeout, httpProbe(c.RESTConfig.Host+"/readyz", adminTLS, "")); err != nil {
		return fmt.Errorf("%s: restarted %s not ready: %w", c.Name, KubeAPIServer, err)
	}
	c.report(fmt.Sprintf("%s restarted, ready in %s (pid %d)", KubeAPIServer, proc.ready.Round(10*time.Millisecond), proc.pid()))
	return nil
}

// Stop terminates the control plane: SIGTERM to kwok, kube-scheduler and
// kube-controller-manager, then to kube-apiserver, then to etcd, each followed by SIGKILL if
// it has not exited within 15 s; it returns once all processes are reaped. It is idempotent:
// later calls return the first call's result. The error reports components that had exited
// on their own before Stop (with their log tail). A state directory that StartSuper or
// StartTenant created itself (Options.Dir empty) is removed unless there was an error.
func (c *ControlPlane) Stop() error {
	c.stopOnce.Do(func() {
		t := time.Now()
		c.stopErr = c.stopProcesses()
		if c.stopErr == nil && c.removeDir != "" {
			c.stopErr = os.RemoveAll(c.removeDir)
		}
		c.report(fmt.Sprintf("stopped in %s", since(t)))
	})
	return c.stopErr
}

// stopProcesses stops the started processes in reverse dependency order.
func (c *ControlPlane) stopProcesses() error {
	if c.stopProvisioner != nil {
		c.stopProvisioner()
	}
	if c.execDir != "" {
		defer os.RemoveAll(c.execDir)
	}
	procs := c.processes()
	var errs []error
	for _, p := range procs {
		if err := p.unexpectedExit(); err != nil {
			errs = append(errs, err)
		}
	}
	var clients, servers []*process
	for _, p := range procs {
		if p.name == Etcd || p.name == KubeAPIServer {
			servers = append(servers, p)
		} else {
			clients = append(clients, p)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range clients {
		wg.Go(func() {
			if err := p.stop(stopTimeout); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for i := len(servers) - 1; i >= 0; i-- { // kube-apiserver, then etcd
		if err := servers[i].stop(stopTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("control plane %q: %w", c.Name, err)
	}
	return nil
}

// since formats the time elapsed since t for progress lines.
func since(t time.Time) time.Duration { return time.Since(t).Round(10 * time.Millisecond) }
