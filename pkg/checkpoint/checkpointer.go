package checkpoint

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"sync"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/metrics"
)

// Defaults of Options.
const (
	DefaultInterval = 30 * time.Second
	DefaultMaxItems = 15000
)

// UnchangedRefresh is how long Save may keep the stored checkpoint instead of writing one
// that would hold the same state (the same objects, ack maps, queue items and extra state):
// after it, an unchanged state is written again, so the watch positions saved with it stay
// well inside kube-apiserver's default etcd compaction interval (5 minutes), beyond which a
// resumed watch would be answered 410 Gone and relist.
const UnchangedRefresh = 2 * time.Minute

// Options configures a Checkpointer.
type Options struct {
	// Store persists checkpoints. Required.
	Store Store
	// Interval between periodic checkpoints. Defaults to DefaultInterval (30 s).
	Interval time.Duration
	// MaxItems: a checkpoint is skipped (and the previous one kept) while the queues hold more
	// unfinished items than this; with Budget set, it is a per-tenant budget instead. Defaults
	// to DefaultMaxItems (15000).
	MaxItems int
	// Budget, if set, is called first in each Save with MaxItems. It decides which tenants hold
	// more than MaxItems unfinished items and returns them; KeepSource and Queues must then
	// leave their sources and queue items out of this checkpoint, which records them in
	// Checkpoint.LeftOut (the resuming process lists them again and reconciles all their
	// objects). The total is then not limited, so one tenant's backlog never stops the
	// checkpoints of the others.
	Budget func(maxItems int) (leftOut []string)
	// Schema is the version of what this process's checkpoints hold (their objects' cached
	// forms, ack map and queue item keys, extra state), at least 1. A checkpoint of this schema
	// is used as it is; one of an older schema only through Migrations; one of a newer schema
	// (written by a later version, before a rollback) is discarded. Required.
	Schema int
	// Migrations upgrade checkpoints of older schemas: Migrations[n] turns a checkpoint of
	// schema n into one of schema n+1 (it may change anything in it). A checkpoint of schema
	// s < Schema is used when Migrations holds every step from s to Schema; otherwise it is
	// discarded. A step that fails discards the checkpoint whole.
	Migrations map[int]func(*Checkpoint) error
	// Config identifies the options that shape the saved state (the kinds synced, the trims
	// they imply); a checkpoint with another one is discarded on Load.
	Config string
	// Holder identifies this process (recorded in the checkpoint).
	Holder string
	// Sources are the informers' resumable states. Required.
	Sources *source.Registry
	// KeepSource filters the Sources saved by ID (nil saves all).
	KeepSource func(id string) bool
	// Queues are the workqueues. Required.
	Queues Queues
	// Extras are saved after the queues, in order.
	Extras []Checkpointable
}

// Checkpointer takes checkpoints (periodically and on demand) and loads the last one.
type Checkpointer struct {
	o Options

	mu   sync.Mutex // serialises saves
	last time.Time
	// sources, digest and written describe the checkpoint this process wrote last: the digest
	// of its sources (taken just before their states), of its whole state (stateDigest), and
	// when it was taken; zero before the first write.
	sources, digest uint64
	written         time.Time
}

// New returns a Checkpointer. It returns an error when Store, Sources or Queues is missing.
func New(o Options) (*Checkpointer, error) {
	if o.Store == nil || o.Sources == nil || o.Queues == nil {
		return nil, fmt.Errorf("checkpoint: Options.Store, Sources and Queues are required")
	}
	if o.Schema < 1 {
		return nil, fmt.Errorf("checkpoint: Options.Schema must be at least 1, not %d", o.Schema)
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.MaxItems <= 0 {
		o.MaxItems = DefaultMaxItems
	}
	return &Checkpointer{o: o}, nil
}

// Load reads the saved checkpoint. It returns nil — cold start — when there is none, when it
// cannot be read or decoded, when its schema is one this version cannot read (older than its
// Migrations reach, or newer: a rollback), when a migration fails, or when it was written with
// other options (Config); the reason is logged, with both schemas, and counted
// (vcsyncer_checkpoint_loads_total{result}, vcsyncer_checkpoint_discarded_total{reason}). A
// checkpoint is used whole or not at all. Load never fails the syncer: an unusable checkpoint
// only costs a cold start.
func (c *Checkpointer) Load(ctx context.Context) *Checkpoint {
	cp := c.load(ctx, c.o.Store, false)
	if cp != nil {
		c.mu.Lock()
		c.last = cp.TakenAt
		c.mu.Unlock()
	}
	return cp
}

// LoadFrom is Load from another store (another shard's checkpoint, or a tenant's hand-over
// checkpoint, whose state this process takes over); it does not change LastSuccess, and a
// store with no checkpoint is logged at V(1) only (the caller says what it does then).
func (c *Checkpointer) LoadFrom(ctx context.Context, st Store) *Checkpoint {
	return c.load(ctx, st, true)
}

func (c *Checkpointer) load(ctx context.Context, st Store, other bool) *Checkpoint {
	log := ctrl.LoggerFrom(ctx).WithName("checkpoint")
	data, err := st.Load(ctx)
	switch {
	case err != nil:
		log.Error(err, "Cannot read the checkpoint; starting cold", "store", st.String())
		metrics.CheckpointLoaded("unreadable")
		metrics.CheckpointDiscarded("unreadable")
		return nil
	case data == nil && other:
		log.V(1).Info("No checkpoint in the store", "store", st.String())
		return nil
	case data == nil:
		log.Info("No checkpoint yet; starting cold", "store", st.String())
		metrics.CheckpointLoaded("none")
		return nil
	}
	cp, err := Decode(data)
	if err != nil {
		log.Error(err, "Cannot decode the checkpoint; starting cold", "store", st.String())
		metrics.CheckpointLoaded("undecodable")
		metrics.CheckpointDiscarded("undecodable")
		return nil
	}
	written := cp.Schema
	if reason, err := c.migrate(cp); err != nil {
		log.Info("Checkpoint schema cannot be read by this version; starting cold", "store", st.String(),
			"checkpointSchema", written, "runningSchema", c.o.Schema, "oldestReadable", c.oldestReadable(),
			"reason", err.Error(), "holder", cp.Holder, "takenAt", cp.TakenAt)
		metrics.CheckpointLoaded("discarded")
		metrics.CheckpointDiscarded(reason)
		return nil
	}
	if cp.Config != c.o.Config {
		log.Info("Checkpoint was written with other options; starting cold", "store", st.String(),
			"written", cp.Config, "running", c.o.Config, "checkpointSchema", written, "runningSchema", c.o.Schema,
			"holder", cp.Holder)
		metrics.CheckpointLoaded("discarded")
		metrics.CheckpointDiscarded("config_changed")
		return nil
	}
	log.Info("Resuming from checkpoint", "store", st.String(), "takenAt", cp.TakenAt,
		"age", time.Since(cp.TakenAt).Round(time.Millisecond), "holder", cp.Holder,
		"checkpointSchema", written, "runningSchema", c.o.Schema,
		"sources", len(cp.Sources), "queueItems", cp.QueueItems, "bytes", len(data))
	if written != c.o.Schema {
		metrics.CheckpointLoaded("migrated")
	} else {
		metrics.CheckpointLoaded("resumed")
	}
	return cp
}

// Discard reasons of a checkpoint whose schema this version cannot use
// (vcsyncer_checkpoint_discarded_total{reason}).
const (
	// ReasonSchemaTooOld: written by a version older than Migrations reach (or before
	// checkpoints had a schema).
	ReasonSchemaTooOld = "schema_too_old"
	// ReasonSchemaNewer: written by a newer version (this one was rolled back to).
	ReasonSchemaNewer = "schema_newer"
	// ReasonMigrationFailed: a migration step returned an error.
	ReasonMigrationFailed = "migration_failed"
)

// migrate brings cp to Options.Schema through Options.Migrations. On failure it returns the
// discard reason and the error; cp may then be half-migrated and must not be used.
func (c *Checkpointer) migrate(cp *Checkpoint) (string, error) {
	switch {
	case cp.Schema > c.o.Schema:
		return ReasonSchemaNewer, fmt.Errorf("checkpoint schema %d is newer than this version's %d", cp.Schema, c.o.Schema)
	case cp.Schema < c.oldestReadable():
		return ReasonSchemaTooOld, fmt.Errorf("checkpoint schema %d is older than the oldest this version reads, %d", cp.Schema, c.oldestReadable())
	}
	for cp.Schema < c.o.Schema {
		from := cp.Schema
		if err := c.o.Migrations[from](cp); err != nil {
			return ReasonMigrationFailed, fmt.Errorf("migrating checkpoint schema %d to %d: %w", from, from+1, err)
		}
		cp.Schema = from + 1
	}
	return "", nil
}

// oldestReadable returns the oldest schema Load reads: the lowest s such that Migrations holds
// every step from s to Options.Schema.
func (c *Checkpointer) oldestReadable() int {
	s := c.o.Schema
	for s > 0 && c.o.Migrations[s-1] != nil {
		s--
	}
	return s
}

// NewCheckpoint returns an empty checkpoint taken at takenAt, stamped with this Checkpointer's
// Format, Schema, Config and Holder (for checkpoints written outside Save, such as a tenant's
// hand-over checkpoint).
func (c *Checkpointer) NewCheckpoint(takenAt time.Time) *Checkpoint {
	return &Checkpoint{Format: Format, Schema: c.o.Schema, Config: c.o.Config, Holder: c.o.Holder, TakenAt: takenAt}
}

// Save takes one checkpoint and writes it: Sources, then Queues, then Extras, then the store.
// It returns ErrSkipped (the previous checkpoint is kept) when the queues hold more than
// Options.MaxItems (without Options.Budget), and the error of any step otherwise.
func (c *Checkpointer) Save(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	start := time.Now()
	var leftOut []string
	if c.o.Budget != nil {
		leftOut = c.o.Budget(c.o.MaxItems)
		metrics.CheckpointTenantsLeftOut(leftOut)
	} else if n := c.o.Queues.QueueSize(); n > c.o.MaxItems {
		metrics.CheckpointSkipped("queue_over_budget")
		return fmt.Errorf("%w (%d > %d)", ErrSkipped, n, c.o.MaxItems)
	}
	cp := c.NewCheckpoint(start)
	cp.LeftOut = leftOut
	var err error
	// 0. whether the stored checkpoint holds this state already (then keeping it is as good
	// as writing one now). Keeping an earlier checkpoint is always safe: it is consistent in
	// itself, and resuming from it replays what came after it; UnchangedRefresh bounds how far.
	sources := c.o.Sources.Digest(c.o.KeepSource)
	if !c.written.IsZero() && sources == c.sources && start.Sub(c.written) < UnchangedRefresh {
		if c.unchanged(ctx, sources, leftOut) {
			metrics.CheckpointUnchanged(start)
			c.last = start
			return nil
		}
	}
	// 1. positions, objects, ack maps.
	if cp.Sources, err = c.o.Sources.Checkpoint(c.o.KeepSource); err != nil {
		return c.failed(err)
	}
	// 2. queues.
	if cp.Queues, cp.QueueItems, err = c.o.Queues.SnapshotQueues(); err != nil {
		return c.failed(err)
	}
	if c.o.Budget == nil && cp.QueueItems > c.o.MaxItems {
		metrics.CheckpointSkipped("queue_over_budget")
		return fmt.Errorf("%w (%d > %d)", ErrSkipped, cp.QueueItems, c.o.MaxItems)
	}
	// 3. extra state.
	cp.Extras = map[string][]byte{}
	for _, x := range c.o.Extras {
		b, err := x.Checkpoint(ctx)
		if err != nil {
			return c.failed(fmt.Errorf("checkpoint of %s: %w", x.Name(), err))
		}
		cp.Extras[x.Name()] = b
	}
	data, err := Encode(cp)
	if err != nil {
		return c.failed(err)
	}
	if err := c.o.Store.Save(ctx, data); err != nil {
		return c.failed(fmt.Errorf("saving to %s: %w", c.o.Store.String(), err))
	}
	objects := 0
	for _, s := range cp.Sources {
		objects += len(s.Objects)
	}
	metrics.CheckpointSaved(time.Since(start), len(data), cp.QueueItems, objects, start)
	// The digest of the sources was taken before their states: a change in between only
	// makes the next Save write again.
	c.last, c.written = start, start
	c.sources, c.digest = sources, stateDigest(sources, leftOut, cp.Queues, cp.QueueItems, cp.Extras)
	return nil
}

// unchanged reports whether the queues and extra state, with the sources' digest and the
// left-out tenants, give the digest of the stored checkpoint. A queue or extra that cannot be
// read, and queues over Options.MaxItems without a Budget, count as changed (the full Save
// then reports the error or the skip).
func (c *Checkpointer) unchanged(ctx context.Context, sources uint64, leftOut []string) bool {
	q, items, err := c.o.Queues.SnapshotQueues()
	if err != nil || (c.o.Budget == nil && items > c.o.MaxItems) {
		return false
	}
	extras := make(map[string][]byte, len(c.o.Extras))
	for _, x := range c.o.Extras {
		b, err := x.Checkpoint(ctx)
		if err != nil {
			return false
		}
		extras[x.Name()] = b
	}
	return stateDigest(sources, leftOut, q, items, extras) == c.digest
}

// stateDigest combines the digest of the sources' states (source.Registry.Digest) with the
// rest of what a checkpoint holds: the left-out tenants, the encoded queue items and their
// number, and the extra state by name. It is an FNV-1a hash (hash/fnv).
func stateDigest(sources uint64, leftOut []string, queues []byte, items int, extras map[string][]byte) uint64 {
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%d|%q|%d|%d|", sources, leftOut, items, len(queues))
	_, _ = h.Write(queues)
	names := make([]string, 0, len(extras))
	for n := range extras {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		_, _ = fmt.Fprintf(h, "|%s|%d|", n, len(extras[n]))
		_, _ = h.Write(extras[n])
	}
	return h.Sum64()
}

func (c *Checkpointer) failed(err error) error {
	metrics.CheckpointFailed()
	return err
}

// MaxItems returns Options.MaxItems (with its default filled in).
func (c *Checkpointer) MaxItems() int { return c.o.MaxItems }

// LastSuccess returns when the last checkpoint that was saved (or loaded) was taken; zero if none.
func (c *Checkpointer) LastSuccess() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// Run saves a checkpoint every Options.Interval until ctx is done. Errors are logged and
// counted; they never stop the syncer.
func (c *Checkpointer) Run(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx).WithName("checkpoint")
	t := time.NewTicker(c.o.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := c.Save(ctx); err != nil && ctx.Err() == nil {
			log.Info("Checkpoint not written", "reason", err.Error())
		}
	}
}

// Restore applies cp's extra state to the Checkpointables (by name; unknown names are ignored).
// Call it before the informers start. An extra that cannot be restored is logged and left
// empty: it is rebuilt from the informers' initial events.
func (c *Checkpointer) Restore(ctx context.Context, cp *Checkpoint) {
	c.RestoreExtras(ctx, cp)
	c.o.Sources.Restore(cp.Sources)
}

// RestoreExtras applies cp's extra state only (see Restore).
func (c *Checkpointer) RestoreExtras(ctx context.Context, cp *Checkpoint) {
	log := ctrl.LoggerFrom(ctx).WithName("checkpoint")
	for _, x := range c.o.Extras {
		if b, ok := cp.Extras[x.Name()]; ok {
			if err := x.Restore(ctx, b); err != nil {
				log.Error(err, "Cannot restore extra state; it is rebuilt from the caches", "name", x.Name())
			}
		}
	}
}

// AddExtra appends x to Options.Extras. Call it before the first Load or Save.
func (c *Checkpointer) AddExtra(x Checkpointable) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.o.Extras = append(c.o.Extras, x)
}
