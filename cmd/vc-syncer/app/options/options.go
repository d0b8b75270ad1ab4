package options

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/vcsyncer/syncer/pkg/kubeletproxy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/kinds"
	"github.com/vcsyncer/syncer/pkg/sharding"
)

// Options are the settings of `vc-syncer run`.
type Options struct {
	// SuperKubeconfig is the kubeconfig of the super cluster. Empty: in-cluster config, then $KUBECONFIG.
	SuperKubeconfig string
	// DownwardWorkers is the number of tenant → super workers. Defaults to 20.
	DownwardWorkers int
	// UpwardWorkers is the number of super → tenant workers. Defaults to 100.
	UpwardWorkers int
	// MetricsBindAddress serves Prometheus metrics. Defaults to ":8080"; "0" disables.
	MetricsBindAddress string
	// MetricsSecure serves /metrics and the status page over HTTPS and lets through only
	// requests whose bearer token the super apiserver authenticates (TokenReview) and
	// authorizes for the path (SubjectAccessReview, verb get on the non-resource URL), as
	// controller-runtime's filters.WithAuthenticationAndAuthorization does. Defaults to true;
	// false serves plain HTTP to anyone (`vc-syncer dev` on loopback).
	MetricsSecure bool
	// MetricsCertDir holds tls.crt and tls.key for the secure metrics server, reloaded when
	// they change. Empty, or a directory without both files: a self-signed certificate for
	// localhost generated in memory at start.
	MetricsCertDir string
	// HealthProbeBindAddress serves /healthz and /readyz. Defaults to ":8081".
	HealthProbeBindAddress string
	// FairQueuing dispatches each pipeline's workers by weighted round-robin over per-tenant
	// sub-queues; false uses one FIFO (for comparison). Defaults to true.
	FairQueuing bool
	// PodSecurityEnforce is the Pod Security Standards level (privileged, baseline,
	// restricted) put on every super namespace the syncer creates, as the label
	// pod-security.kubernetes.io/enforce. Empty: no label. Defaults to "baseline".
	PodSecurityEnforce string
	// PprofBindAddress serves net/http/pprof; empty or "0" turns it off. Defaults to off.
	PprofBindAddress string
	// LeaderElect turns on leader election so only one replica syncs. Defaults to true
	// (`vc-syncer dev` and tests running a single syncer turn it off).
	LeaderElect bool
	// RunsAgainInProcess lets Run be called more than once in one process (tests that start
	// a syncer per run under -count=2): controller-runtime refuses a second controller of the
	// same name in a process unless its name validation is skipped. Not a flag; false for
	// the binary, whose process runs one syncer.
	RunsAgainInProcess bool
	// LeaderElectionNamespace holds the leader-election Lease. Defaults to KubeconfigNamespace.
	LeaderElectionNamespace string
	// KubeconfigNamespace is the only namespace whose Secrets the syncer reads. Defaults to "vc-syncer-system".
	KubeconfigNamespace string
	// InstallCRDs creates or updates the Tenant CRD at start-up. Defaults to true.
	InstallCRDs bool
	// TenantDNS points tenant Pods with dnsPolicy ClusterFirst (and ClusterFirstWithHostNet)
	// at their tenant's DNS Service (kube-system/kube-dns, through its super copy) when the
	// tenant has one; Pods of a tenant without it keep the super cluster's DNS. Defaults to true.
	TenantDNS bool
	// TenantClusterDomain is the tenants' DNS cluster domain. Defaults to "cluster.local".
	TenantClusterDomain string
	// VNodeGCGrace is how long a virtual Node without tenant Pods is kept before it is
	// removed. Defaults to 30s.
	VNodeGCGrace time.Duration
	// VNodeLeaseDuration is the vNode Leases' leaseDurationSeconds (kubelet default: 40s).
	// Defaults to 40s.
	VNodeLeaseDuration time.Duration
	// VNodeLeaseRenewInterval is how often each vNode Lease is renewed; at most half of
	// VNodeLeaseDuration. Defaults to 20s (a kubelet renews every 10s; see vnode.Options).
	VNodeLeaseRenewInterval time.Duration
	// VNodeStatusReportFrequency is how often an unchanged vNode status is written again
	// (kubelet nodeStatusReportFrequency). Defaults to 5m.
	VNodeStatusReportFrequency time.Duration
	// KubeletBindAddress is the host:port of the virtual Nodes' kubelet API (pkg/kubeletproxy:
	// kubectl logs, exec, attach and port-forward of tenant users). Defaults to "0" (off).
	KubeletBindAddress string
	// KubeletAdvertiseAddress is the IP address or DNS name the vNodes advertise for it, which
	// the tenant apiservers must reach. Defaults to the host of KubeletBindAddress when that
	// is a specific IP address.
	KubeletAdvertiseAddress string
	// KubeletAdvertisePort is the port the vNodes advertise (daemonEndpoints). Defaults to
	// the port of KubeletBindAddress.
	KubeletAdvertisePort int32
	// KubeletTLSCertFile and KubeletTLSKeyFile are its serving certificate and key (PEM).
	// Both empty: a self-signed certificate is generated at start.
	KubeletTLSCertFile, KubeletTLSKeyFile string
	// KubeletMaxStreamsPerTenant bounds the kubelet API requests forwarded for one tenant at
	// a time (logs, exec, attach, port-forward streams); past it: 429. Defaults to 32.
	KubeletMaxStreamsPerTenant int
	// KubeletNodeStats turns on the vNodes' stats/summary and metrics/resource, read from the
	// super Nodes through nodes/<node>/proxy (kubeletproxy.Options.NodeStats). Defaults to
	// false: that RBAC grant also opens every super kubelet's own API to the syncer's token.
	KubeletNodeStats bool
	// KubeletSuperMetricsPath is the path of a super Node's resource metrics on its kubelet,
	// read through the super apiserver's nodes/<node>/proxy for the vNodes' stats/summary and
	// metrics/resource; "{nodeName}" is replaced by the Node's name. Defaults to
	// "/metrics/resource" (a kubelet's); kwok's is localcluster.KwokMetricsPath.
	KubeletSuperMetricsPath string
	// KubeletSuperMetricsURL, when set, is read instead of nodes/<node>/proxy: an https URL
	// of a super Node's resource metrics ("{nodeName}" replaced), dialled with the super
	// kubeconfig's CA and client certificate. For super clusters whose kubelets listen on
	// loopback (the local kwok), where kube-apiserver refuses to proxy. Defaults to empty.
	KubeletSuperMetricsURL string
	// OptInKinds are the opt-in kinds to sync (Ingress, NetworkPolicy, PodDisruptionBudget;
	// Event is accepted and synced by default). Defaults to none.
	OptInKinds []string
	// DisabledKinds are default kinds not to sync (Event). Defaults to none.
	DisabledKinds []string
	// Zap are the logging options.
	Zap zap.Options
	// RemediationInterval is the time between two periodic remediation scans (pkg/remediation);
	// 0 turns them off. Defaults to 60s.
	RemediationInterval time.Duration
	// CheckpointStore is where checkpoints go: "file:PATH", "secret:NAMESPACE/NAME" or "none".
	// Empty: secret:<KubeconfigNamespace>/vc-syncer-checkpoint.
	CheckpointStore string
	// CheckpointInterval is the time between two checkpoints. Defaults to 30s.
	CheckpointInterval time.Duration
	// CheckpointMaxItems: a checkpoint is skipped while the queues hold more items. Defaults to 15000.
	CheckpointMaxItems int
	// MemoryLimitRatio sets the Go memory limit to this fraction of the container's memory
	// limit (0: not set; an explicit GOMEMLIMIT always wins). Defaults to 0.9.
	MemoryLimitRatio float64
	// IdleMemoryRelease is how often the syncer checks whether it is quiet and then returns
	// freed heap memory to the operating system (0: never). Defaults to 30s.
	IdleMemoryRelease time.Duration
	// SuperWriteQPS is the super writes per second the syncer's reconciles may make, shared by
	// the tenants writing by weight (a tenant alone gets all of it); 0 turns the per-tenant
	// share off. Defaults to DefaultSuperWriteQPS.
	SuperWriteQPS float64
	// SuperWriteBurst is each tenant's burst of super writes above its share. Defaults to
	// DefaultSuperWriteBurst.
	SuperWriteBurst int
	// WorkerReservePercent is the percentage of each pipeline's workers no tenant may take
	// beyond its weighted share; 0: none. Defaults to DefaultWorkerReservePercent.
	WorkerReservePercent int
	// SlowTenantThreshold: a tenant whose requests hold a worker this long or longer on average
	// (or one of whose requests in flight has held one that long)
	// leaves each other tenant active in the last second the workers it used lately plus one
	// (within its weighted share), even while the others have nothing queued; 0 turns this off.
	// Defaults to DefaultSlowTenantThreshold.
	SlowTenantThreshold time.Duration
	// AdmissionWindowMax and AdmissionWindowMin bound the admission window for new super Pods
	// (Pods created and not yet bound); 0 max turns it off. Defaults 200 and 32.
	AdmissionWindowMax, AdmissionWindowMin int
	// LogFormat is the log encoding, "json" or "console". Defaults to DefaultLogFormat():
	// json in a Pod, console elsewhere. An explicit --zap-encoder wins over it.
	LogFormat string
	// GracefulShutdownTimeout is how long, after SIGTERM, the syncer waits for its workers and
	// servers to stop before it exits anyway (controller-runtime's
	// Options.GracefulShutdownTimeout); 0 does not wait. Keep it below the Pod's
	// terminationGracePeriodSeconds. Defaults to 30s.
	GracefulShutdownTimeout time.Duration
	// TenantRequestTimeout bounds every request of the syncer to a tenant apiserver except
	// its informers' lists and watches; 0 means no bound.
	TenantRequestTimeout time.Duration
	// Sharding spreads the tenants over every replica (pkg/sharding) instead of electing one
	// leader. Defaults to false.
	Sharding bool
	// ShardID names this replica's shard. Empty: the host name (the Pod name), sanitised.
	ShardID string
	// ShardLeaseDuration and ShardLeaseRenewInterval time the shard Leases (defaults 15s, 3s).
	ShardLeaseDuration, ShardLeaseRenewInterval time.Duration
}

// Defaults of each tenant's share of the syncer: super writes per second shared by the tenants
// writing (a third of the super client's 300 requests per second, so a tenant alone leaves
// room for every other tenant's requests), each tenant's burst above its share (writes), and
// the percentage of each pipeline's workers kept free for the tenants under their share.
const (
	DefaultSuperWriteQPS        = 100
	DefaultSuperWriteBurst      = 50
	DefaultWorkerReservePercent = 10
)

// DefaultSlowTenantThreshold is --slow-tenant-threshold's default: about ten times what a
// regular Pod's downward reconcile takes on a loaded syncer (30 ms alone, up to 0.4 s beside
// greedy tenants in docs/bench/fairness), well below a slow webhook's seconds.
const DefaultSlowTenantThreshold = 500 * time.Millisecond

// DefaultTenantRequestTimeout is --tenant-request-timeout's default: the longest timeout an
// admission webhook may have (admissionregistration.k8s.io/v1 timeoutSeconds is at most 30),
// and half of kube-apiserver's --request-timeout (60s).
const DefaultTenantRequestTimeout = 30 * time.Second

// DefaultCheckpointSecret is the name of the checkpoint Secret when --checkpoint-store is empty.
const DefaultCheckpointSecret = "vc-syncer-checkpoint"

// CheckpointStoreSpec returns --checkpoint-store with its default filled in.
func (o *Options) CheckpointStoreSpec() string {
	if o.CheckpointStore == "" {
		return "secret:" + o.KubeconfigNamespace + "/" + DefaultCheckpointSecret
	}
	return o.CheckpointStore
}

// ShardIdentity returns --shard-id, or the sanitised host name when it is empty.
func (o *Options) ShardIdentity() string {
	if o.ShardID != "" {
		return o.ShardID
	}
	h, _ := os.Hostname()
	return sharding.SanitizeID(h)
}

// ShardCheckpointStoreSpec returns the --checkpoint-store of shard id: the name with
// "-shard-<id>" appended for a secret: store, ".shard-<id>" for a file: store; "none" stays
// "none". (The words keep a shard's store and a tenant's hand-over store apart whatever the
// names.)
func (o *Options) ShardCheckpointStoreSpec(id string) string {
	spec := o.CheckpointStoreSpec()
	switch {
	case strings.HasPrefix(spec, "secret:"):
		return spec + "-shard-" + id
	case strings.HasPrefix(spec, "file:"):
		return spec + ".shard-" + id
	}
	return spec
}

// TenantCheckpointStoreSpec returns the store of tenant's hand-over checkpoint with
// --sharding: the --checkpoint-store name with "-tenant-" and 16 hex digits of the tenant
// name's SHA-256 appended for a secret: store (a Secret name stays short and valid),
// ".tenant-<tenant>" for a file: store; "none" stays "none".
func (o *Options) TenantCheckpointStoreSpec(tenant string) string {
	spec := o.CheckpointStoreSpec()
	switch {
	case strings.HasPrefix(spec, "secret:"):
		sum := sha256.Sum256([]byte(tenant))
		return spec + "-tenant-" + hex.EncodeToString(sum[:8])
	case strings.HasPrefix(spec, "file:"):
		return spec + ".tenant-" + tenant
	}
	return spec
}

// Log formats of --log-format.
const (
	LogFormatJSON    = "json"
	LogFormatConsole = "console"
)

// DefaultLogFormat returns "json" when the process runs in a Kubernetes Pod (the kubelet sets
// KUBERNETES_SERVICE_HOST in every container, as client-go's rest.InClusterConfig relies on),
// where logs are read by collectors, and "console" elsewhere, for people.
func DefaultLogFormat() string {
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return LogFormatJSON
	}
	return LogFormatConsole
}

// ZapOpts returns the options of the logger the flags describe, for zap.New: the --zap-*
// settings and the --log-format encoding (unless --zap-encoder was given), then extra (e.g.
// zap.WriteTo), applied last.
func (o *Options) ZapOpts(extra ...zap.Opts) []zap.Opts {
	opts := []zap.Opts{zap.UseFlagOptions(&o.Zap)}
	if o.Zap.NewEncoder == nil {
		if o.LogFormat == LogFormatJSON {
			opts = append(opts, zap.JSONEncoder())
		} else {
			opts = append(opts, zap.ConsoleEncoder())
		}
	}
	return append(opts, extra...)
}

// NewOptions returns Options with their defaults.
func NewOptions() *Options {
	return &Options{
		DownwardWorkers:         20,
		UpwardWorkers:           100,
		MetricsBindAddress:      ":8080",
		MetricsSecure:           true,
		HealthProbeBindAddress:  ":8081",
		KubeconfigNamespace:     "vc-syncer-system",
		InstallCRDs:             true,
		TenantDNS:               true,
		FairQueuing:             true,
		PodSecurityEnforce:      "baseline",
		TenantClusterDomain:     "cluster.local",
		RemediationInterval:     60 * time.Second,
		LeaderElect:             true,
		LogFormat:               DefaultLogFormat(),
		GracefulShutdownTimeout: 30 * time.Second,
		TenantRequestTimeout:    DefaultTenantRequestTimeout,
		CheckpointInterval:      30 * time.Second,
		CheckpointMaxItems:      15000,
		SuperWriteQPS:           DefaultSuperWriteQPS,
		SuperWriteBurst:         DefaultSuperWriteBurst,
		WorkerReservePercent:    DefaultWorkerReservePercent,
		SlowTenantThreshold:     DefaultSlowTenantThreshold,
		AdmissionWindowMax:      200,
		AdmissionWindowMin:      32,
		MemoryLimitRatio:        0.9,
		IdleMemoryRelease:       30 * time.Second,

		ShardLeaseDuration:      sharding.DefaultLeaseDuration,
		ShardLeaseRenewInterval: sharding.DefaultRenewInterval,

		VNodeGCGrace:               30 * time.Second,
		KubeletBindAddress:         "0",
		KubeletMaxStreamsPerTenant: kubeletproxy.DefaultMaxStreamsPerTenant,
		KubeletSuperMetricsPath:    kubeletproxy.DefaultSuperMetricsPath,
		VNodeLeaseDuration:         40 * time.Second,
		VNodeLeaseRenewInterval:    20 * time.Second,
		VNodeStatusReportFrequency: 5 * time.Minute,
	}
}

// AddFlags binds the options to fs, including the zap logging flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.SuperKubeconfig, "super-kubeconfig", o.SuperKubeconfig,
		"Path to the super cluster's kubeconfig. Empty: $KUBECONFIG, then the in-cluster service account, then ~/.kube/config.")
	fs.IntVar(&o.DownwardWorkers, "downward-workers", o.DownwardWorkers,
		"Number of workers that push tenant specs down to the super cluster (goroutines).")
	fs.IntVar(&o.UpwardWorkers, "upward-workers", o.UpwardWorkers,
		"Number of workers that push super-cluster statuses up to tenants (goroutines).")
	fs.BoolVar(&o.FairQueuing, "fair-queuing", o.FairQueuing,
		"Share workers between tenants by weighted round-robin over per-tenant queues (weights from Tenant spec.weight); false uses one FIFO per pipeline, for comparison.")
	fs.Float64Var(&o.SuperWriteQPS, "super-write-qps", o.SuperWriteQPS,
		"Super-cluster writes per second (create, update, patch, delete) the syncer's reconciles may make, shared by the tenants writing in proportion to their weights (Tenant spec.weight; a tenant alone gets all of it, a tenant that starts writing gets its share at once). A tenant that spent its share has its downward requests held in its queue, holding no worker, until its share allows the next; vcsyncer_write_share_delay_seconds_total{tenant} counts the time. Keep it below the super client's 300 requests per second so that one tenant cannot fill the client for the others. 0 turns the share off (only the client's global limit is left); it is off too with --fair-queuing=false.")
	fs.IntVar(&o.SuperWriteBurst, "super-write-burst", o.SuperWriteBurst,
		"Super writes a tenant may make at once above its share of --super-write-qps (the size of its token bucket, in writes).")
	fs.IntVar(&o.WorkerReservePercent, "worker-reserve-percent", o.WorkerReservePercent,
		"Percentage of each pipeline's workers (rounded up, at least 1, at most all but one) that no tenant may take beyond its weighted share, even when it is alone: a tenant whose requests are slow (its own webhooks, up to --tenant-request-timeout) then leaves them free for the first requests of the other tenants. 0 lets a tenant alone take every worker; it has no effect with --fair-queuing=false.")
	fs.DurationVar(&o.SlowTenantThreshold, "slow-tenant-threshold", o.SlowTenantThreshold,
		"A tenant whose requests hold a worker this long or longer on average (duration; a moving average of its last requests, e.g. slow admission webhooks of its own, up to --tenant-request-timeout), or one of whose requests in flight has held one that long already, leaves each other tenant active in the last second the most workers that tenant used at once lately plus one (at most its weighted share among the active tenants), even while they have nothing queued, so it cannot take back every worker a neighbour with sparse requests frees; it is never held below its own weighted share, and alone it still uses every worker but the reserve. 0 turns this off (a slow tenant then takes every idle worker but the reserve whenever the others' queues are empty); it has no effect with --fair-queuing=false.")
	fs.IntVar(&o.AdmissionWindowMax, "admission-window-max", o.AdmissionWindowMax,
		"Upper bound of the admission window: new super Pods created and not yet bound by the super scheduler at once, shared among the tenants with Pods waiting in proportion to their weights (a tenant alone may use all of it). Pods beyond it wait in the syncer, where tenants take turns, instead of in the super scheduler's first-come-first-served queue. The window adapts between --admission-window-min and this bound to the super scheduler's create-to-bind latency, so at low load nothing waits. 0 turns the window off; it is off too with --fair-queuing=false.")
	fs.IntVar(&o.AdmissionWindowMin, "admission-window-min", o.AdmissionWindowMin,
		"Lower bound (and starting size) of the admission window, in Pods; see --admission-window-max.")
	fs.Float64Var(&o.MemoryLimitRatio, "memory-limit-ratio", o.MemoryLimitRatio,
		"Set the Go runtime's memory limit (GOMEMLIMIT) to this fraction of the container's memory limit (cgroup), so the garbage collector works harder before the kernel would kill the syncer. 0 leaves it unset; a GOMEMLIMIT in the environment always wins; outside a container there is no limit to follow.")
	fs.DurationVar(&o.IdleMemoryRelease, "idle-memory-release", o.IdleMemoryRelease,
		"How often to check whether the syncer is quiet (fewer than 100 reconciles since the last check) and, if the Go runtime holds more than 4 MiB of freed heap, return it to the operating system; after a burst the resident memory then falls back to about the live heap. 0 turns it off.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress,
		"Address (host:port) that serves Prometheus metrics at /metrics and the status page at / (JSON at /status.json); \"0\" turns them off.")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure,
		"Serve the metrics port over HTTPS and answer only requests with a bearer token that the super apiserver authenticates (TokenReview) and authorizes for the path (SubjectAccessReview: verb get on the non-resource URL /metrics, / or /status.json; see the ClusterRole vc-syncer-metrics-reader); others get 401 (no token), 500 (a token the apiserver rejects) or 403 (not authorized). false: plain HTTP without authentication, for a loopback address only.")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-dir", o.MetricsCertDir,
		"Directory with tls.crt and tls.key for --metrics-secure (reloaded when they change). Empty, or without both files: a self-signed certificate for localhost, generated in memory at start.")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress,
		"Address (host:port) that serves /healthz and /readyz; \"0\" turns it off.")
	fs.StringVar(&o.PodSecurityEnforce, "pod-security-enforce", o.PodSecurityEnforce,
		"Pod Security Standards level (privileged, baseline or restricted) set as pod-security.kubernetes.io/enforce on every super namespace the syncer creates, so the super apiserver rejects tenant Pods that would break out (privileged, hostPath, host namespaces). Tenants cannot change it; super-cluster admins can. Empty: no label.")
	fs.StringVar(&o.PprofBindAddress, "pprof-bind-address", o.PprofBindAddress,
		"Address (host:port) that serves Go profiles at /debug/pprof/; empty or \"0\" turns it off.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect,
		"Elect a leader through a Lease so that only one of several replicas syncs at a time. Not used with --sharding.")
	fs.BoolVar(&o.Sharding, "sharding", o.Sharding,
		"Spread the tenants over every replica instead of electing a leader: each replica holds a shard Lease (vc-syncer-shard-<id>) in the --leader-election-namespace, the live shards form a consistent-hash ring, and each Tenant is synced by the one shard shown in its status.shard. A tenant that moves is drained and checkpointed by its old shard and resumed from that checkpoint by the new one; when a shard dies, its tenants move after its Lease expires. Each shard writes its own checkpoint (the --checkpoint-store name with \"-shard-<id>\" appended for secret:, \".shard-<id>\" for file:), and each tenant that moves a hand-over checkpoint (\"-tenant-<hash of the name>\", \".tenant-<name>\").")
	fs.StringVar(&o.ShardID, "shard-id", o.ShardID,
		"This replica's shard id with --sharding (lower-case letters, digits, '-' and '.'). Empty: the host name, which in a Pod is the Pod name.")
	fs.DurationVar(&o.ShardLeaseDuration, "shard-lease-duration", o.ShardLeaseDuration,
		"With --sharding: how long after a shard's last Lease renewal the other shards take its tenants (duration, whole seconds).")
	fs.DurationVar(&o.ShardLeaseRenewInterval, "shard-lease-renew-interval", o.ShardLeaseRenewInterval,
		"With --sharding: how often each shard renews its Lease (duration, at most a third of --shard-lease-duration). A shard whose last renewal is older than the Lease duration minus this interval stops writing for its tenants.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace,
		"Namespace of the leader-election Lease, and with --sharding of the shard Leases. Empty: the --kubeconfig-namespace.")
	fs.StringVar(&o.KubeconfigNamespace, "kubeconfig-namespace", o.KubeconfigNamespace,
		"The only super-cluster namespace whose Secrets are read: Tenants' kubeconfig Secrets must live here.")
	fs.BoolVar(&o.InstallCRDs, "install-crds", o.InstallCRDs,
		"Create or update the Tenant CustomResourceDefinition at start-up (turn off when a chart manages it).")
	fs.BoolVar(&o.TenantDNS, "tenant-dns", o.TenantDNS,
		"Point tenant Pods with dnsPolicy ClusterFirst (or ClusterFirstWithHostNet) at their tenant's own DNS Service (kube-system/kube-dns, through its super-cluster copy's ClusterIP, with the tenant's search path <ns>.svc.<domain> svc.<domain> <domain> and ndots 5), when the tenant has that Service; the tenant's DNS then answers tenant names (<svc>, <svc>.<ns>, <svc>.<ns>.svc.<domain>, <pod>.<svc>.<ns>.svc.<domain>). Pods of a tenant without it, and all Pods with false, use the super cluster's DNS, where only the Service names of the Pod's own namespace resolve, by short name.")
	fs.StringVar(&o.TenantClusterDomain, "tenant-cluster-domain", o.TenantClusterDomain,
		"DNS domain of the tenant clusters, used in tenant Pods' DNS search paths and in the host aliases kubernetes.default.svc.<domain> that point at the tenant apiserver.")
	fs.DurationVar(&o.RemediationInterval, "remediation-interval", o.RemediationInterval,
		"Time between two remediation scans, which compare every tenant's cache with the super cluster's cache and re-enqueue drifted objects at low priority (e.g. 60s, 5m); 0 turns them off.")
	fs.DurationVar(&o.VNodeGCGrace, "vnode-gc-grace", o.VNodeGCGrace,
		"How long a tenant's virtual Node is kept after the last tenant Pod bound to it left (duration, e.g. 30s). A vNode whose super Node is deleted is removed at once.")
	fs.DurationVar(&o.VNodeLeaseDuration, "vnode-lease-duration", o.VNodeLeaseDuration,
		"leaseDurationSeconds of the node Leases the syncer keeps in each tenant's kube-node-lease namespace (duration, whole seconds). Keep it below the tenant kube-controller-manager's --node-monitor-grace-period (default 50s).")
	fs.DurationVar(&o.VNodeLeaseRenewInterval, "vnode-lease-renew-interval", o.VNodeLeaseRenewInterval,
		"How often the syncer renews each vNode Lease (duration, at most half of --vnode-lease-duration). A kubelet renews every 10s; 20s halves the Lease writes, which grow as tenants × super Nodes, and stays well inside the tenant node-lifecycle controller's --node-monitor-grace-period (default 50s).")
	fs.DurationVar(&o.VNodeStatusReportFrequency, "vnode-status-report-frequency", o.VNodeStatusReportFrequency,
		"How often a virtual Node's status is written when nothing in it changed, refreshing its conditions' lastHeartbeatTime (duration; the kubelet's nodeStatusReportFrequency). Changes of the super Node are written at once.")
	fs.StringVar(&o.KubeletBindAddress, "kubelet-bind-address", o.KubeletBindAddress,
		"host:port of the kubelet API of the tenants' virtual Nodes, which serves tenant users' kubectl logs, exec, attach and port-forward (HTTPS; each request must carry a client certificate signed by its Tenant's spec.kubeletClientCA, and reaches only that tenant's synced Pods, forwarded to the super apiserver's pods/log, exec, attach and portforward with the syncer's credentials). \"0\" turns it off: vNodes then copy the super Node's addresses.")
	fs.StringVar(&o.KubeletAdvertiseAddress, "kubelet-advertise-address", o.KubeletAdvertiseAddress,
		"IP address or DNS name the virtual Nodes advertise for the kubelet API (their status.addresses); the tenant apiservers must reach it. Empty: the host of --kubelet-bind-address, which must then be a specific IP address.")
	fs.Int32Var(&o.KubeletAdvertisePort, "kubelet-advertise-port", o.KubeletAdvertisePort,
		"Port the virtual Nodes advertise for the kubelet API (status.daemonEndpoints.kubeletEndpoint.Port), e.g. a Service's port. 0: the port of --kubelet-bind-address.")
	fs.StringVar(&o.KubeletTLSCertFile, "kubelet-tls-cert-file", o.KubeletTLSCertFile,
		"PEM serving certificate of the kubelet API. Tenant apiservers verify it only when started with --kubelet-certificate-authority (its CA). Empty with --kubelet-tls-private-key-file empty: a self-signed certificate generated at start.")
	fs.StringVar(&o.KubeletTLSKeyFile, "kubelet-tls-private-key-file", o.KubeletTLSKeyFile,
		"PEM private key of --kubelet-tls-cert-file.")
	fs.BoolVar(&o.KubeletNodeStats, "kubelet-node-stats", o.KubeletNodeStats,
		"Serve the virtual Nodes' stats/summary and metrics/resource (the calling tenant's own Pods only) from the super Nodes' resource metrics, read through the super apiserver's nodes/<node>/proxy. Off: both answer 404. It needs RBAC nodes/proxy get, which also lets the syncer's token call any super kubelet's own API directly (a kubelet authorizes exec over a WebSocket GET as nodes/proxy get): grant it (the chart's kubeletAPI.nodeStats) only if that is acceptable.")
	fs.StringVar(&o.KubeletSuperMetricsPath, "kubelet-super-metrics-path", o.KubeletSuperMetricsPath,
		"Path of a super Node's resource metrics (Prometheus text) on its kubelet, which the syncer reads through the super apiserver's nodes/<node>/proxy to answer a virtual Node's stats/summary and metrics/resource with the calling tenant's own Pods only; {nodeName} is replaced by the Node's name. A kubelet serves /metrics/resource; kwok serves /metrics/nodes/{nodeName}/metrics/resource.")
	fs.StringVar(&o.KubeletSuperMetricsURL, "kubelet-super-metrics-url", o.KubeletSuperMetricsURL,
		"https URL of a super Node's resource metrics ({nodeName} replaced by the Node's name), read directly with the super kubeconfig's CA and client certificate (never its token) instead of through nodes/<node>/proxy: only for super clusters whose kubelets listen on loopback, which kube-apiserver refuses to proxy to (the local kwok of vc-syncer dev). Empty: through the super apiserver.")
	fs.IntVar(&o.KubeletMaxStreamsPerTenant, "kubelet-max-streams-per-tenant", o.KubeletMaxStreamsPerTenant,
		"Most kubelet API requests forwarded for one tenant at a time (kubectl logs, logs -f, exec, attach and port-forward each hold one until they end); one more is refused with 429 and counted in vcsyncer_kubelet_requests_total{result=\"too_many_streams\"}; a TenantPolicy's kubelet.maxStreams lowers it for its tenants. At least 1.")
	fs.StringSliceVar(&o.OptInKinds, "opt-in-kinds", o.OptInKinds,
		"Comma-separated opt-in kinds to sync besides the default ones: Ingress, NetworkPolicy, PodDisruptionBudget. Event is accepted too; it is synced by default (see --disabled-kinds). Empty: none.")
	fs.StringSliceVar(&o.DisabledKinds, "disabled-kinds", o.DisabledKinds,
		"Comma-separated default kinds not to sync: Event (super Events about synced objects, copied into the tenants through their own rate-limited pipeline; it caches every super Event). Empty: none.")
	fs.StringVar(&o.CheckpointStore, "checkpoint-store", o.CheckpointStore,
		"Where the syncer saves checkpoints so that a restart resumes instead of re-listing every tenant: file:PATH (a local file, written atomically), secret:NAMESPACE/NAME (Secrets in the super cluster, chunked under 1 MiB), or none (every start is cold). Empty: secret:<--kubeconfig-namespace>/"+DefaultCheckpointSecret+".")
	fs.DurationVar(&o.CheckpointInterval, "checkpoint-interval", o.CheckpointInterval,
		"Time between two checkpoints (duration, e.g. 30s); a final one is written on graceful shutdown.")
	fs.IntVar(&o.CheckpointMaxItems, "checkpoint-max-items", o.CheckpointMaxItems,
		"Per-tenant checkpoint budget: a tenant whose queues hold more unfinished items than this is left out of the checkpoint (metric vcsyncer_checkpoint_tenant_left_out{tenant}); after a restart it is listed again and all its objects are reconciled, while the other tenants resume from the checkpoint.")
	fs.StringVar(&o.LogFormat, "log-format", o.LogFormat,
		"Log encoding: json (one JSON object per line, for log collectors) or console (for people). Default: json when running in a Pod ($KUBERNETES_SERVICE_HOST is set), console otherwise. --zap-encoder, when given, wins.")
	fs.DurationVar(&o.GracefulShutdownTimeout, "graceful-shutdown-timeout", o.GracefulShutdownTimeout,
		"How long to wait after SIGTERM for workers and servers to stop before exiting anyway (duration, e.g. 30s; 0 does not wait). Keep it below the Pod's terminationGracePeriodSeconds.")
	fs.DurationVar(&o.TenantRequestTimeout, "tenant-request-timeout", o.TenantRequestTimeout,
		"Bound on each request to a tenant apiserver (gets, writes, TokenRequests, Events; duration, e.g. 30s; 0: no bound): past it the request fails and is retried with its tenant's backoff, so a tenant apiserver that answers slowly, e.g. through its own admission webhooks, cannot hold a shared worker longer. It does not apply to the informers' watches. The default, 30s, is the longest timeout an admission webhook may have (a request that waits on a webhook of the tenant's own fails there anyway) and half the tenant kube-apiserver's own --request-timeout (60s).")
	gofs := flag.NewFlagSet("zap", flag.ContinueOnError)
	o.Zap.BindFlags(gofs)
	fs.AddGoFlagSet(gofs)
}

// Validate returns an error describing the first invalid option.
func (o *Options) Validate() error {
	var errs []error
	if o.DownwardWorkers < 1 {
		errs = append(errs, errors.New("--downward-workers must be at least 1"))
	}
	if o.UpwardWorkers < 1 {
		errs = append(errs, errors.New("--upward-workers must be at least 1"))
	}
	switch o.PodSecurityEnforce {
	case "", "privileged", "baseline", "restricted":
	default:
		errs = append(errs, errors.New("--pod-security-enforce must be privileged, baseline, restricted or empty"))
	}
	if errs2 := validation.IsDNS1123Subdomain(o.TenantClusterDomain); len(errs2) > 0 {
		errs = append(errs, fmt.Errorf("--tenant-cluster-domain %q: %s", o.TenantClusterDomain, strings.Join(errs2, "; ")))
	}
	if o.CheckpointInterval <= 0 {
		errs = append(errs, errors.New("--checkpoint-interval must be positive"))
	}
	if o.AdmissionWindowMax < 0 || o.AdmissionWindowMin < 1 || (o.AdmissionWindowMax > 0 && o.AdmissionWindowMin > o.AdmissionWindowMax) {
		errs = append(errs, errors.New("--admission-window-min must be at least 1 and --admission-window-max 0 (off) or at least --admission-window-min"))
	}
	if o.SuperWriteQPS < 0 || o.SuperWriteBurst < 1 {
		errs = append(errs, errors.New("--super-write-qps must not be negative and --super-write-burst must be at least 1"))
	}
	if o.WorkerReservePercent < 0 || o.WorkerReservePercent > 100 {
		errs = append(errs, errors.New("--worker-reserve-percent must be between 0 and 100"))
	}
	if o.SlowTenantThreshold < 0 {
		errs = append(errs, errors.New("--slow-tenant-threshold must not be negative"))
	}
	if o.MemoryLimitRatio < 0 || o.MemoryLimitRatio > 1 {
		errs = append(errs, errors.New("--memory-limit-ratio must be between 0 and 1"))
	}
	if o.IdleMemoryRelease < 0 {
		errs = append(errs, errors.New("--idle-memory-release must not be negative"))
	}
	if o.CheckpointMaxItems < 1 {
		errs = append(errs, errors.New("--checkpoint-max-items must be at least 1"))
	}
	if o.RemediationInterval < 0 {
		errs = append(errs, errors.New("--remediation-interval must not be negative"))
	}
	if o.VNodeGCGrace < 0 {
		errs = append(errs, errors.New("--vnode-gc-grace must not be negative"))
	}
	if o.VNodeLeaseDuration < 4*time.Second {
		errs = append(errs, errors.New("--vnode-lease-duration must be at least 4s"))
	}
	if o.VNodeLeaseRenewInterval < time.Second || 2*o.VNodeLeaseRenewInterval > o.VNodeLeaseDuration {
		errs = append(errs, errors.New("--vnode-lease-renew-interval must be at least 1s and at most half of --vnode-lease-duration"))
	}
	if _, _, err := o.KubeletEndpoint(); err != nil {
		errs = append(errs, err)
	}
	if o.KubeletMaxStreamsPerTenant < 1 {
		errs = append(errs, errors.New("--kubelet-max-streams-per-tenant must be at least 1"))
	}
	if err := kubeletproxy.ValidateSuperMetricsPath(o.KubeletSuperMetricsPath); err != nil {
		errs = append(errs, fmt.Errorf("--kubelet-super-metrics-path: %w", err))
	}
	if err := kubeletproxy.ValidateSuperMetricsURL(o.KubeletSuperMetricsURL); err != nil {
		errs = append(errs, fmt.Errorf("--kubelet-super-metrics-url: %w", err))
	}
	if (o.KubeletTLSCertFile == "") != (o.KubeletTLSKeyFile == "") {
		errs = append(errs, errors.New("--kubelet-tls-cert-file and --kubelet-tls-private-key-file go together"))
	}
	if o.VNodeStatusReportFrequency < time.Second {
		errs = append(errs, errors.New("--vnode-status-report-frequency must be at least 1s"))
	}
	if o.LogFormat != LogFormatJSON && o.LogFormat != LogFormatConsole {
		errs = append(errs, fmt.Errorf("--log-format must be %s or %s, not %q", LogFormatJSON, LogFormatConsole, o.LogFormat))
	}
	if o.TenantRequestTimeout < 0 {
		errs = append(errs, errors.New("--tenant-request-timeout must not be negative"))
	}
	if o.GracefulShutdownTimeout < 0 {
		errs = append(errs, errors.New("--graceful-shutdown-timeout must not be negative"))
	}
	if o.MetricsCertDir != "" && !o.MetricsSecure {
		errs = append(errs, errors.New("--metrics-cert-dir needs --metrics-secure=true"))
	}
	if o.Sharding {
		if o.ShardID != "" {
			if err := sharding.ValidateID(o.ShardID); err != nil {
				errs = append(errs, fmt.Errorf("--shard-id: %w", err))
			}
		}
		if o.ShardLeaseDuration < time.Second || 3*o.ShardLeaseRenewInterval > o.ShardLeaseDuration || o.ShardLeaseRenewInterval <= 0 {
			errs = append(errs, errors.New("--shard-lease-duration must be at least 1s and at least three --shard-lease-renew-interval"))
		}
	}
	if o.KubeconfigNamespace == "" {
		errs = append(errs, errors.New("--kubeconfig-namespace must not be empty"))
	}
	if _, err := kinds.SelectOptIn(o.OptInKindList()); err != nil {
		errs = append(errs, fmt.Errorf("--opt-in-kinds: %w", err))
	}
	if _, err := kinds.SelectOptional(o.DisabledKindList(), o.OptInKindList()); err != nil {
		errs = append(errs, fmt.Errorf("--disabled-kinds: %w", err))
	}
	return errors.Join(errs...)
}

// OptInKindList returns OptInKinds as resource kinds, with blanks trimmed and empty items
// dropped.
func (o *Options) OptInKindList() []resources.Kind { return kindList(o.OptInKinds) }

// DisabledKindList returns DisabledKinds as resource kinds, with blanks trimmed and empty
// items dropped.
func (o *Options) DisabledKindList() []resources.Kind { return kindList(o.DisabledKinds) }

func kindList(kinds []string) []resources.Kind {
	var out []resources.Kind
	for _, k := range kinds {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, resources.Kind(k))
		}
	}
	return out
}

// KubeletEndpoint returns the address and port the vNodes advertise for the kubelet API
// (--kubelet-advertise-address and --kubelet-advertise-port, defaulted from
// --kubelet-bind-address); empty when the kubelet API is off.
func (o *Options) KubeletEndpoint() (string, int32, error) {
	if o.KubeletBindAddress == "0" || o.KubeletBindAddress == "" {
		return "", 0, nil
	}
	host, portStr, err := net.SplitHostPort(o.KubeletBindAddress)
	if err != nil {
		return "", 0, fmt.Errorf("--kubelet-bind-address %q: want host:port: %w", o.KubeletBindAddress, err)
	}
	port, err := strconv.ParseInt(portStr, 10, 32)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("--kubelet-bind-address %q: invalid port", o.KubeletBindAddress)
	}
	addr := o.KubeletAdvertiseAddress
	if addr == "" {
		if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
			return "", 0, fmt.Errorf("--kubelet-advertise-address is required when --kubelet-bind-address %q names no specific IP address", o.KubeletBindAddress)
		}
		addr = host
	}
	adv := o.KubeletAdvertisePort
	if adv == 0 {
		adv = int32(port)
	}
	if adv < 1 || adv > 65535 {
		return "", 0, errors.New("--kubelet-advertise-port (or the port of --kubelet-bind-address) must be between 1 and 65535")
	}
	return addr, adv, nil
}
