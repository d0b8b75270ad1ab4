package resume

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/checkpoint/trackingqueue"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
	"github.com/vcsyncer/syncer/pkg/vnode"
)

// Options configures checkpointing (pkg/checkpoint).
type Options struct {
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
	// becoming leader the newest checkpoint's tenant state is loaded again (ResumeLeader).
	ReloadOnLead bool
	// Config is extra configuration that changes what the syncer does with the saved state
	// (e.g. flags); it is hashed into the checkpoint's Config (Digest).
	Config string
	// StoreOf returns the store of a shard's checkpoints (sharding: Adopt reads the state of a
	// tenant whose shard died from there).
	StoreOf func(shard string) (checkpoint.Store, error)
	// TenantStoreOf returns the store of a tenant's hand-over checkpoint (sharding: Drain
	// writes it, Adopt reads it). With both nil, tenants that move start cold.
	TenantStoreOf func(tenant string) (checkpoint.Store, error)
}

// Source ID prefixes of the super cluster's factories and of the tenants' (pkg/checkpoint/source).
const (
	SuperPrefix        = "super"
	SuperNodesPrefix   = "super-nodes"
	SuperVolumesPrefix = "super-volumes"
	SuperPublicPrefix  = "super-public"
	TenantPrefix       = "tenant/"
	// UnknownTenantsGrace is how long after a start the state of a tenant that is not
	// registered is kept (the Tenant controller may not have registered it yet).
	UnknownTenantsGrace = 2 * time.Minute
)

// TenantSourceID is the Source ID of tenant tenantName's informer of kind.
func TenantSourceID(tenantName string, kind resources.Kind) string {
	return TenantPrefix + tenantName + "/" + string(kind)
}

// OwnerVersion is the ack entry of an owned super object.
func OwnerVersion(m metav1.Object, o conversion.Owner) source.ObjectVersion {
	v := source.VersionOf(m)
	v.Owner = &source.Owner{Tenant: o.Tenant, TenantUID: o.TenantUID, Namespace: o.Namespace, Name: o.Name}
	return v
}

// Pipelines is what the State needs of the syncer's two pipelines. Every function is called
// with no lock of the syncer held; Snapshots, Enqueue and Seed may be called with the State's
// parking lock held, so they must not call back into the State.
type Pipelines struct {
	// Snapshots returns every unfinished request of the downward and the upward queue.
	Snapshots func() (down, up trackingqueue.Snapshot[resources.Request])
	// Window returns the Pods waiting in the admission window (in no queue meanwhile); nil
	// without one.
	Window func() []resources.Request
	// Size returns the number of unfinished requests of both queues.
	Size func() int
	// Enqueue adds req to the downward (down) or upward queue at low priority.
	Enqueue func(req resources.Request, down bool)
	// Seed puts snap into the downward (down) or upward queue, each request at low priority
	// and counted as added.
	Seed func(down bool, snap trackingqueue.Snapshot[resources.Request])
}

// Config is what New needs.
type Config struct {
	Options Options
	// Schema, Migrations and Digest identify what the checkpoints hold (checkpoint.Options).
	Schema     int
	Migrations map[int]func(*checkpoint.Checkpoint) error
	Digest     string
	// Sources are the resumable informers' states; Scope the super informers' scope (nil
	// without sharding).
	Sources *source.Registry
	Scope   *source.Scope
	// Pipelines are the syncer's queues.
	Pipelines Pipelines
	// VNodes is the vNode bookkeeping saved in every checkpoint (extra state "vnode-bindings").
	VNodes *vnode.Bindings
	// Super is the super cluster's clientset (its kube-system namespace identifies it).
	Super kubernetes.Interface
	// StartSuper starts the super informers and waits until they sync (the warm-up's end).
	StartSuper func(ctx context.Context) error
}

// State is the syncer's checkpoint state: what it resumed from and what it writes.
type State struct {
	cfg      Config
	sources  *source.Registry
	ckpt     *checkpoint.Checkpointer
	registry *tenant.Registry

	parkMu sync.Mutex
	parked map[string]*parkedWork

	keepTenantState func(tenant string) bool
	warmth          warmState
	// Marks are the tenants' policy generations saved in checkpoints (policymark.go).
	Marks PolicyMarks

	budgetMu sync.Mutex
	// leftOut are the tenants the checkpoint being taken leaves out (over budget).
	leftOut map[string]bool
	// coldTenants are the tenants the checkpoint resumed from left out: on ClusterSynced every
	// object of theirs is enqueued, whatever the ack maps say.
	coldTenants map[string]bool
}

// New returns the State of c; its Checkpointer is nil when c.Options.Store is.
func New(c Config) (*State, error) {
	st := &State{cfg: c, sources: c.Sources, parked: map[string]*parkedWork{}}
	st.warmth.restored = make(chan struct{})
	st.keepTenantState = st.KeepTenantStateFunc(time.Now())
	var err error
	if st.ckpt, err = st.newCheckpointer(); err != nil {
		return nil, err
	}
	return st, nil
}

// SetRegistry gives the State the tenant registry (before the syncer starts).
func (st *State) SetRegistry(r *tenant.Registry) { st.registry = r }

// Checkpointer returns the Checkpointer, nil when checkpointing is off.
func (st *State) Checkpointer() *checkpoint.Checkpointer { return st.ckpt }

// Sources returns the resumable informers' states.
func (st *State) Sources() *source.Registry { return st.sources }

// Options returns the checkpoint options.
func (st *State) Options() Options { return st.cfg.Options }

// newCheckpointer builds the Checkpointer (nil when checkpointing is off).
func (st *State) newCheckpointer() (*checkpoint.Checkpointer, error) {
	o := st.cfg.Options
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
		Schema: st.cfg.Schema, Migrations: st.cfg.Migrations, Config: st.cfg.Digest, Holder: holder,
		Sources: st.sources,
		KeepSource: func(id string) bool {
			name, ok := strings.CutPrefix(id, TenantPrefix)
			if !ok {
				return true
			}
			if i := strings.IndexByte(name, '/'); i >= 0 {
				name = name[:i]
			}
			return st.keepTenantState(name) && !st.isLeftOut(name)
		},
		Budget: st.budget,
		Queues: st,
		Extras: []checkpoint.Checkpointable{vnodeState{st.cfg.VNodes}, policyState{st}},
	})
}

// KeepTenantStateFunc returns whether a tenant's checkpointed state is still worth saving: a
// registered tenant always; an unregistered one only during the first UnknownTenantsGrace
// after started (the Tenant controller may not have registered it yet). Afterwards a tenant
// that is not registered has been removed, and its state is dropped.
func (st *State) KeepTenantStateFunc(started time.Time) func(string) bool {
	return func(name string) bool {
		if st.registry == nil {
			return true
		}
		if _, ok := st.registry.Get(name); ok {
			return true
		}
		return time.Since(started) < UnknownTenantsGrace
	}
}

// SetKeepTenantState replaces the KeepTenantStateFunc New set (tests start it in the past).
func (st *State) SetKeepTenantState(keep func(string) bool) { st.keepTenantState = keep }

// keepTenantForCheckpoint reports whether a checkpoint saves tenant's queued requests and
// policy mark: a tenant of this shard, not left out for its budget.
func (st *State) keepTenantForCheckpoint(tenant string) bool {
	return (st.keepTenantState == nil || st.keepTenantState(tenant)) && !st.isLeftOut(tenant)
}

// LastCheckpoint returns when the last checkpoint saved or resumed from was taken (zero if
// none, or checkpointing is off).
func (st *State) LastCheckpoint() time.Time {
	if st.ckpt == nil {
		return time.Time{}
	}
	return st.ckpt.LastSuccess()
}

// AddExtra adds extra state to every checkpoint (after the vNode bookkeeping and the policy
// marks). Call it before the syncer starts; it does nothing when checkpointing is off.
func (st *State) AddExtra(x checkpoint.Checkpointable) {
	if st.ckpt != nil {
		st.ckpt.AddExtra(x)
	}
}

// checkSuperIdentity discards checkpointed super-cluster state read from another super cluster
// (compared by the UID of its kube-system namespace). When that namespace cannot be read, the
// restored super state is discarded too (a cold start of the super caches is always safe). It
// does nothing when checkpointing is off.
func (st *State) checkSuperIdentity(ctx context.Context) {
	if st.ckpt == nil {
		return
	}
	log := ctrl.LoggerFrom(ctx).WithName("checkpoint")
	identity := "unknown"
	if ns, err := st.cfg.Super.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{}); err != nil {
		log.Error(err, "Cannot read the super cluster's kube-system namespace; its checkpointed state is not used")
	} else {
		identity = string(ns.UID)
	}
	if n := st.sources.CheckIdentity(SuperPrefix, identity); n > 0 {
		log.Info("Checkpointed state of another super cluster discarded; its caches start cold", "sources", n)
	}
}
