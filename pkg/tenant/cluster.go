package tenant

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/eventcache"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
)

// State is a snapshot of a Cluster's health.
type State struct {
	// Connected is true when the last probe of the tenant apiserver succeeded.
	Connected bool
	// Synced is true once the informer caches have synced and the handlers added with
	// Cluster.AddEventHandler have been handed their initial lists; handlers enqueue events
	// from then on.
	Synced bool
	// LastError is the last probe error, empty when Connected.
	LastError string
	// LastReason classifies LastError as a condition reason: Unauthorized (the apiserver
	// answered 401/403), DuplicateControlPlane, or Unreachable; empty when Connected.
	LastReason string
	// Stopped is true after Stop.
	Stopped bool
	// Suspended is true while the tenant has more objects than limits.maxCachedObjects: its
	// informers do not run (see waitWithinObjectBound). Objects is the last count, ObjectLimit
	// the cap it was over.
	Suspended   bool
	Objects     int64
	ObjectLimit int64
	// CountError is why the last count failed while Suspended ("": it succeeded); a tenant
	// whose objects cannot be counted is not watched either.
	CountError string
}

// Cluster is the syncer's live connection to one tenant control plane.
type Cluster struct {
	// Name and UID of the Tenant object.
	Name string
	UID  string
	// Client talks to the tenant apiserver.
	Client kubernetes.Interface
	// Informers is the tenant's informer factory. Handlers must be registered before the
	// Cluster starts them (Hooks.ClusterStarting). Cached objects have managedFields stripped.
	Informers informers.SharedInformerFactory
	// Recorder writes Events into the tenant cluster (component "vc-syncer").
	Recorder record.EventRecorder
	// APIServerHost and APIServerPort are the tenant apiserver's address from its kubeconfig
	// (the port defaults to 443 for https). Tenant Pods running in the super cluster reach
	// their apiserver there, so the kubeconfig must name an address the super cluster's Pods
	// can reach.
	APIServerHost string
	APIServerPort int32
	// Refusals records the tenant's objects refused by its policy (reported once per object
	// version and policy generation).
	Refusals policy.Refusals
	// Held accounts the bytes of the tenant's objects (HeldKinds) held in the tenant caches
	// and keeps out (as stubs) those over limits.maxObjectBytes or limits.maxCachedBytes: the
	// informers' transform applies it.
	Held HeldBytes
	// transformMu serialises the informers' transform with ReadmitHeldOut's cache writes.
	transformMu sync.Mutex
	// suspend, when its delay is set, makes the Cluster wait before it counts the tenant's
	// objects (it replaces one whose caches overflowed limits.maxCachedObjects).
	suspend suspension
	// recount wakes a suspended Cluster to count the tenant's objects again (a policy change).
	recount chan struct{}

	kubeconfigHash string
	probeInterval  time.Duration
	// apiNotLocal is set when a running check found a watched API served elsewhere.
	apiNotLocal atomic.Bool
	// claim registers the control plane's identity; false with the other tenant's name when taken.
	claim    func(c *Cluster, identity string) (string, bool)
	identity string
	notify   func(name string)

	mu     sync.RWMutex
	state  State
	weight int32
	// pol is the tenant's effective policy; nil until the Tenant controller sets one (then
	// Policy returns policy.Default()).
	pol atomic.Pointer[policy.Effective]
	// serviceCIDRs are the Tenant's spec.serviceCIDRs, parsed (nil: none).
	serviceCIDRs atomic.Pointer[[]netip.Prefix]
	// kubeletCA is the Tenant's spec.kubeletClientCA, parsed (nil: none).
	kubeletCA atomic.Pointer[x509.CertPool]

	cancel context.CancelFunc
	done   chan struct{}
	events *lazyRecorder // Recorder, to shut down

	// restored is Registry.Restored (nil: every kind is counted with a LIST).
	restored func(tenant, kind string) (int64, bool)
	// handlersSynced are the HasSynced of the handlers added with AddEventHandler: Synced
	// waits for them.
	handlersSynced []cache.InformerSynced
}

// AddEventHandler adds h to inf, one of the Cluster's informers, and makes Synced wait until
// h has been handed every object of inf's initial list. A handler that drops events while the
// Cluster is not Synced (as Hooks.ClusterSynced enqueues the initial list in one pass) so never
// sees part of that list as live events: client-go delivers a handler's notifications from its
// own goroutine, so an informer's HasSynced (its store is filled) can be true while its
// handlers still have the initial adds to go (cache.ResourceEventHandlerRegistration.HasSynced
// is the handler's own). Call it from Hooks.ClusterStarting. It returns inf's error when inf
// has stopped (the Cluster is stopping).
func (c *Cluster) AddEventHandler(inf cache.SharedIndexInformer, h cache.ResourceEventHandler) error {
	reg, err := inf.AddEventHandler(h)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.handlersSynced = append(c.handlersSynced, reg.HasSynced)
	c.mu.Unlock()
	return nil
}

// waitForSync waits until the informers have synced and every handler added with
// AddEventHandler has been handed its informer's initial list. It returns false when ctx ends
// first.
func (c *Cluster) waitForSync(ctx context.Context) bool {
	for _, ok := range c.Informers.WaitForCacheSyncWithContext(ctx).Synced {
		if !ok {
			return false
		}
	}
	c.mu.RLock()
	handlers := slices.Clone(c.handlersSynced)
	c.mu.RUnlock()
	return cache.WaitForCacheSync(ctx.Done(), handlers...)
}

// newCluster builds a Cluster for a tenant from its rest.Config. It does not contact the
// tenant apiserver. requestTimeout bounds each request of Client and of the Event recorder
// (gets, writes, TokenRequests, Events; 0: no bound); the informers' lists and watches are not
// bounded by it. notify is called (with the tenant name) after every state change.
func newCluster(name, uid string, cfg *rest.Config, hash string, weight int32, requestTimeout time.Duration, notify func(string), newInformers InformerFactoryFunc) (*Cluster, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "vc-syncer"
	// The syncer multiplexes all tenants; client-side rate limiting per tenant would only add
	// queueing on top of the fair queues. The tenant apiserver's own priority and fairness
	// still protects it.
	cfg.QPS, cfg.Burst = 200, 400
	// Protobuf for built-in kinds, as kube-controller-manager uses: cheaper than JSON on both ends.
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	// No gzip (Accept-Encoding): kube-apiserver compresses a WatchList stream (an informer's
	// first list and every event after it) one gzip member per event when the client accepts
	// gzip (k8s.io/apiserver handlers/watch.go, perFlushGzipWriter), which costs the tenant
	// apiserver a compression and the syncer a decompression per Pod event; and a body the
	// transport decompresses for the syncer is one a hostile tenant can make far larger than
	// the bytes it sends. A disable-compression: false in the kubeconfig does not turn it on.
	cfg.DisableCompression = true
	// Two clientsets over one transport (one connection pool): Client, whose requests are
	// bounded by requestTimeout, and the informers' clientset, which is not. client-go turns a
	// client's http.Client.Timeout (rest.Config.Timeout) into three bounds on every request made
	// with rest.Request.Do/DoRaw: the http.Client.Timeout itself (it covers reading the body
	// too), a context deadline around the request and its retries (rest.Request.request), and
	// the "timeout" query parameter, which the apiserver uses to stop its own handling (and its
	// admission webhooks) of a request no one waits for any more. Request.Watch goes through the
	// same http.Client, so a timeout there would end every informer's watch (and WatchList's
	// initial list stream) after requestTimeout and make the reflectors re-list in a loop.
	// Watches need no such bound: the reflector asks the apiserver to end each watch after a
	// random 5 to 10 minutes (timeoutSeconds), and they run on the tenant's own informer
	// goroutines, never on the syncer's shared workers.
	watchCfg := rest.CopyConfig(cfg)
	watchCfg.Timeout = 0
	watchHTTP, err := rest.HTTPClientFor(watchCfg)
	if err != nil {
		return nil, fmt.Errorf("failed to build client for tenant %s: %w", name, err)
	}
	c := &Cluster{}
	// The informers' requests pass the APIService guard; Client's (gets, writes) do not
	// need it: the periodic check stops the Cluster whose watched API is served elsewhere.
	guarded := &http.Client{Transport: &apiServiceGuard{next: watchHTTP.Transport, notLocal: c.markAPINotLocal}}
	watchCS, err := kubernetes.NewForConfigAndClient(watchCfg, guarded)
	if err != nil {
		return nil, fmt.Errorf("failed to build client for tenant %s: %w", name, err)
	}
	cfg.Timeout = requestTimeout
	cs, err := kubernetes.NewForConfigAndClient(cfg, &http.Client{Transport: bodyLimit{next: watchHTTP.Transport}, Timeout: requestTimeout})
	if err != nil {
		return nil, fmt.Errorf("failed to build client for tenant %s: %w", name, err)
	}
	host, port, err := apiServerAddress(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: kubeconfig server %q: %w", name, cfg.Host, err)
	}
	var f informers.SharedInformerFactory
	if newInformers != nil {
		f = newInformers(name, watchCS, c.transform)
	} else {
		f = informers.NewSharedInformerFactoryWithOptions(watchCS, 0, informers.WithTransform(c.transform))
	}
	rec := &lazyRecorder{start: func() (record.EventBroadcaster, record.EventRecorder) {
		b := record.NewBroadcaster()
		b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
		return b, b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "vc-syncer"})
	}}
	c.Name, c.UID, c.Client, c.Informers, c.APIServerHost, c.APIServerPort = name, uid, cs, f, host, port
	c.Recorder, c.events = rec, rec
	c.kubeconfigHash, c.probeInterval, c.notify, c.weight, c.done = hash, 10*time.Second, notify, weight, make(chan struct{})
	c.recount = make(chan struct{}, 1)
	if notify != nil {
		c.Held.notify = func() { notify(name) }
	}
	return c, nil
}

// ErrDuplicateControlPlane is reported when a second Tenant names a control plane that another
// Tenant already syncs.
var ErrDuplicateControlPlane = errors.New("duplicate control plane")

// TrimTenantObject is the tenant informers' transform: it drops managedFields and kubectl's
// last-applied-configuration annotation from cached objects, and interns their repeating
// strings (conversion.InternObject); Pods, their specs trimmed (conversion.TrimPodSpec) once
// they are bound or deleted (a Pod not yet bound keeps its whole spec, podcache.NewFull, from
// which its super Pod is made), are cached in their compact form (podcache.Pod), and Events
// (the syncer's copies, which a tenant can forge) as a bounded record of what they show
// (eventcache.Copy). The syncer never reads either
// (super copies never carry the annotation), and the annotation repeats the whole object, so
// for kubectl-applied objects it is often the largest part of the cache. The syncer writes
// tenant objects only through status subresources, which ignore metadata, so cached objects
// never overwrite the annotation in the tenant.
func TrimTenantObject(obj any) (any, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return obj, nil
	}
	m.SetManagedFields(nil)
	whole := false // a Pod cached with its whole spec
	if p, ok := obj.(*corev1.Pod); ok {
		// A Pod not yet bound keeps its whole spec: its super Pod is made from the cache,
		// without a read of the tenant Pod. Bound (by the syncer, or preset) or deleted, it is
		// trimmed; its next version (the binding) replaces the whole one.
		if whole = p.Spec.NodeName == "" && p.DeletionTimestamp == nil; !whole {
			conversion.TrimPodSpec(p)
		}
	}
	if ann := m.GetAnnotations(); ann != nil {
		if _, ok := ann[lastApplied]; ok {
			delete(ann, lastApplied)
			m.SetAnnotations(ann)
		}
	}
	conversion.InternObject(obj)
	switch o := obj.(type) {
	case *corev1.Pod:
		if whole {
			return podcache.NewFull(o)
		}
		return podcache.New(o)
	case *corev1.Event:
		return eventcache.NewCopy(o), nil // the syncer's copies of super Events
	}
	return obj, nil
}

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// transform is the Cluster's informers' transform: TrimTenantObject, then the bound on the
// bytes held (Held.Admit under the tenant's current policy). It runs under transformMu (see
// ReadmitHeldOut).
func (c *Cluster) transform(obj any) (any, error) {
	c.transformMu.Lock()
	defer c.transformMu.Unlock()
	return c.transformLocked(obj)
}

// ReadmitHeldOut puts o, a tenant object held out (a stub in the cache of its kind), into that
// cache in full: full is o's object as just read from the tenant apiserver, and write the
// cache write (the informer's indexer Update). It returns false, writing nothing, when the
// cache may hold a newer version than full (an event of o's object passed the informers'
// transform since the stub, other than the stub of o.ResourceVersion itself), when o is no
// longer held out, or when full does not fit the bound now (still a stub).
//
// The informer writes into the same cache, and an older full copy must never replace a newer
// version it delivered. An informer transforms each version (under transformMu) before it
// writes it into its cache, in the order they arrive. So, under transformMu: if Held still
// records o's stub at o.ResourceVersion, no later version has been transformed, so none is in
// the cache or on its way there; any later version is transformed after write returns (it
// waits for transformMu) and so is written into the cache after full, replacing it as it
// should. full itself is at least as new as the stub (it was read after it).
func (c *Cluster) ReadmitHeldOut(o HeldOut, full any, write func(obj any) error) bool {
	c.transformMu.Lock()
	defer c.transformMu.Unlock()
	if !c.Held.stillOut(o) {
		return false
	}
	obj, err := c.transformLocked(full)
	if err != nil || IsHeldOut(obj) {
		return false
	}
	if err := write(obj); err != nil {
		m := obj.(interface{ GetUID() types.UID })
		c.Held.Release(o.HeldKey, m.GetUID()) // not in the cache after all
		return false
	}
	return true
}

// transformLocked is transform; call it with transformMu held.
func (c *Cluster) transformLocked(obj any) (any, error) {
	out, err := TrimTenantObject(obj)
	if err != nil {
		return out, err
	}
	return c.Held.Admit(c.Policy().Limits(), out), nil
}

// Readmit returns tenant object obj, read from the tenant apiserver, as the informers' transform
// would cache it now (trimmed; in full when it fits the bound on the bytes held, then counted,
// else a stub): for an object held out (a stub in the cache) that may fit now.
func (c *Cluster) Readmit(obj any) any {
	out, _ := c.transform(obj)
	return out
}

// State returns a snapshot of the Cluster's health.
func (c *Cluster) State() State {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.state
}

// Synced reports whether the Cluster's caches have synced; handlers drop events before that
// (the initial list is enqueued in one pass by Hooks.ClusterSynced).
func (c *Cluster) Synced() bool { return c.State().Synced }

// Identity returns the UID of the tenant control plane's kube-system namespace, known once the
// Cluster has connected (before Hooks.ClusterStarting); "" before.
func (c *Cluster) Identity() string { return c.identity }

// Weight returns the tenant's fair-queue weight (spec.weight).
func (c *Cluster) Weight() int32 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.weight
}

func (c *Cluster) setWeight(w int32) {
	c.mu.Lock()
	c.weight = w
	c.mu.Unlock()
}

func (c *Cluster) update(f func(s *State)) {
	c.mu.Lock()
	before := c.state
	f(&c.state)
	after := c.state
	changed := before != after
	c.mu.Unlock()
	if !changed {
		return
	}
	log := ctrl.Log.WithName("tenant").WithValues("tenant", c.Name)
	switch {
	case before.Connected && !after.Connected:
		log.Info("Lost connection to tenant apiserver", "reason", after.LastError)
	case !after.Connected && after.LastError != "" && before.LastError == "":
		log.Info("Cannot reach tenant apiserver; retrying with backoff", "reason", after.LastError)
	case after.Connected && !before.Connected:
		log.Info("Connected to tenant apiserver")
	}
	if c.notify != nil {
		c.notify(c.Name)
	}
}

// start runs the Cluster until Stop: probe, start informers, wait for sync, keep probing.
func (c *Cluster) start(parent context.Context, hooks Hooks) {
	ctx, cancel := context.WithCancel(parent)
	c.cancel = cancel
	go func() {
		defer close(c.done)
		c.run(ctx, hooks)
	}()
}

func (c *Cluster) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := c.Client.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	return err
}

func (c *Cluster) run(ctx context.Context, hooks Hooks) {
	log := ctrl.LoggerFrom(ctx).WithValues("tenant", c.Name)
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: 100, Cap: 30 * time.Second}
	for {
		err := c.probe(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			break
		}
		c.update(func(s *State) { s.Connected, s.LastError, s.LastReason = false, err.Error(), reasonOf(err) })
		log.V(2).Info("Waiting for tenant apiserver", "reason", err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff.Step()):
		}
	}
	// Two Tenants naming the same control plane would both write binding and status into
	// the same tenant objects and fight; the second one is refused.
	for {
		err := c.claimIdentity(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		c.update(func(s *State) { s.Connected, s.LastError, s.LastReason = false, err.Error(), reasonOf(err) })
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff.Step()):
		}
	}
	c.update(func(s *State) { s.Connected, s.LastError, s.LastReason = true, "", "" })
	// Before any informer lists: a tenant with more objects than limits.maxCachedObjects
	// waits here, and its objects never reach the syncer's memory.
	if !c.waitWithinObjectBound(ctx) {
		return
	}
	hooks.ClusterStarting(c)
	c.Informers.StartWithContext(ctx)
	if !c.waitForSync(ctx) {
		return // stopped before the caches synced
	}
	c.update(func(s *State) { s.Synced = true })
	log.Info("Tenant caches synced")
	hooks.ClusterSynced(c)

	t := time.NewTicker(c.probeInterval)
	defer t.Stop()
	for probes := 1; ; probes++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := c.probe(ctx)
		if ctx.Err() != nil {
			return
		}
		if probes%apiServiceCheckEvery == 0 {
			c.checkAPIServicesRunning(ctx)
		}
		c.update(func(s *State) {
			s.Connected = err == nil
			s.LastError, s.LastReason = "", ""
			if err != nil {
				s.LastError, s.LastReason = err.Error(), reasonOf(err)
			}
		})
	}
}

// checkAPIServicesRunning checks, while the Cluster runs, that the tenant's watched APIs are
// still served by its kube-apiserver (CheckAPIServices). When one is not, or the syncer may no
// longer read them, it marks the Cluster (APIServicesNotLocal) and notifies: the Tenant
// controller replaces it with one that waits until the check passes. Other errors (the
// apiserver unreachable) are the probe's to report.
func (c *Cluster) checkAPIServicesRunning(ctx context.Context) {
	err := CheckAPIServices(ctx, c.Client)
	if err == nil || !errors.Is(err, ErrAPIServiceNotLocal) && !apierrors.IsForbidden(err) {
		return
	}
	c.markAPINotLocal(err)
}

// markAPINotLocal marks the Cluster (APIServicesNotLocal) for err, a watched API served
// elsewhere or unreadable, and notifies once.
func (c *Cluster) markAPINotLocal(err error) {
	if c.apiNotLocal.Swap(true) {
		return
	}
	ctrl.Log.Info("Stopping tenant sync: a watched API is not served by the tenant's kube-apiserver", "tenant", c.Name, "reason", err.Error())
	if c.notify != nil {
		c.notify(c.Name)
	}
}

// APIServicesNotLocal reports whether a running check found a watched API of the tenant served
// elsewhere (or unreadable): the Cluster must be replaced.
func (c *Cluster) APIServicesNotLocal() bool { return c.apiNotLocal.Load() }

// claimIdentity reads the UID of the tenant's kube-system namespace (its cluster identity)
// and registers it, failing when another running Cluster already has it.
func (c *Cluster) claimIdentity(ctx context.Context) error {
	ns, err := c.Client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("failed to read the tenant's kube-system namespace: %w", err)
	}
	if c.claim == nil {
		c.identity = string(ns.UID)
		return nil
	}
	if other, ok := c.claim(c, string(ns.UID)); !ok {
		return fmt.Errorf("%w: Tenant %q already syncs this control plane (kube-system UID %s); remove one of the two Tenants", ErrDuplicateControlPlane, other, ns.UID)
	}
	return nil
}

// stop cancels the Cluster's context, stops its informers and event broadcaster, and waits
// for its goroutine to end.
func (c *Cluster) stop() {
	if c.cancel != nil {
		c.cancel()
		<-c.done
	}
	c.Informers.Shutdown()
	if c.events != nil {
		c.events.shutdown()
	}
	c.mu.Lock()
	c.state = State{Stopped: true}
	c.mu.Unlock()
}

// apiServerAddress returns the host and port of a kubeconfig server URL ("https://h:p",
// "h:p" or "h"); the port defaults to 443 (https) or 80 (http). Errors: unparseable URL or
// port.
func apiServerAddress(server string) (string, int32, error) {
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	u, err := url.Parse(server)
	if err != nil {
		return "", 0, err
	}
	port := int32(443)
	if u.Scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil || n <= 0 || n > 65535 {
			return "", 0, fmt.Errorf("invalid port %q", p)
		}
		port = int32(n)
	}
	if u.Hostname() == "" {
		return "", 0, errors.New("no host")
	}
	return u.Hostname(), port, nil
}

// reasonOf classifies a probe or identity error as a Connected condition reason.
func reasonOf(err error) string {
	switch {
	case errors.Is(err, ErrDuplicateControlPlane):
		return ReasonDuplicateControlPlane
	case apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err):
		return ReasonUnauthorized
	default:
		return ReasonUnreachable
	}
}

// Policy returns the tenant's effective policy (policy.Default() until the Tenant controller
// resolved the Tenant's TenantPolicy). The result must not be modified.
func (c *Cluster) Policy() *policy.Effective {
	if p := c.pol.Load(); p != nil {
		return p
	}
	return policy.Default()
}

// ServiceCIDRs returns the Service IP ranges the provider gave the tenant's apiserver (Tenant
// spec.serviceCIDRs, masked to their network address); nil when none is set. The result must
// not be modified.
func (c *Cluster) ServiceCIDRs() []netip.Prefix {
	if p := c.serviceCIDRs.Load(); p != nil {
		return *p
	}
	return nil
}

// SetServiceCIDRs records the tenant's Service IP ranges from Tenant spec.serviceCIDRs.
// Entries that do not parse as a CIDR are ignored (the CRD refuses them) and returned as an
// error naming them; the others apply.
func (c *Cluster) SetServiceCIDRs(cidrs []string) error {
	out, err := parseServiceCIDRs(cidrs)
	c.serviceCIDRs.Store(&out)
	return err
}

// parseServiceCIDRs parses Tenant spec.serviceCIDRs into masked prefixes; entries that do not
// parse are left out and named in the error.
func parseServiceCIDRs(cidrs []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	var bad []string
	for _, s := range cidrs {
		p, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			bad = append(bad, s)
			continue
		}
		out = append(out, p.Masked())
	}
	if len(bad) > 0 {
		return out, fmt.Errorf("spec.serviceCIDRs: not a CIDR: %s", strings.Join(bad, ", "))
	}
	return out, nil
}

// SetPolicy makes p the tenant's effective policy and reports whether its generation differs
// from the previous one.
func (c *Cluster) SetPolicy(p *policy.Effective) bool {
	old := c.pol.Swap(p)
	changed := old != nil // the first policy, set before the Cluster starts, is no change
	if old == nil {
		old = policy.Default()
	}
	if changed && old.Generation != p.Generation && c.recount != nil {
		select { // a suspended tenant is counted again at once (the cap may have been raised)
		case c.recount <- struct{}{}:
		default:
		}
	}
	return old.Generation != p.Generation
}
