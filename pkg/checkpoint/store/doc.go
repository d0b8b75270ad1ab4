// Package store persists the syncer's checkpoint: one opaque blob, saved atomically, so that
// a restart resumes instead of cold-starting (the checkpointing design, section 4.4
// "Checkpointable extra state and the store"). The checkpointer encodes the blob; a store only
// compresses, checksums and stores it.
//
// # Usage
//
// Build a store from the --checkpoint-store flag with Parse, then Load once at start and Save
// periodically (leader only):
//
//	st, err := store.Parse(opts.CheckpointStore, superClient, store.Options{Holder: identity, Owner: ownerRef})
//	if err != nil { ... }          // invalid flag value
//	if st != nil {                 // nil: "none"
//		blob, err := st.Load(ctx)  // (nil, nil): no checkpoint yet
//		if errors.Is(err, store.ErrCorrupt) { ... } // cold start
//		...
//		err = st.Save(ctx, blob)   // errors.Is(err, store.ErrConflict): fenced by another writer
//	}
//
// "file:PATH" is a File (local disk or a PersistentVolume; the default of `vc-syncer dev`),
// "secret:NAMESPACE/NAME" a Secret store in the super cluster (the in-cluster default),
// "none" turns checkpointing off.
//
// # Implementation details
//
// File: the file holds "vcsckpt1", the sha256 of the rest, and the blob as one gzip member.
// Save writes a temporary file ".<base>.tmp-*" next to the target, fsyncs and closes it,
// renames it over the target and fsyncs the directory; NewFile removes temporary files left
// by a crash. POSIX rename is atomic, so Load sees the old or the new file.
//
// Secret: the gzip stream is split into chunks of at most ChunkBytes (900 KiB), each an
// immutable Opaque Secret "<name>-g<gen>-<i>" labelled LabelManagedBy, LabelID, LabelRole
// and LabelGeneration. After all chunks exist, the manifest Secret "<name>" is created or
// updated with its resourceVersion as precondition (the commit point); it records the
// generation, each chunk's name, UID, size and sha256, the whole stream's sha256, the
// uncompressed size and the holder. Then the previous generation's chunks are deleted (with
// their UID as precondition). Load verifies every checksum, the labels and the UIDs; a
// missing chunk is ErrCorrupt unless the manifest moved on meanwhile (then it re-reads).
//
// # Implementation considerations
//
// The commit is a single object write, so readers never see a mix of generations: the
// optimistic-concurrency check of the apiserver (metadata.resourceVersion on Update) admits
// one of two concurrent writers; the other gets ErrConflict. A chunk name already taken by a
// concurrent writer is a conflict too. Generations are never reused: after a failed save
// (or at the first Save of a process) the store lists its chunks and picks a generation above
// all of them, then deletes the older ones once its commit succeeded; chunks of a newer,
// possibly in-flight generation are left for a later Save. A Save whose manifest write fails
// with an unknown outcome (timeout) keeps its chunks: the write may have committed.
//
// Any older checkpoint is still a valid one (design 4.6): a lost or refused Save costs replay,
// not correctness, so a caller may simply retry at its next interval.
//
// Neither store logs, and errors never contain checkpoint contents (a checkpoint may hold
// Secret data of tenants).
//
// It sits on floor 0 of the package map in docs/architecture.md and may import packages on floors
// 0–0 only (today: none of the module's packages); test/layering checks it.
package store
