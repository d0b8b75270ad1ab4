// Package checkpoint saves and restores the syncer's progress so that a restart (a deploy, an
// eviction, a leader failover) resumes where the last process left off instead of listing every
// tenant and the super cluster again and reconciling every object.
//
// A checkpoint holds, in this order (checkpointing.md section 4.5, after the Confluent
// "resumable controllers" design and controller-runtime#3234):
//
//  1. every Source's position, cached objects and ack map (pkg/checkpoint/source);
//  2. the workqueues' unfinished items (pkg/checkpoint/trackingqueue), plus the requests parked
//     for tenants that were not synced;
//  3. extra in-memory state (Checkpointable: vNode bookkeeping, remediation findings).
//
// Taking positions before queues, and queues before extra state, gives at-least-once delivery:
// a change is either behind a saved position (it is replayed by the watch or found by the
// relist diff) or was enqueued before the queue snapshot (it is in the snapshot, or its
// reconcile already finished). Any older checkpoint is also valid, only with more replay: that
// is why a checkpoint is skipped, and the previous one kept, when the queues hold more than
// Options.MaxItems (section 4.6).
//
// A checkpoint written by other code or configuration (Checkpoint.CodeVersion differs) is
// discarded and the syncer cold-starts.
package checkpoint

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"time"

	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
)

// Format is the schema version of Checkpoint. A checkpoint of another format is discarded.
const Format = 1

// Checkpoint is what one save writes.
type Checkpoint struct {
	// Format is the schema version (Format).
	Format int
	// CodeVersion identifies the code and configuration that wrote it; see Options.CodeVersion.
	CodeVersion string
	// Holder is the identity of the process (leader) that wrote it.
	Holder string
	// TakenAt is when the checkpoint was taken.
	TakenAt time.Time
	// Sources are the informers' positions, objects and ack maps.
	Sources []source.State
	// Queues is the encoded queue state (Queues.SnapshotQueues).
	Queues []byte
	// QueueItems is the number of items in Queues.
	QueueItems int
	// Extras are the Checkpointables' states by name.
	Extras map[string][]byte
	// LeftOut are the tenants whose state this checkpoint leaves out (Options.Budget): their
	// sources and queue items are not in it, so on resume they are listed again and every
	// object of theirs, tenant and super, is reconciled.
	LeftOut []string
}

// Encode serialises cp (encoding/gob). The stores add compression and checksums.
func Encode(cp *Checkpoint) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(cp); err != nil {
		return nil, fmt.Errorf("checkpoint: encode: %w", err)
	}
	return buf.Bytes(), nil
}

// Decode parses data written by Encode. It returns an error for data it cannot parse or of
// another Format.
func Decode(data []byte) (*Checkpoint, error) {
	cp := &Checkpoint{}
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(cp); err != nil {
		return nil, fmt.Errorf("checkpoint: decode: %w", err)
	}
	if cp.Format != Format {
		return nil, fmt.Errorf("checkpoint: format %d, want %d", cp.Format, Format)
	}
	return cp, nil
}

// Checkpointable is extra in-memory state saved after the queues and restored before the
// informers start. Restore must accept state that is newer than the restored queues and
// positions (the work in between is replayed), so the state must be idempotent or monotone
// under replay (checkpointing.md 4.6).
type Checkpointable interface {
	// Name identifies the state in the checkpoint.
	Name() string
	// Checkpoint returns the encoded state. The same state must give the same bytes (no map
	// order in them): the Checkpointer compares them to keep a stored checkpoint that holds
	// the current state already.
	Checkpoint(ctx context.Context) ([]byte, error)
	// Restore replaces the state with data from Checkpoint.
	Restore(ctx context.Context, data []byte) error
}

// Queues is the syncer's workqueues, as seen by the Checkpointer.
type Queues interface {
	// QueueSize is a cheap upper bound of the unfinished items in every queue.
	QueueSize() int
	// SnapshotQueues returns the encoded unfinished items of every queue (queued, processing,
	// delayed and parked) taken consistently, and their number.
	SnapshotQueues() (data []byte, items int, err error)
}

// Store persists one encoded checkpoint; pkg/checkpoint/store implements it.
type Store interface {
	// Load returns the saved checkpoint, or (nil, nil) when there is none.
	Load(ctx context.Context) ([]byte, error)
	// Save replaces the saved checkpoint atomically.
	Save(ctx context.Context, data []byte) error
	// String names the store for logs ("file:/path", "secret:ns/name").
	String() string
}

// ErrSkipped is returned by Checkpointer.Save when the checkpoint was skipped because the
// queues held more than Options.MaxItems; the previous checkpoint is kept.
var ErrSkipped = errors.New("checkpoint skipped: queues over budget")
