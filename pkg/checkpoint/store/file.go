package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// File stores the checkpoint in one local file (a PersistentVolume in a cluster, local disk
// for `vc-syncer dev`). The file holds "vcsckpt1", the sha256 of the rest, and the blob as
// gzip. Save is atomic on POSIX file systems: the new file is written to a temporary file in
// the same directory, fsynced, renamed over the old one, and the directory is fsynced, so
// after a crash at any point Load returns the old or the new blob.
//
// One File per path and process: the temporary files of another writer on the same path are
// swept by NewFile.
type File struct {
	path string
	dir  string

	mu sync.Mutex // serialises Save

	// beforeRename, if set, runs after the temporary file is written, synced and closed and
	// before the rename. A non-nil error aborts Save as a crash would: the temporary file is
	// left behind. Tests only.
	beforeRename func(tmp string) error
}

var _ Store = (*File)(nil)

// NewFile returns a File store at path. It creates the directory (mode 0700) if missing and
// removes temporary files left by a Save that crashed before its rename. It fails if path is
// empty or is a directory, or if the directory cannot be created or read.
func NewFile(path string) (*File, error) {
	if path == "" {
		return nil, errors.New("checkpoint file path is empty")
	}
	path = filepath.Clean(path)
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("checkpoint file %s is a directory", path)
	}
	f := &File{path: path, dir: filepath.Dir(path)}
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return nil, fmt.Errorf("failed to create checkpoint directory: %w", err)
	}
	if err := f.sweep(); err != nil {
		return nil, err
	}
	return f, nil
}

// tempPrefix is the name prefix of this store's temporary files: hidden, and tied to the
// checkpoint's file name so that stores sharing a directory do not sweep each other's.
func (f *File) tempPrefix() string { return "." + filepath.Base(f.path) + ".tmp-" }

// sweep removes this store's temporary files from its directory.
func (f *File) sweep() error {
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		return fmt.Errorf("failed to read checkpoint directory: %w", err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), f.tempPrefix()) {
			if err := os.Remove(filepath.Join(f.dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("failed to remove stale checkpoint temporary file: %w", err)
			}
		}
	}
	return nil
}

// String returns "file:" and the path.
func (f *File) String() string { return "file:" + f.path }

// Load returns the stored blob, (nil, nil) if the file does not exist, or an error wrapping
// ErrCorrupt if the file is truncated, fails its checksum or is not valid gzip.
func (f *File) Load(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to read checkpoint %s: %w", f, err)
	}
	data, err := decodeFile(b)
	if err != nil {
		return nil, fmt.Errorf("failed to decode checkpoint %s: %w", f, err)
	}
	return data, nil
}

// Save atomically replaces the file with data (mode 0600, os.CreateTemp's): a temporary file in the same
// directory, write, fsync, close, rename, fsync the directory. An error before the rename
// leaves the old file unchanged and removes the temporary file; an error from the final
// directory fsync means the new file is in place but may not survive a power loss. Data larger
// than 1 GiB is refused (Load would reject it). It never returns ErrConflict.
func (f *File) Save(ctx context.Context, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(data) > maxBlobBytes {
		return fmt.Errorf("checkpoint of %d bytes exceeds the limit of %d bytes", len(data), maxBlobBytes)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	tmp, err := os.CreateTemp(f.dir, f.tempPrefix()+"*")
	if err != nil {
		return fmt.Errorf("failed to create checkpoint temporary file: %w", err)
	}
	name := tmp.Name()
	committed := false
	defer func() {
		if !committed {
			_ = tmp.Close()
			_ = os.Remove(name)
		}
	}()
	if _, err := tmp.Write(encodeFile(data)); err != nil {
		return fmt.Errorf("failed to write checkpoint temporary file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("failed to sync checkpoint temporary file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("failed to close checkpoint temporary file: %w", err)
	}
	if f.beforeRename != nil {
		if err := f.beforeRename(name); err != nil {
			committed = true // simulated crash: leave the temporary file behind
			return err
		}
	}
	if err := os.Rename(name, f.path); err != nil {
		return fmt.Errorf("failed to rename checkpoint into place: %w", err)
	}
	committed = true
	if err := syncDir(f.dir); err != nil {
		return fmt.Errorf("failed to sync checkpoint directory: %w", err)
	}
	return nil
}

// syncDir fsyncs a directory so that a rename in it survives a power loss (POSIX: rename
// is atomic, but durable only once the directory entry is synced).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
