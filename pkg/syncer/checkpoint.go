package syncer

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/checkpoint/trackingqueue"
	"github.com/vcsyncer/syncer/pkg/handover"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resume"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// The checkpoint wiring: what the syncer resumes from and writes is pkg/resume's (resume.State:
// queue snapshots, parked requests, the budget, policy marks, warm-up, the super scope), the
// hand-over of tenants between shards pkg/handover's (handover.Shard). This file builds them
// and keeps the methods cmd/ and the tests call.

// CheckpointOptions configures checkpointing (pkg/checkpoint); see resume.Options.
type CheckpointOptions = resume.Options

// ShardFence tells the workers, with sharding on, whether this replica may write for a tenant
// now (handover.Fence; pkg/sharding.Membership implements it).
type ShardFence = handover.Fence

// Source ID prefixes of the super cluster's factories (pkg/checkpoint/source).
const (
	superSourcePrefix  = resume.SuperPrefix
	superNodesPrefix   = resume.SuperNodesPrefix
	superVolumesPrefix = resume.SuperVolumesPrefix
	superPublicPrefix  = resume.SuperPublicPrefix
	tenantSourcePrefix = resume.TenantPrefix
)

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
//   - the queue items (resume.QueueItem, resources.Request) and what parked and
//     admission-window requests mean;
//   - the extra state: vNode bindings (vnode.Snapshot), remediation findings.
//
// TestCheckpointSchemaGuard fails when any of these changes while CheckpointSchema does not.
// When the old meaning can be converted, add a step to checkpointMigrations instead of letting
// old checkpoints go cold. The upgrade tests find the first commit of a schema by this line.
const CheckpointSchema = 1

// checkpointMigrations turns a checkpoint of schema n into one of schema n+1 (see
// checkpoint.Options.Migrations). Schema 0 is every checkpoint written before schemas existed:
// those versions identified their build, so what they saved cannot be known, and they stay
// unreadable.
var checkpointMigrations = map[int]func(*checkpoint.Checkpoint) error{}

// configDigest identifies the configuration that shapes saved state (resume.Digest).
func configDigest(o Options) string {
	return resume.Digest{DisableFairQueuing: o.DisableFairQueuing, PodSecurityEnforce: o.PodSecurityEnforce,
		ClusterDomain: o.ClusterDomain, TenantDNS: o.TenantDNS, OptInKinds: o.OptInKinds, DisabledKinds: o.DisabledKinds,
		Config: o.Checkpoint.Config}.String()
}

// newResume builds the checkpoint state and the shard hand-over of s (New, once the vNode
// manager exists).
func (s *Syncer) newResume() error {
	st, err := resume.New(resume.Config{
		Options: s.opts.Checkpoint, Schema: CheckpointSchema, Migrations: checkpointMigrations, Digest: configDigest(s.opts),
		Sources: s.sources, Scope: s.scope, VNodes: s.vnodes.Bindings(), Super: s.opts.Super,
		Pipelines: resume.Pipelines{
			Snapshots: func() (down, up trackingqueue.Snapshot[resources.Request]) { return s.down.Snapshot(), s.up.Snapshot() },
			Window:    s.admissionItems,
			Size:      func() int { return s.down.Size() + s.up.Size() + len(s.admissionItems()) },
			Enqueue: func(req resources.Request, down bool) {
				s.enqueue(s.queueOf(down), req, false)
			},
			Seed: s.seedQueue,
		},
		StartSuper: s.startSuper,
	})
	if err != nil {
		return err
	}
	s.resume, s.ckpt = st, st.Checkpointer()
	s.shard = handover.New(s.opts.Sharding, st)
	return nil
}

// admissionItems returns the Pods waiting in the admission window (none without one).
func (s *Syncer) admissionItems() []resources.Request {
	if s.admission == nil {
		return nil
	}
	return s.admission.Items()
}

// queueOf returns the downward (down) or upward queue.
func (s *Syncer) queueOf(down bool) *pipelineQueue {
	if down {
		return s.down
	}
	return s.up
}

// seedQueue puts a parked tenant's requests into a queue at low priority (resume.DrainParked).
func (s *Syncer) seedQueue(down bool, snap trackingqueue.Snapshot[resources.Request]) {
	q, dir := s.queueOf(down), directionUpward
	if down {
		dir = directionDownward
	}
	for _, req := range snap.Queued {
		metrics.QueueAdd(req.Tenant, dir)
		if q.fair != nil {
			q.fair.MarkLow(req)
		}
	}
	for req := range snap.Delayed {
		metrics.QueueAdd(req.Tenant, dir)
		if q.fair != nil {
			q.fair.MarkLow(req)
		}
	}
	q.Seed(snap)
}

// startSuper starts the super informers and waits until they sync (the warm-up's end).
func (s *Syncer) startSuper(ctx context.Context) error {
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

// tenantInformers implements tenant.InformerFactoryFunc with resumable factories.
func (s *Syncer) tenantInformers(name string, cs kubernetes.Interface, transform cache.TransformFunc) informers.SharedInformerFactory {
	return source.NewFactory(s.sources, tenantSourcePrefix+name, cs, source.FactoryOptions{Transform: transform})
}

// tenantSource returns the Source of tenant c's informer of kind, or nil for kinds whose
// informer is not resumable.
func (s *Syncer) tenantSource(c *tenant.Cluster, kind resources.Kind) *source.Source {
	src, _ := s.sources.Lookup(resume.TenantSourceID(c.Name, kind))
	return src
}

// superSource returns the Source of the super informer of kind, or nil.
func (s *Syncer) superSource(kind resources.Kind) *source.Source {
	src, _ := s.sources.Lookup(superSourcePrefix + "/" + string(kind))
	return src
}

// superCacheStats reports the super informer caches for vcsyncer_super_cache_objects.
func (s *Syncer) superCacheStats() (map[string]int, int, bool) {
	out := map[string]int{}
	for kind, r := range s.resources {
		if inf := r.SuperInformer(s.env); inf != nil {
			out[string(kind)] = len(inf.GetStore().ListKeys())
		}
	}
	if s.scope == nil {
		return out, 0, false
	}
	return out, len(s.scope.Values()), true
}

var (
	_ checkpoint.Queues = (*Syncer)(nil)
	_ tenant.Handover   = (*Syncer)(nil)
)

// QueueSize implements checkpoint.Queues (resume.State.QueueSize).
func (s *Syncer) QueueSize() int { return s.resume.QueueSize() }

// SnapshotQueues implements checkpoint.Queues (resume.State.SnapshotQueues).
func (s *Syncer) SnapshotQueues() ([]byte, int, error) { return s.resume.SnapshotQueues() }

// LastCheckpoint returns when the last checkpoint saved or resumed from was taken (zero if
// none, or checkpointing is off).
func (s *Syncer) LastCheckpoint() time.Time { return s.resume.LastCheckpoint() }

// Sources returns the Syncer's resumable informer states (for tests and metrics).
func (s *Syncer) Sources() *source.Registry { return s.sources }

// AddCheckpointExtra adds extra state to every checkpoint (after the vNode bookkeeping), such as
// the remediation scanner's findings. Call it before Start; it does nothing when checkpointing
// is off.
func (s *Syncer) AddCheckpointExtra(x checkpoint.Checkpointable) { s.resume.AddExtra(x) }

// Warmup returns the Runnable every replica runs, leader or standby (resume.State.Warmup).
func (s *Syncer) Warmup() manager.Runnable { return s.resume.Warmup() }

// SetClaimed implements tenant.Handover (handover.Shard.SetClaimed).
func (s *Syncer) SetClaimed(tenantName string, claimed bool) { s.shard.SetClaimed(tenantName, claimed) }

// Drain implements tenant.Handover (handover.Shard.Drain).
func (s *Syncer) Drain(ctx context.Context, tenantName string, save bool) error {
	return s.shard.Drain(ctx, tenantName, save)
}

// Adopt implements tenant.Handover (handover.Shard.Adopt).
func (s *Syncer) Adopt(ctx context.Context, tenantName, uid, from string, expired bool) {
	s.shard.Adopt(ctx, tenantName, uid, from, expired)
}
