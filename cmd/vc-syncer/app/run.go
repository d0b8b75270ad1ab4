package app

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/yaml"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	"github.com/vcsyncer/syncer/config"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/store"
	"github.com/vcsyncer/syncer/pkg/fairqueue"
	"github.com/vcsyncer/syncer/pkg/remediation"
	"github.com/vcsyncer/syncer/pkg/sharding"
	"github.com/vcsyncer/syncer/pkg/syncer"
	"github.com/vcsyncer/syncer/pkg/tenant"
	"github.com/vcsyncer/syncer/pkg/version"
	"github.com/vcsyncer/syncer/pkg/vnode"
)

func newRunCommand() *cobra.Command {
	o := options.NewOptions()
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the syncer against a super cluster",
		Long: `Run the syncer: watch the Tenant objects of the super cluster, connect to every tenant
control plane they name, push specs down and statuses up until interrupted.

The super cluster is reached through --super-kubeconfig (or in-cluster credentials). The Tenant
CRD is installed at start-up unless --install-crds=false. Metrics are served at
--metrics-bind-address/metrics and the status page at / and /status.json, over HTTPS to
clients whose bearer token the super apiserver authenticates and authorizes (get on those
non-resource URLs) unless --metrics-secure=false; health at --health-probe-bind-address/healthz
and /readyz, plain HTTP without authentication (for the kubelet's probes).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			logger := zap.New(o.ZapOpts()...)
			ctrl.SetLogger(logger)
			klog.SetLogger(logger) // client-go's own lines (leader election, API warnings) in the same format
			cfg, err := superConfig(o.SuperKubeconfig)
			if err != nil {
				return err
			}
			return Run(cmd.Context(), o, cfg)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// superConfig loads the super cluster's rest.Config from path, or from in-cluster credentials
// and $KUBECONFIG when path is empty.
func superConfig(path string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if path != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", path)
	} else {
		cfg, err = ctrl.GetConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("failed to load the super cluster's kubeconfig (pass --super-kubeconfig FILE or set $KUBECONFIG): %w", err)
	}
	return cfg, nil
}

// Scheme returns the scheme of the super-cluster manager: client-go kinds and Tenant.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = tenancyv1alpha1.AddToScheme(s)
	return s
}

// superClientConfig returns a copy of cfg for the syncer's super-cluster clients: user agent
// vc-syncer (vc-syncer/shard=ID when shardID is not empty, so that the super apiserver's audit
// log and metrics tell the shards' requests apart), client-side QPS 300 and burst 600, and no
// gzip. kube-apiserver compresses a WatchList stream (an informer's first list and every event
// after it) one gzip member per event when the client accepts gzip (k8s.io/apiserver
// handlers/watch.go, perFlushGzipWriter): a compression in the super apiserver and a
// decompression in the syncer per super Pod event, where the syncer runs beside the super
// apiserver and bytes are cheaper than CPU.
func superClientConfig(cfg *rest.Config, shardID string) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "vc-syncer"
	if shardID != "" {
		cfg.UserAgent = "vc-syncer/shard=" + shardID
	}
	cfg.QPS, cfg.Burst = 300, 600
	cfg.DisableCompression = true
	return cfg
}

// Run runs the syncer against the super cluster reached through cfg until ctx is done.
func Run(ctx context.Context, o *options.Options, cfg *rest.Config) error {
	log := ctrl.Log.WithName("vc-syncer")
	ctx = ctrl.LoggerInto(ctx, log)
	log.Info("Starting", "version", version.String())
	log.V(1).Info("Flags", "options", fmt.Sprintf("%+v", *o))
	setMemoryLimit(log, o.MemoryLimitRatio)
	shardID := ""
	if o.Sharding {
		shardID = o.ShardIdentity()
	}
	cfg = superClientConfig(cfg, shardID)

	if o.InstallCRDs {
		if err := InstallCRD(ctx, cfg); err != nil {
			return err
		}
	}
	// Built-in kinds travel as protobuf, as kube-controller-manager's do: cheaper to encode and
	// decode for the syncer and for the apiserver than JSON. (The manager's client keeps JSON:
	// custom resources such as Tenant have no protobuf encoding.)
	pcfg := rest.CopyConfig(cfg)
	pcfg.ContentType = "application/vnd.kubernetes.protobuf"
	pcfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	pcfg.Wrap(fairqueue.CountWrites) // each tenant's super writes, for its share of --super-write-qps
	superCS, err := kubernetes.NewForConfig(pcfg)
	if err != nil {
		return err
	}
	if err := ensureNamespace(ctx, superCS, o.KubeconfigNamespace); err != nil {
		return err
	}
	leNS := o.LeaderElectionNamespace
	if leNS == "" {
		leNS = o.KubeconfigNamespace
	}
	if !o.MetricsSecure && o.MetricsBindAddress != "0" && !isLoopback(o.MetricsBindAddress) {
		log.Info("WARNING: --metrics-secure=false serves metrics and the status page (every tenant's name, phase and queue figures) over plain HTTP without authentication on a non-loopback address", "address", o.MetricsBindAddress)
	}
	notCheckpoint, err := labels.Parse("!" + store.LabelID)
	if err != nil {
		return err
	}
	var membership *sharding.Membership
	var reconciler *tenant.Reconciler
	if o.Sharding {
		membership, err = sharding.New(sharding.Options{Client: superCS, Namespace: leNS, ID: shardID,
			LeaseDuration: o.ShardLeaseDuration, RenewInterval: o.ShardLeaseRenewInterval,
			ExclusiveLease: leaderElectionID, // a leader of replicas without sharding must be gone first
			OnChange: func() {
				if reconciler != nil {
					go reconciler.NotifyAll(ctx)
				}
			}})
		if err != nil {
			return err
		}
		log.Info("Sharding: this replica is one shard of the ring", "shard", shardID, "namespace", leNS)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  Scheme(),
		Metrics:                 metricsServerOptions(o),
		HealthProbeBindAddress:  o.HealthProbeBindAddress,
		PprofBindAddress:        o.PprofBindAddress,
		LeaderElection:          o.LeaderElect && !o.Sharding,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: leNS,
		// Hand the Lease over at once on SIGTERM: Run returns right after the manager stops, so
		// no work is done after the release (controller-runtime's condition for this option).
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       &o.GracefulShutdownTimeout,
		Controller:                    ctrlconfig.Controller{SkipNameValidation: &o.RunsAgainInProcess},
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			// Tenant kubeconfig Secrets only: the checkpoint store's chunks (which may share the
			// namespace) are neither cached nor a reason to reconcile Tenants.
			&corev1.Secret{}: {Namespaces: map[string]cache.Config{o.KubeconfigNamespace: {}}, Label: notCheckpoint},
		}},
	})
	if err != nil {
		return fmt.Errorf("failed to create manager: %w", err)
	}
	storeSpec := o.CheckpointStoreSpec()
	if o.Sharding {
		storeSpec = o.ShardCheckpointStoreSpec(shardID)
	}
	ckptStore, err := store.Parse(storeSpec, superCS, store.Options{Holder: holderIdentity()})
	if err != nil {
		return fmt.Errorf("--checkpoint-store: %w", err)
	}
	ckptOpts := syncer.CheckpointOptions{Store: ckptStore, Interval: o.CheckpointInterval, MaxItems: o.CheckpointMaxItems,
		Holder: holderIdentity(), ReloadOnLead: o.LeaderElect && !o.Sharding, Config: fmt.Sprintf("workers=%d/%d", o.DownwardWorkers, o.UpwardWorkers)}
	var fence syncer.ShardFence
	if membership != nil {
		fence = membership
		ckptOpts.StoreOf = func(shard string) (checkpoint.Store, error) {
			return store.Parse(o.ShardCheckpointStoreSpec(shard), superCS, store.Options{Holder: holderIdentity()})
		}
		ckptOpts.TenantStoreOf = func(tenant string) (checkpoint.Store, error) {
			return store.Parse(o.TenantCheckpointStoreSpec(tenant), superCS, store.Options{Holder: holderIdentity()})
		}
	}
	kubeletAddr, kubeletPort, err := o.KubeletEndpoint()
	if err != nil {
		return err
	}
	s, err := syncer.New(syncer.Options{
		Super: superCS, DownwardWorkers: o.DownwardWorkers, UpwardWorkers: o.UpwardWorkers, DisableFairQueuing: !o.FairQueuing,
		Admission: syncer.AdmissionOptions{MaxWindow: o.AdmissionWindowMax, MinWindow: o.AdmissionWindowMin},
		Share: syncer.ShareOptions{SuperWriteQPS: o.SuperWriteQPS, SuperWriteBurst: o.SuperWriteBurst, WorkerReservePercent: o.WorkerReservePercent,
			SlowTenantThreshold: o.SlowTenantThreshold},
		PodSecurityEnforce: o.PodSecurityEnforce,
		TenantDNS:          o.TenantDNS, ClusterDomain: o.TenantClusterDomain,
		VNode: vnode.Options{GCGrace: o.VNodeGCGrace, LeaseDuration: o.VNodeLeaseDuration, LeaseRenewInterval: o.VNodeLeaseRenewInterval,
			StatusReportFrequency: o.VNodeStatusReportFrequency, Kubelet: vnode.KubeletEndpoint{Address: kubeletAddr, Port: kubeletPort}},
		OptInKinds:    o.OptInKindList(),
		DisabledKinds: o.DisabledKindList(),
		Checkpoint:    ckptOpts,
		Sharding:      fence,
	})
	if err != nil {
		return err
	}
	registry := tenant.NewRegistry(ctx, s)
	registry.RequestTimeout = o.TenantRequestTimeout
	s.SetRegistry(registry)
	reconciler = &tenant.Reconciler{
		Client:              mgr.GetClient(),
		Registry:            registry,
		KubeconfigNamespace: o.KubeconfigNamespace,
		// core/v1 Events (record.EventRecorder), which `kubectl describe tenant` shows and the
		// tests read; the events.k8s.io recorder of GetEventRecorder is not wired in yet.
		Recorder: mgr.GetEventRecorderFor("vc-syncer"), //nolint:staticcheck // see above: the core/v1 recorder is the one the Tenant controller takes

	}
	if membership != nil {
		reconciler.Sharding, reconciler.Handover = membership, s
		if err := mgr.Add(manager.RunnableFunc(membership.Run)); err != nil {
			return err
		}
	}
	if err := reconciler.SetupWithManager(mgr); err != nil {
		return err
	}
	if err := addKubeletAPI(mgr, o, cfg, s, registry); err != nil {
		return err
	}
	if err := mgr.Add(&tenant.LagWriter{Client: mgr.GetClient(), Source: s.TenantLags, Shard: shardID}); err != nil {
		return err
	}
	// Every replica warms its super caches (from the checkpoint) before it may lead.
	if err := mgr.Add(s.Warmup()); err != nil {
		return err
	}
	if err := mgr.Add(s); err != nil {
		return err
	}
	go releaseIdleMemory(ctx, log, o.IdleMemoryRelease, 100, s.Processed, debug.FreeOSMemory)
	if o.RemediationInterval > 0 {
		scanner, err := remediation.New(remediation.Options{
			Interval: o.RemediationInterval, Env: s.Env(), Resources: s.Resources(), Tenants: registry, Queue: s,
		})
		if err != nil {
			return err
		}
		s.AddCheckpointExtra(scanner) // its findings survive a restart
		if err := mgr.Add(scanner); err != nil {
			return err
		}
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("syncer", readyCheck(elected(mgr.Elected()), s.ReadyCheck)); err != nil {
		return err
	}
	if err := addStatusPage(mgr, o, s); err != nil {
		return err
	}
	err = mgr.Start(ctx)
	if membership != nil {
		if err != nil {
			// Stopped on an error or past the graceful-shutdown timeout: workers may still run,
			// so the tenants are not released; the others take them when the Lease expires.
			log.Error(err, "Not releasing this shard's tenants; they move when its Lease expires")
		} else {
			leaveRing(log, cfg, membership)
		}
	}
	return err
}

// leaveRing hands this shard's tenants to the other shards on shutdown, after the final
// checkpoint (the manager has stopped): their status.shard is emptied, then the shard Lease is
// deleted, so the others take them at once instead of after the Lease expires.
func leaveRing(log logr.Logger, cfg *rest.Config, m *sharding.Membership) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		log.Error(err, "Cannot release this shard's tenants; they move when its Lease expires")
		return
	}
	n, err := tenant.ReleaseShard(ctx, c, m.ID())
	if err != nil {
		log.Error(err, "Some tenants not released; they move when this shard's Lease expires")
	}
	if err := m.Leave(ctx); err != nil {
		log.Error(err, "Shard Lease not deleted; it expires")
	}
	log.Info("Left the shard ring", "shard", m.ID(), "tenantsReleased", n)
}

// leaderElectionID is the name of the leader-election Lease of replicas without sharding.
const leaderElectionID = "vc-syncer.tenancy.vcsyncer.io"

// holderIdentity names this process in checkpoints: the Pod name (host name) and PID.
func holderIdentity() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s_%d", h, os.Getpid())
}

func ensureNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
		return fmt.Errorf("failed to create namespace %s: %w", ns, err)
	}
	return nil
}

// InstallCRD creates or updates the Tenant and TenantPolicy CRDs and waits (up to 30 s each)
// until they are Established.
func InstallCRD(ctx context.Context, cfg *rest.Config) error {
	for _, y := range [][]byte{config.TenantCRD, config.TenantPolicyCRD} {
		if err := installCRD(ctx, cfg, y); err != nil {
			return err
		}
	}
	return nil
}

// installCRD creates or updates the CRD of YAML y and waits (up to 30 s) until it is Established.
func installCRD(ctx context.Context, cfg *rest.Config, y []byte) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(y, crd); err != nil {
		return fmt.Errorf("embedded CRD is invalid: %w", err)
	}
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crds := cs.ApiextensionsV1().CustomResourceDefinitions()
	// Several replicas (or a replica and `vc-syncer dev`) may install it at the same time:
	// retry on conflict and on a concurrent create.
	err = retry.OnError(retry.DefaultBackoff, func(err error) bool {
		return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
	}, func() error {
		existing, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = crds.Create(ctx, crd, metav1.CreateOptions{})
			return err
		case err != nil:
			return err
		default:
			want := crd.DeepCopy()
			want.ResourceVersion = existing.ResourceVersion
			_, err = crds.Update(ctx, want, metav1.UpdateOptions{})
			return err
		}
	})
	if err != nil {
		return fmt.Errorf("failed to install CRD %s: %w", crd.Name, err)
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		c, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, cond := range c.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}
