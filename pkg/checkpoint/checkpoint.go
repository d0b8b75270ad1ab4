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

// Format is the version of the Checkpoint struct's own encoding (the envelope). A checkpoint of
// another format cannot be decoded and is discarded. What the checkpoint holds (objects, ack
// maps, queue items, extra state) is versioned by Checkpoint.Schema, which the writer sets.
const Format = 1

// Checkpoint is what one save writes.
type Checkpoint struct {
	// Format is the schema version (Format).
	Format int
	// Schema is the version of what the checkpoint holds (Options.Schema of the writer): the
	// cached forms of objects, the ack map and queue item keys, the extra state. 0 for a
	// checkpoint written before checkpoints had a schema (its writer identified its build
	// instead, in a field this version ignores): no version can read it.
	Schema int
	// Config identifies the options that shape the saved state (Options.Config of the writer).
	Config string
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
// another Format. It does not look at Schema (see Checkpointer.Load).
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
