package syncer

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/vcsyncer/syncer/pkg/admission"
	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/fairqueue"
	"github.com/vcsyncer/syncer/pkg/handover"
	"github.com/vcsyncer/syncer/pkg/latency"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/event"
	"github.com/vcsyncer/syncer/pkg/resources/kinds"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
	"github.com/vcsyncer/syncer/pkg/resume"
	"github.com/vcsyncer/syncer/pkg/retry"
	"github.com/vcsyncer/syncer/pkg/status"
	"github.com/vcsyncer/syncer/pkg/tenant"
	"github.com/vcsyncer/syncer/pkg/vnode"
)

// Options configures a Syncer.
type Options struct {
	// Super is the super cluster's clientset.
	Super kubernetes.Interface
	// DownwardWorkers is the number of downward workers. Defaults to 20.
	DownwardWorkers int
	// UpwardWorkers is the number of upward workers. Defaults to 100.
	UpwardWorkers int
	// DisableFairQueuing uses one FIFO per pipeline instead of per-tenant weighted fair
	// queues (for comparison). Defaults to false.
	DisableFairQueuing bool
	// PodSecurityEnforce is put as pod-security.kubernetes.io/enforce on every super namespace
	// the syncer creates ("" for none).
	PodSecurityEnforce string
	// TenantDNS and ClusterDomain: see resources.Env.
	TenantDNS     bool
	ClusterDomain string
	// VNode configures the virtual-node manager (GC grace, Lease duration, status report
	// frequency); zero values take pkg/vnode's defaults.
	VNode vnode.Options
	// OptInKinds are the opt-in kinds to sync besides kinds.Default (see kinds.OptIn:
	// Ingress, NetworkPolicy, PodDisruptionBudget; Event is accepted and synced by default).
	// Defaults to none; New fails on an unknown kind.
	OptInKinds []resources.Kind
	// DisabledKinds are kinds of kinds.Optional (Event) not to sync. Defaults to none; New
	// fails on another kind, or on one also in OptInKinds.
	DisabledKinds []resources.Kind
	// Events configures the Event pipeline (event.Pipeline; used unless Event is in
	// DisabledKinds).
	Events event.PipelineOptions
	// Checkpoint configures checkpointed restarts; a zero value turns them off.
	Checkpoint CheckpointOptions
	// Admission configures the admission window for new super Pods; a zero value turns it
	// off. It is off too when fair queuing is off.
	Admission AdmissionOptions
	// Share configures each tenant's share of super writes and the workers kept in reserve;
	// a zero value turns both off. They are off too when fair queuing is off.
	Share ShareOptions
	// Sharding, if set, fences the workers: a request of a registered tenant this replica may
	// not write for now waits in the queue (pkg/sharding). Nil: no sharding.
	Sharding ShardFence
}

// Syncer runs the downward and upward pipelines for every registered tenant.
type Syncer struct {
	env       *resources.Env
	registry  *tenant.Registry
	resources map[resources.Kind]resources.Resource
	down, up  *pipelineQueue
	opts      Options
	vnodes    *vnode.Manager
	// dependents are, per kind, the kinds whose tenant objects depend on it (DependentMapper).
	dependents map[resources.Kind][]resources.DependentMapper
	// sources are the resumable informers' states; ckpt writes checkpoints (nil when off).
	sources *source.Registry
	ckpt    *checkpoint.Checkpointer
	// resume is what the syncer resumes from and writes to checkpoints (pkg/resume; wired in
	// checkpoint.go); shard the hand-over of tenants between shards (pkg/handover).
	resume *resume.State
	shard  *handover.Shard
	track  latency.Tracker // end-to-end lag and Pod-creation phases (pkg/latency; wired in metrics.go)
	status status.Recorder // per-tenant last sync and last checkpoint for the status page (status.go)
	ready  readiness       // set by markReady once the super caches synced (ready.go)

	// gate admits tenant objects under their tenant's limits (pkg/admit; wired in limits.go).
	gate *admit.Gate
	// writes is each tenant's share of super writes (share.go); nil when off.
	writes *fairqueue.Budget
	// admission paces new super Pods (admission.go); nil when off.
	admission *admission.Window[resources.Request]
	// echoes are the super Pods being created, whose Adds are not queued downward (echoes.go).
	echoes *podEchoes
	// podTokens requests new tenant Pods' service-account tokens before a worker takes them
	// (pod.TokenPrefetcher); nil when Pods are not synced.
	podTokens *pod.TokenPrefetcher
	// tenantBudgets counts the tenants' budgets (admit.NewBudget).
	tenantBudgets *admission.Budget[resources.Request]
	// events copies super Events into tenants (event.Pipeline, wired in events.go); nil when
	// Event is not synced.
	events *event.Pipeline
	// retryLog rate-limits the "Retrying sync" log lines (retries.go).
	retryLog *retry.Log
	// processed counts the reconciles run so far, in both directions (Processed).
	processed atomic.Int64
	// scope restricts the super informers to the registered tenants' objects (sharding;
	// pkg/resume); nil without sharding.
	scope *source.Scope
}

var (
	_ tenant.Hooks     = (*Syncer)(nil)
	_ manager.Runnable = (*Syncer)(nil)
)

// New returns a Syncer. Call SetRegistry before Start.
func New(o Options) (*Syncer, error) {
	if o.Super == nil {
		return nil, errors.New("syncer: Options.Super is required")
	}
	if o.DownwardWorkers <= 0 {
		o.DownwardWorkers = 20
	}
	if o.UpwardWorkers <= 0 {
		o.UpwardWorkers = 100
	}
	managed, _ := labels.NewRequirement(conversion.LabelManagedBy, selection.Equals, []string{conversion.ManagedByValue})
	sel := labels.NewSelector().Add(*managed).String()
	sources := source.NewRegistry()
	sources.OnMode = metrics.SourceMode
	sources.OnListAvoided = func(string) { metrics.ListAvoided() }
	scope := resume.NewScope(o.Sharding != nil)
	echoes := newPodEchoes()
	env := &resources.Env{
		Super: o.Super,
		SuperInformers: source.NewFactory(sources, superSourcePrefix, o.Super, source.FactoryOptions{
			Tweak: func(lo *metav1.ListOptions) { lo.LabelSelector = sel }, Transform: echoes.arrivals(superTransform), Scope: scope}),
		SuperNodes:    source.NewFactory(sources, superNodesPrefix, o.Super, source.FactoryOptions{Transform: stripManagedFields}),
		TenantDNS:     o.TenantDNS,
		ClusterDomain: o.ClusterDomain,
		Disruptions:   &resources.Disruptions{},
	}
	env.SuperVolumes, env.SuperPublic = newStorageFactories(sources, o.Super)
	if o.PodSecurityEnforce != "" {
		env.NamespaceLabels = map[string]string{"pod-security.kubernetes.io/enforce": o.PodSecurityEnforce}
	}
	optIn, err := newKindsEnv(env, o)
	if err != nil {
		return nil, err
	}
	s := &Syncer{
		env: env, opts: o,
		resources:  map[resources.Kind]resources.Resource{},
		dependents: map[resources.Kind][]resources.DependentMapper{},
		retryLog:   retry.NewLog(time.Now),
	}
	s.sources, s.scope = sources, scope
	downShare := queueShare{workers: o.DownwardWorkers, reserve: fairqueue.ReserveOf(o.DownwardWorkers, o.Share.WorkerReservePercent),
		slowAfter: o.Share.SlowTenantThreshold}
	if !o.DisableFairQueuing {
		if s.writes = newWriteBudget(o.Share, s.weight); s.writes != nil {
			downShare.limiter = s.writes
		}
	}
	s.down = newPipelineQueue("downward", !o.DisableFairQueuing, downShare, s.weight, s.observer(directionDownward))
	s.up = newPipelineQueue("upward", !o.DisableFairQueuing, queueShare{workers: o.UpwardWorkers,
		reserve: fairqueue.ReserveOf(o.UpwardWorkers, o.Share.WorkerReservePercent), slowAfter: o.Share.SlowTenantThreshold}, s.weight, s.observer(directionUpward))
	env.SuperObject = s.superObject
	env.ReservedServiceIP = s.reservedServiceIP
	s.gate = admit.NewGate(pipelines{s}, pod.MarkPolicyDenied)
	env.AdmitObject = func(c *tenant.Cluster, kind resources.Kind, obj metav1.Object) bool {
		return s.gate.Admit(c, kind, obj, false)
	}
	for _, r := range append(kinds.Default(), optIn...) {
		s.resources[r.Kind()] = r
		if d, ok := r.(resources.DependentMapper); ok {
			for _, k := range d.DependsOn() {
				s.dependents[k] = append(s.dependents[k], d)
			}
		}
		inf := r.SuperInformer(env)
		h := s.superHandler(r.Kind())
		if er, ok := r.(event.Copier); ok {
			s.events = s.newEventPipeline(er, o.Events)
			metrics.RegisterEventStats(s.events.Pending)
			h = s.events.Handler()
		} else if m, ok := r.(resources.SuperMapper); ok {
			h = s.mappedSuperHandler(m)
		}
		if _, err := inf.AddEventHandler(h); err != nil {
			return nil, err
		}
	}
	env.SuperNodes.Core().V1().Nodes().Informer()
	if err := s.watchStorage(); err != nil {
		return nil, err
	}
	if err := s.gate.WatchBounds(s.env); err != nil {
		return nil, err
	}
	if s.admission, err = s.newAdmission(o.Admission, !o.DisableFairQueuing); err != nil {
		return nil, err
	}
	if s.admission != nil {
		env.PodAdmission = resources.PodAdmissionOf(s.admission)
	}
	s.echoes = echoes
	env.PodEchoes = s.echoes
	if _, ok := s.resources[resources.KindPod]; ok {
		s.podTokens = pod.NewTokenPrefetcher(env)
		env.PodTokens = s.podTokens
	}
	if s.tenantBudgets, err = admit.NewBudget(env, s.resources, func(req resources.Request) { s.enqueue(s.down, req, true) }); err != nil {
		return nil, err
	}
	env.Budget = resources.BudgetOf(s.tenantBudgets, func(tenant string, kind resources.Kind, namespace, name string) resources.Request {
		return resources.Request{Tenant: tenant, Kind: kind, Namespace: namespace, Name: name}
	})
	vm, err := vnode.New(env, o.VNode)
	if err != nil {
		return nil, err
	}
	env.VNodes, s.vnodes = vm, vm
	if err = s.newResume(); err != nil {
		return nil, err
	}
	if s.ckpt != nil {
		// The status page's "last checkpoint": every source of a registered tenant is in each
		// checkpoint, so the time is the same for all of them.
		s.SetLastCheckpoint(func(name string) time.Time {
			if _, ok := s.sources.Lookup(resume.TenantSourceID(name, resources.KindPod)); !ok {
				return time.Time{} // not connected yet: not in any checkpoint of this process
			}
			return s.ckpt.LastSuccess()
		})
	}
	metrics.RegisterVNodeStats(vm.Bindings().Counts)
	metrics.RegisterQueueStats(s.queueStats)
	s.registerMetrics()
	return s, nil
}

// SetRegistry gives the Syncer the tenant registry it looks Clusters up in, and makes the
// registry build tenant informers that can resume from checkpoints.
func (s *Syncer) SetRegistry(r *tenant.Registry) {
	s.registry = r
	s.resume.SetRegistry(r)
	s.shard.SetRegistry(r)
	r.NewInformers = s.tenantInformers
	r.Restored = func(tenantName, kind string) (int64, bool) {
		if s.skipsKind(resources.Kind(kind)) {
			return 0, true // not cached at all: nothing to count
		}
		s.resume.AwaitRestore()
		n, ok := s.sources.Pending(resume.TenantSourceID(tenantName, resources.Kind(kind)))
		return int64(n), ok
	}
}

// skipsKind reports whether kind is one the syncer could sync (an opt-in kind, or one that
// --disabled-kinds may turn off) and does not: it caches nothing of it in tenants.
func (s *Syncer) skipsKind(kind resources.Kind) bool {
	if !kinds.Switchable(kind) {
		return false
	}
	_, synced := s.resources[kind]
	return !synced
}

// Start runs the Syncer until ctx is done: it starts the super informers, waits for them to
// sync, then runs the worker pools. It implements manager.Runnable.
func (s *Syncer) Start(ctx context.Context) error {
	if s.registry == nil {
		return errors.New("syncer: SetRegistry was not called")
	}
	log := ctrl.LoggerFrom(ctx).WithName("syncer")
	if err := s.resume.Warm(ctx); err != nil {
		return err
	}
	s.resume.ResumeLeader(ctx)
	if err := s.startStorage(ctx); err != nil {
		return err
	}
	if err := s.startKindsInformers(ctx); err != nil {
		return err
	}
	s.markReady()
	log.Info("Super caches synced; starting workers", "downwardWorkers", s.opts.DownwardWorkers, "upwardWorkers", s.opts.UpwardWorkers)

	var wg sync.WaitGroup
	for range s.opts.DownwardWorkers {
		wg.Go(func() { s.work(ctx, s.down, true) })
	}
	for range s.opts.UpwardWorkers {
		wg.Go(func() { s.work(ctx, s.up, false) })
	}
	if s.events != nil {
		s.events.Run(ctx, &wg)
	}
	wg.Go(func() { s.refreshTokens(ctx) })
	if s.admission != nil {
		wg.Go(func() { s.adjustAdmission(ctx) })
	}
	wg.Go(func() { _ = s.vnodes.Start(ctx) })
	if s.ckpt != nil {
		wg.Go(func() { s.ckpt.Run(ctx) })
	}
	<-ctx.Done()
	s.down.ShutDown()
	s.up.ShutDown()
	wg.Wait()
	if s.ckpt != nil {
		// The final checkpoint: after the workers stopped, before the manager releases the
		// leader lease (it waits for this Runnable to return).
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		if err := s.ckpt.Save(sctx); err != nil {
			log.Error(err, "Final checkpoint not written")
		} else {
			log.Info("Final checkpoint written")
		}
		cancel()
	}
	s.env.SuperInformers.Shutdown()
	s.env.SuperNodes.Shutdown()
	s.env.SuperVolumes.Shutdown()
	s.shutdownKindsInformers()
	return nil
}

// superTransform trims super Pods to what the syncer reads (pod.TrimSuperPod) and strips
// managedFields from every other cached super object.
func superTransform(obj any) (any, error) {
	if _, ok := obj.(*corev1.Pod); ok {
		return pod.TrimSuperPod(obj)
	}
	return stripManagedFields(obj)
}

// stripManagedFields drops managedFields from a cached super object and interns its repeating
// strings (conversion.InternObject).
func stripManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	conversion.InternObject(obj)
	return obj, nil
}

// reservedServiceIP implements resources.Env.ReservedServiceIP over every Tenant's
// spec.serviceCIDRs, including Tenants another shard syncs (tenant.Registry.ReservedBy).
func (s *Syncer) reservedServiceIP(c *tenant.Cluster, ip netip.Addr) bool {
	if s.registry == nil {
		return false
	}
	return s.registry.ReservedBy(c.Name, ip) != ""
}
