// Package localcluster starts real local Kubernetes control planes from prebuilt binaries for
// `vc-syncer dev`, the integration tests and the benchmarks: one super cluster (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok with fake Nodes) and any number of tenant
// control planes (etcd, kube-apiserver and a kube-controller-manager with the default
// controllers, node-lifecycle included, but no PersistentVolume controllers, and no
// scheduler). No container runtime, kind or envtest download is involved.
//
// Every tenant has a kube-system/kube-dns Service as a kubeadm cluster does (selector
// k8s-app=kube-dns; its ClusterIP allocated by the tenant apiserver), so the syncer treats it as
// a tenant that runs cluster DNS. kwok runs no CoreDNS Pod behind it: ControlPlane.StartCoreDNS
// starts a real CoreDNS (bin/coredns) on 127.0.0.1 whose kubernetes plugin reads that control
// plane, and PodResolver resolves names the way a Pod's resolver does with a super Pod's
// dnsConfig, mapping the nameserver IP (not routable here) to that local server.
//
// # Usage
//
// Build the binaries once per machine (about 10 minutes on 2 cores; later runs take seconds):
//
//	make tools   # runs hack/build-tools.sh, prints the tools directory (see ToolsDir)
//
// Start (or StartSuper and StartTenant) and Stop:
//
//	env, err := localcluster.Start(ctx, localcluster.SuperOptions{Options: localcluster.Options{Dir: dir, Progress: log}}, 3)
//	if err != nil { ... }
//	defer env.Stop()
//	tenant := env.Tenants[0].Client        // kubernetes.Interface, admin
//	super := env.Super.RESTConfig          // *rest.Config, admin
//	_ = env.Tenants[0].Kubeconfig          // self-contained kubeconfig bytes for the syncer
//
// Tests start it with test/framework's StartT, which also stops it and keeps the logs of a
// failed test. CheckTools tells whether the binaries are there; EnsureTools builds them.
// StartupDuration, ComponentStartupDurations and PIDs expose what benchmarks report.
//
// # Implementation details
//
// Binaries come from ToolsDir() (bin/ plus kwok-stages.yaml), the same versioned cache directory
// hack/build-tools.sh fills; EnsureTools runs that script when something is missing. Each control
// plane gets a state directory Dir/<name> with:
//
//   - pki/: an ECDSA P-256 CA (also the kube-controller-manager's cluster signing CA), an
//     apiserver serving certificate for 127.0.0.1, localhost, the first service IP (10.96.0.1 in
//     the super cluster, 10.96.<i>.1 in tenant i of an Environment) and kubernetes.default.svc[.cluster.local], an
//     admin client certificate in group system:masters and an ECDSA service-account key pair
//     (kube-apiserver signs tokens with ES256). Generated with crypto/x509, no openssl.
//   - admin.kubeconfig: written with clientcmd, certificates embedded.
//   - etcd-data/ and logs/<component>.log (stdout and stderr, with the command line on top).
//
// Components start in dependency order, each on free 127.0.0.1 ports (picked by listening on
// port 0; a component that loses the race for its port is restarted with new ports), and each is
// waited for through its health endpoint: etcd /health, kube-apiserver /readyz with the admin
// certificate, kube-controller-manager and kube-scheduler /healthz (self-signed, not verified),
// kwok /healthz. kube-apiserver runs with --advertise-address=127.0.0.1 and
// --endpoint-reconciler-type=none (1.37 refuses a loopback advertise address otherwise), RBAC,
// default admission plugins and the watch cache on. etcd runs with --unsafe-no-fsync and a
// 2 GiB quota. The super cluster's fake Nodes get distinct InternalIPs (10.200.0.<i+1>) and
// podCIDRs (10.244.<i>.0/24), from which kwok assigns Pod IPs.
//
// Each kube-apiserver runs with a kubelet client certificate (--kubelet-client-certificate)
// signed by a CA of its own that signs nothing else (ControlPlane.KubeletClientCA, the value of
// a Tenant's spec.kubeletClientCA). The super cluster's kwok serves the kubelet API of every
// fake Node over TLS on 127.0.0.1 (--node-port puts its port in the Nodes' daemonEndpoints;
// the Nodes carry the InternalDNS address 127.0.0.1, which the super apiserver prefers, as
// kwok-node-N does not resolve): the log of every container is PodLogFile (AppendPodLog
// writes CRI lines to it), an attach follows that file from its end, with
// SuperOptions.KubeletExec an exec runs the requested command on this machine, in ExecDir (empty
// at start), as user nobody when running as root (tar with TAR_OPTIONS=--blocking-factor=1, so
// that `kubectl cp` into a Pod ends although kwok never closes a command's stdin), and with
// SuperOptions.KubeletPortForwardTarget every port-forward connects to that loopback address.
//
// Every child runs in its own process group with Pdeathsig SIGKILL, so nothing outlives a test
// binary that crashes or is killed. Stop sends SIGTERM to the clients (kwok, scheduler,
// controller manager), then kube-apiserver, then etcd, and SIGKILL to a process group still
// alive 15 s later.
//
// # Implementation considerations
//
// Pdeathsig fires when the OS thread that forked the child exits, not the process. Go only ends
// threads whose goroutine exited while locked with runtime.LockOSThread, so do not call Start,
// StartSuper or StartTenant from such a goroutine.
//
// Separate processes, not in-process servers: kube-apiserver as a library needs k8s.io/kubernetes
// and its 28 replace directives in the product's go.mod, and envtest has no scheduler, controller
// manager or kwok. A tenant costs ~205 MiB of new memory (~420 MiB RSS with its controller
// manager, binary pages shared) and ~3 s of start-up alone, ~10 s each when nine start at once
// on 2 cores. Start brings up four control planes at a time, which measured fastest overall.
//
// The clients' rate limits are raised (QPS 100, Burst 200 for RESTConfig and for the
// kube-controller-manager) so that tests and benchmarks measure the servers, not client-go's
// default throttling of 5 QPS.
//
// It sits on floor 0 of the package map in docs/architecture.md: it imports client libraries
// only, none of the syncer's own packages (today: none); test/layering checks it.
package localcluster
