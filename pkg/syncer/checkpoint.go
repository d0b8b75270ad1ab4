package syncer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/checkpoint/trackingqueue"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
	"github.com/vcsyncer/syncer/pkg/vnode"
)

// CheckpointOptions configures checkpointing (pkg/checkpoint).
type CheckpointOptions struct {
	// Store persists checkpoints; nil turns checkpointing off (every start is cold).
	Store checkpoint.Store
	// Interval between periodic checkpoints (default 30 s); MaxItems is the per-tenant queue
	// budget (default 15000): a tenant with more unfinished requests is left out of the
	// checkpoint and re-listed on resume. See checkpoint.Options.
	Interval time.Duration
	MaxItems int
	// Holder identifies this process in the checkpoint (default: host name and PID).
	Holder string
	// ReloadOnLead: other replicas may write checkpoints (leader election is on), so on
	// becoming leader the newest checkpoint's tenant state is loaded again (resumeLeader).
	ReloadOnLead bool
	// Config is extra configuration that changes what the syncer does with the saved state
	// (e.g. flags); it is hashed into the checkpoint's Config (configDigest).
	Config string
	// StoreOf returns the store of a shard's checkpoints (sharding: Adopt reads the state of a
	// tenant whose shard died from there).
	StoreOf func(shard string) (checkpoint.Store, error)
	// TenantStoreOf returns the store of a tenant's hand-over checkpoint (sharding: Drain
	// writes it, Adopt reads it). With both nil, tenants that move start cold.
	TenantStoreOf func(tenant string) (checkpoint.Store, error)
}

// Source ID prefixes of the super cluster's factories (pkg/checkpoint/source).
const (
	superSourcePrefix   = "super"
	superNodesPrefix    = "super-nodes"
	superVolumesPrefix  = "super-volumes"
	superPublicPrefix   = "super-public"
	tenantSourcePrefix  = "tenant/"
	unknownTenantsGrace = 2 * time.Minute
)

// tenantSourceID is the Source ID of tenant c's informer of kind.
func tenantSourceID(tenantName string, kind resources.Kind) string {
	return tenantSourcePrefix + tenantName + "/" + string(kind)
}

// tenantInformers implements tenant.InformerFactoryFunc with resumable factories.
func (s *Syncer) tenantInformers(name string, cs kubernetes.Interface, transform cache.TransformFunc) informers.SharedInformerFactory {
	return source.NewFactory(s.sources, tenantSourcePrefix+name, cs, source.FactoryOptions{Transform: transform})
}

// tenantSource returns the Source of tenant c's informer of kind, or nil for kinds whose
// informer is not resumable.
func (s *Syncer) tenantSource(c *tenant.Cluster, kind resources.Kind) *source.Source {
	src, _ := s.sources.Lookup(tenantSourceID(c.Name, kind))
	return src
}

// superSource returns the Source of the super informer of kind, or nil.
func (s *Syncer) superSource(kind resources.Kind) *source.Source {
	src, _ := s.sources.Lookup(superSourcePrefix + "/" + string(kind))
	return src
}

// ownerVersion is the ack entry of an owned super object.
func ownerVersion(m metav1.Object, o conversion.Owner) source.ObjectVersion {
	v := source.VersionOf(m)
	v.Owner = &source.Owner{Tenant: o.Tenant, TenantUID: o.TenantUID, Namespace: o.Namespace, Name: o.Name}
	return v
}

// work parked for tenants that are registered but not synced (their requests cannot run yet,
// and a resumed tenant is not re-listed in full when it syncs): direction → request → delay
// window (zero for "now").
type parkedWork struct {
	down, up map[resources.Request]trackingqueue.DelayWindow
}

// park keeps req (of a registered tenant that is not synced) until the tenant syncs. c is the
// tenant's Cluster when known: if it has synced meanwhile (ClusterSynced sets Synced before it
// drains, under the same lock), req goes to its queue at once instead of being parked after the
// drain and forgotten.
func (s *Syncer) park(req resources.Request, down bool, w trackingqueue.DelayWindow, c *tenant.Cluster) {
	s.parkMu.Lock()
	defer s.parkMu.Unlock()
	if c != nil && c.Synced() {
		q := s.up
		if down {
			q = s.down
		}
		s.enqueue(q, req, false)
		return
	}
	p := s.parked[req.Tenant]
	if p == nil {
		p = &parkedWork{down: map[resources.Request]trackingqueue.DelayWindow{}, up: map[resources.Request]trackingqueue.DelayWindow{}}
		s.parked[req.Tenant] = p
	}
	m := p.up
	if down {
		m = p.down
	}
	if _, ok := m[req]; !ok {
		m[req] = w
	}
}

// drainParked seeds the queues with the work parked for tenant (call when it has synced).
func (s *Syncer) drainParked(tenantName string) {
	s.parkMu.Lock()
	defer s.parkMu.Unlock()
	p := s.parked[tenantName]
	if p == nil {
		return
	}
	delete(s.parked, tenantName)
	seed := func(q *pipelineQueue, m map[resources.Request]trackingqueue.DelayWindow, dir string) {
		snap := trackingqueue.Snapshot[resources.Request]{Delayed: map[resources.Request]trackingqueue.DelayWindow{}}
		for req, w := range m {
			metrics.QueueAdd(req.Tenant, dir)
			if q.fair != nil {
				q.fair.MarkLow(req)
			}
			if w.Latest.IsZero() {
				snap.Queued = append(snap.Queued, req)
			} else {
				snap.Delayed[req] = w
			}
		}
		q.Seed(snap)
	}
	seed(s.down, p.down, directionDownward)
	seed(s.up, p.up, directionUpward)
}

// dropParked forgets the work parked for a removed tenant.
func (s *Syncer) dropParked(tenantName string) {
	s.parkMu.Lock()
	delete(s.parked, tenantName)
	s.parkMu.Unlock()
}

// queueItem is one unfinished request in a checkpoint.
type queueItem struct {
	Req      resources.Request
	Down     bool
	Earliest time.Time // zero: run now
	Latest   time.Time
}

// QueueSize implements checkpoint.Queues. It also drops the work parked for tenants whose state
// is no longer kept (removed while the syncer was down: they never start, so ClusterStopped
// never drops it), so that it neither leaks nor counts against the checkpoint budget.
func (s *Syncer) QueueSize() int {
	s.parkMu.Lock()
	n := 0
	for name, p := range s.parked {
		if s.keepTenantState != nil && !s.keepTenantState(name) {
			delete(s.parked, name)
			continue
		}
		n += len(p.down) + len(p.up)
	}
	s.parkMu.Unlock()
	if s.admission != nil {
		n += len(s.admission.Items())
	}
	return n + s.down.Size() + s.up.Size()
}

// SnapshotQueues implements checkpoint.Queues: every unfinished request of both pipelines
// (queued, processing, delayed, dropped at shutdown) and every parked one, taken under the
// parking lock so no request moves between a queue and the parked set while it runs.
// The policy marks are taken first (policyState saves them): a mark set after the queues were
// taken may stand for enqueues they do not hold.
func (s *Syncer) SnapshotQueues() ([]byte, int, error) {
	s.policyMarks.capture(s.keepTenantForCheckpoint)
	items := s.queueItems(s.keepTenantForCheckpoint)
	data, err := encodeQueueItems(items)
	return data, len(items), err
}

// keepTenantForCheckpoint reports whether a checkpoint saves tenant's queued requests and
// policy mark: a tenant of this shard, not left out for its budget.
func (s *Syncer) keepTenantForCheckpoint(tenant string) bool {
	return (s.keepTenantState == nil || s.keepTenantState(tenant)) && !s.isLeftOut(tenant)
}

// encodeQueueItems encodes items for a checkpoint (decodeQueueItems reads them).
func encodeQueueItems(items []queueItem) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(items); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// queueItems returns the unfinished requests of the tenants keep accepts, as SnapshotQueues
// describes.
func (s *Syncer) queueItems(keep func(tenant string) bool) []queueItem {
	s.parkMu.Lock()
	var items []queueItem
	add := func(snap trackingqueue.Snapshot[resources.Request], down bool) {
		seen := map[resources.Request]bool{}
		for _, l := range [][]resources.Request{snap.Queued, snap.Processing, snap.Orphans} {
			for _, r := range l {
				if !seen[r] {
					seen[r] = true
					items = append(items, queueItem{Req: r, Down: down})
				}
			}
		}
		for r, w := range snap.Delayed {
			if !seen[r] {
				seen[r] = true
				items = append(items, queueItem{Req: r, Down: down, Earliest: w.Earliest, Latest: w.Latest})
			}
		}
	}
	add(s.down.Snapshot(), true)
	add(s.up.Snapshot(), false)
	if s.admission != nil {
		// Pods waiting in the admission window are in no queue meanwhile.
		add(trackingqueue.Snapshot[resources.Request]{Queued: s.admission.Items()}, true)
	}
	for _, p := range s.parked {
		for r, w := range p.down {
			items = append(items, queueItem{Req: r, Down: true, Earliest: w.Earliest, Latest: w.Latest})
		}
		for r, w := range p.up {
			items = append(items, queueItem{Req: r, Down: false, Earliest: w.Earliest, Latest: w.Latest})
		}
	}
	s.parkMu.Unlock()
	kept := items[:0]
	for _, it := range items {
		if keep(it.Req.Tenant) {
			kept = append(kept, it)
		}
	}
	return kept
}

// restoreQueues parks the checkpointed requests under their tenants; each tenant's are seeded
// into the queues when it syncs.
func (s *Syncer) restoreQueues(data []byte) error {
	items, err := decodeQueueItems(data)
	if err != nil {
		return err
	}
	for _, it := range items {
		s.park(it.Req, it.Down, trackingqueue.DelayWindow{Earliest: it.Earliest, Latest: it.Latest}, nil)
	}
	return nil
}

// decodeQueueItems decodes the queue items SnapshotQueues encoded (none for empty data).
func decodeQueueItems(data []byte) ([]queueItem, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var items []queueItem
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&items); err != nil {
		return nil, fmt.Errorf("decoding checkpointed queues: %w", err)
	}
	return items, nil
}

// vnodeState is the vNode bookkeeping as a checkpoint.Checkpointable: the Pods bound to each
// vNode and when each was last active, so a restarted syncer keeps the vNode GC grace instead
// of restarting it.
type vnodeState struct{ b *vnode.Bindings }

func (v vnodeState) Name() string { return "vnode-bindings" }

func (v vnodeState) Checkpoint(context.Context) ([]byte, error) { return json.Marshal(v.b.Snapshot()) }

func (v vnodeState) Restore(_ context.Context, data []byte) error {
	var snap vnode.Snapshot
	if err := json.Unmarshal(data, &snap); err != nil {
		return err
	}
	v.b.Restore(snap)
	return nil
}

// newCheckpointer builds the Checkpointer of o (nil when checkpointing is off).
func (s *Syncer) newCheckpointer(o CheckpointOptions) (*checkpoint.Checkpointer, error) {
	if o.Store == nil {
		return nil, nil
	}
	holder := o.Holder
	if holder == "" {
		h, _ := os.Hostname()
		holder = fmt.Sprintf("%s/%d", h, os.Getpid())
	}
	return checkpoint.New(checkpoint.Options{
		Store: o.Store, Interval: o.Interval, MaxItems: o.MaxItems,
		Schema: CheckpointSchema, Migrations: checkpointMigrations, Config: configDigest(s.opts), Holder: holder,
		Sources: s.sources,
		KeepSource: func(id string) bool {
			name, ok := strings.CutPrefix(id, tenantSourcePrefix)
			if !ok {
				return true
			}
			if i := strings.IndexByte(name, '/'); i >= 0 {
				name = name[:i]
			}
			return s.keepTenantState(name) && !s.isLeftOut(name)
		},
		Budget: s.budget,
		Queues: s,
		Extras: []checkpoint.Checkpointable{vnodeState{s.vnodes.Bindings()}, policyState{s}},
	})
}

// keepTenantStateFunc returns whether a tenant's checkpointed state is still worth saving: a
// registered tenant always; an unregistered one only during the first unknownTenantsGrace
// after start (the Tenant controller may not have registered it yet). Afterwards a tenant that
// is not registered has been removed, and its state is dropped.
func (s *Syncer) keepTenantStateFunc(started time.Time) func(string) bool {
	return func(name string) bool {
		if s.registry == nil {
			return true
		}
		if _, ok := s.registry.Get(name); ok {
			return true
		}
		return time.Since(started) < unknownTenantsGrace
	}
}

// CheckpointSchema is the version of what the syncer's checkpoints hold; a checkpoint of
// another schema is read only through checkpointMigrations, and discarded (a clean cold start)
// otherwise. It is not the build: any version that writes and reads the same schema resumes
// from the other's checkpoints, so upgrades and rollbacks between them resume.
//
// Bump it (and run `make checkpoint-fixtures`, which keeps the fixtures of earlier schemas) when
// a change gives saved state another meaning:
//   - the cached form of an object of a resumable kind: the informers' transforms and trims
//     (tenant.TrimTenantObject and the held-out stubs of Held.Admit, superTransform,
//     stripManagedFields, trimVolumes), whose output is what a checkpoint saves and a resume
//     serves as the first List;
//   - the Source IDs, the ack map's keys and entries (source.Key, source.ObjectVersion, its
//     Owner), the Checkpoint and source.State structs;
//   - the queue items (queueItem, resources.Request) and what parked and admission-window
//     requests mean;
//   - the extra state: vNode bindings (vnode.Snapshot), remediation findings.
//
// TestCheckpointSchemaGuard fails when any of these changes while CheckpointSchema does not.
// When the old meaning can be converted, add a step to checkpointMigrations instead of letting
// old checkpoints go cold.
const CheckpointSchema = 1

// checkpointMigrations turns a checkpoint of schema n into one of schema n+1 (see
// checkpoint.Options.Migrations). Schema 0 is every checkpoint written before schemas existed:
// those versions identified their build, so what they saved cannot be known, and they stay
// unreadable.
var checkpointMigrations = map[int]func(*checkpoint.Checkpoint) error{}

// configDigest identifies the configuration that shapes saved state (the kinds synced and
// their options, CheckpointOptions.Config). A checkpoint written with another is discarded. The
// build is not part of it: CheckpointSchema decides whether the code can read a checkpoint.
func configDigest(o Options) string {
	h := sha256.New()
	kinds := make([]string, 0, len(o.OptInKinds)+len(o.DisabledKinds))
	for _, k := range o.OptInKinds {
		kinds = append(kinds, string(k))
	}
	for _, k := range o.DisabledKinds {
		kinds = append(kinds, "-"+string(k)) // a kind turned off changes what is cached
	}
	sort.Strings(kinds)
	fmt.Fprintf(h, "%v|%s|%s|%v|%s|%s", o.DisableFairQueuing, o.PodSecurityEnforce, o.ClusterDomain, o.TenantDNS,
		strings.Join(kinds, ","), o.Checkpoint.Config)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// checkpointState is the Syncer's checkpointing state.
type checkpointState struct {
	sources         *source.Registry
	ckpt            *checkpoint.Checkpointer
	parkMu          sync.Mutex
	parked          map[string]*parkedWork
	keepTenantState func(tenant string) bool
	warmth          warmState
	// policyMarks are the tenants' policy generations saved in checkpoints (policymark.go).
	policyMarks policyMarks

	budgetMu sync.Mutex
	// leftOut are the tenants the checkpoint being taken leaves out (over budget).
	leftOut map[string]bool
	// coldTenants are the tenants the checkpoint resumed from left out: on ClusterSynced every
	// object of theirs is enqueued, whatever the ack maps say.
	coldTenants map[string]bool
}

// budget implements checkpoint.Options.Budget: it counts each tenant's unfinished requests
// (queued, processing, delayed and parked, both pipelines; O(items)) and leaves out of the
// checkpoint being taken the tenants with more than maxItems.
func (s *Syncer) budget(maxItems int) []string {
	out, names := s.overBudget(maxItems)
	s.budgetMu.Lock()
	s.leftOut = out
	s.budgetMu.Unlock()
	return names
}

// overBudget returns the tenants with more than maxItems unfinished requests (see budget), as
// a set and sorted, without changing what the checkpoint being taken leaves out.
func (s *Syncer) overBudget(maxItems int) (map[string]bool, []string) {
	counts := map[string]int{}
	for _, snap := range []trackingqueue.Snapshot[resources.Request]{s.down.Snapshot(), s.up.Snapshot()} {
		seen := map[resources.Request]bool{}
		for _, l := range [][]resources.Request{snap.Queued, snap.Processing, snap.Orphans} {
			for _, r := range l {
				if !seen[r] {
					seen[r] = true
					counts[r.Tenant]++
				}
			}
		}
		for r := range snap.Delayed {
			if !seen[r] {
				seen[r] = true
				counts[r.Tenant]++
			}
		}
	}
	s.parkMu.Lock()
	for name, p := range s.parked {
		counts[name] += len(p.down) + len(p.up)
	}
	s.parkMu.Unlock()
	if s.admission != nil {
		for _, r := range s.admission.Items() {
			counts[r.Tenant]++ // waiting in the admission window
		}
	}
	out := map[string]bool{}
	var names []string
	for name, n := range counts {
		if n > maxItems {
			out[name] = true
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return out, names
}

// isLeftOut reports whether the checkpoint being taken leaves tenant out.
func (s *Syncer) isLeftOut(tenant string) bool {
	s.budgetMu.Lock()
	defer s.budgetMu.Unlock()
	return s.leftOut[tenant]
}

// setColdTenants records the tenants the checkpoint resumed from left out.
func (s *Syncer) setColdTenants(names []string) {
	s.budgetMu.Lock()
	defer s.budgetMu.Unlock()
	s.coldTenants = map[string]bool{}
	for _, n := range names {
		s.coldTenants[n] = true
	}
}

// takeCold reports whether tenant was left out of the checkpoint resumed from, and forgets it
// (its next ClusterSynced, after a reconnect, uses its ack maps again).
func (s *Syncer) takeCold(tenant string) bool {
	s.budgetMu.Lock()
	defer s.budgetMu.Unlock()
	cold := s.coldTenants[tenant]
	delete(s.coldTenants, tenant)
	return cold
}

// LastCheckpoint returns when the last checkpoint saved or resumed from was taken (zero if
// none, or checkpointing is off).
func (s *Syncer) LastCheckpoint() time.Time {
	if s.ckpt == nil {
		return time.Time{}
	}
	return s.ckpt.LastSuccess()
}

// Sources returns the Syncer's resumable informer states (for tests and metrics).
func (s *Syncer) Sources() *source.Registry { return s.sources }

// checkSuperIdentity discards checkpointed super-cluster state read from another super cluster
// (compared by the UID of its kube-system namespace). When that namespace cannot be read, the
// restored super state is discarded too (a cold start of the super caches is always safe). It
// does nothing when checkpointing is off.
func (s *Syncer) checkSuperIdentity(ctx context.Context) {
	if s.ckpt == nil {
		return
	}
	log := ctrl.LoggerFrom(ctx).WithName("checkpoint")
	identity := "unknown"
	if ns, err := s.opts.Super.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{}); err != nil {
		log.Error(err, "Cannot read the super cluster's kube-system namespace; its checkpointed state is not used")
	} else {
		identity = string(ns.UID)
	}
	if n := s.sources.CheckIdentity(superSourcePrefix, identity); n > 0 {
		log.Info("Checkpointed state of another super cluster discarded; its caches start cold", "sources", n)
	}
}

// AddCheckpointExtra adds extra state to every checkpoint (after the vNode bookkeeping), such as
// the remediation scanner's findings. Call it before Start; it does nothing when checkpointing
// is off.
func (s *Syncer) AddCheckpointExtra(x checkpoint.Checkpointable) {
	if s.ckpt != nil {
		s.ckpt.AddExtra(x)
	}
}

// warmState is the state of the warm-up every replica runs (Warmup).
type warmState struct {
	once    sync.Once
	err     error
	resumed time.Time // TakenAt of the checkpoint the warm-up resumed from; zero if none

	// begun is set when the warm-up starts; restored (made by New) is closed once it has
	// restored the checkpoint's state (or found none), before the super informers sync. The
	// warm-up runs once, so it is closed once.
	begun    atomic.Bool
	restored chan struct{}
}

// restoreWait bounds how long a tenant's Cluster waits for the warm-up to restore the
// checkpoint before it counts its objects and starts its informers (awaitRestore).
const restoreWait = 2 * time.Minute

// awaitRestore waits, when the syncer checkpoints and its warm-up has begun, until the
// checkpoint's state is restored (at most restoreWait): a tenant whose Cluster connects while
// a large checkpoint is still being read must not count its objects with LISTs and start its
// informers cold. The tenant controller and the warm-up start together, so a Cluster can reach
// this first (a 31 MB checkpoint of 30 tenants took half a second to read, and 3 of them
// started cold).
func (s *Syncer) awaitRestore() {
	if s.ckpt == nil || !s.warmth.begun.Load() {
		return
	}
	select {
	case <-s.warmth.restored:
	case <-time.After(restoreWait):
		ctrl.Log.WithName("checkpoint").Info("The checkpoint was not restored in time; a tenant starts without it", "waited", restoreWait)
	}
}

// Warmup returns a Runnable that every replica runs, leader or standby (controller-runtime runs
// Runnables whose NeedLeaderElection is false before and without the election): it resumes the
// super-cluster caches from the latest checkpoint and starts and syncs them, so that a standby
// that wins the election starts its workers at once instead of listing the super cluster then.
// It writes nothing (only the leader's Start writes checkpoints).
func (s *Syncer) Warmup() manager.Runnable { return warmup{s} }

type warmup struct{ s *Syncer }

func (w warmup) NeedLeaderElection() bool { return false }

func (w warmup) Start(ctx context.Context) error {
	if err := w.s.warm(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// warm resumes from the latest checkpoint (queues parked per tenant, extra state, source
// positions), checks the super cluster's identity, then starts the super informers and waits
// for them to sync. It runs once; concurrent and later callers wait for it and get its error.
// The informers live as long as the first caller's ctx.
func (s *Syncer) warm(ctx context.Context) error {
	s.warmth.begun.Store(true)
	s.warmth.once.Do(func() { s.warmth.err = s.doWarm(ctx) })
	return s.warmth.err
}

func (s *Syncer) doWarm(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("syncer")
	if s.ckpt != nil {
		if cp := s.ckpt.Load(ctx); cp != nil {
			if err := s.restoreQueues(cp.Queues); err != nil {
				log.Error(err, "Cannot restore the checkpointed queues; every tenant is re-listed")
			} else {
				s.setColdTenants(cp.LeftOut)
				s.ckpt.Restore(ctx, cp)
				s.seedScope(ctx, cp)
				s.warmth.resumed = cp.TakenAt
			}
		}
	}
	close(s.warmth.restored) // tenants waiting in awaitRestore go on
	s.checkSuperIdentity(ctx)
	s.env.SuperInformers.StartWithContext(ctx)
	s.env.SuperNodes.StartWithContext(ctx)
	for typ, ok := range s.env.SuperInformers.WaitForCacheSyncWithContext(ctx).Synced {
		if !ok {
			return fmt.Errorf("super informer for %v did not sync", typ)
		}
	}
	for typ, ok := range s.env.SuperNodes.WaitForCacheSyncWithContext(ctx).Synced {
		if !ok {
			return fmt.Errorf("super informer for %v did not sync", typ)
		}
	}
	return nil
}

// resumeLeader runs when this replica starts leading. If a newer checkpoint than the one the
// warm-up resumed from exists (a standby that waited while the old leader kept writing, and
// wrote its final checkpoint before releasing the lease), its tenant state is taken instead:
// tenant sources (not started yet: tenants connect only under the leader), the super sources'
// ack maps (their caches are live already), the queues and the extra state.
func (s *Syncer) resumeLeader(ctx context.Context) {
	if s.ckpt == nil || !s.opts.Checkpoint.ReloadOnLead {
		return // no other replica can have written a newer checkpoint
	}
	cp := s.ckpt.Load(ctx)
	if cp == nil || !cp.TakenAt.After(s.warmth.resumed) {
		return
	}
	var tenants, super []source.State
	for _, st := range cp.Sources {
		if strings.HasPrefix(st.ID, tenantSourcePrefix) {
			tenants = append(tenants, st)
		} else {
			super = append(super, st)
		}
	}
	s.parkMu.Lock()
	s.parked = map[string]*parkedWork{}
	s.parkMu.Unlock()
	if err := s.restoreQueues(cp.Queues); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Cannot restore the checkpointed queues; every tenant is re-listed")
		return
	}
	s.setColdTenants(cp.LeftOut)
	s.ckpt.RestoreExtras(ctx, cp)
	s.sources.Restore(tenants)
	s.sources.RestoreAcks(super)
	ctrl.LoggerFrom(ctx).WithName("checkpoint").Info("Leading: resumed the tenants from the latest checkpoint", "takenAt", cp.TakenAt, "warmFrom", s.warmth.resumed)
}
