package store

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// randomBytes returns n pseudo-random (incompressible) bytes from seed.
func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// tempFiles returns the names of f's temporary files in its directory.
func tempFiles(t *testing.T, f *File) []string {
	t.Helper()
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), f.tempPrefix()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestFileRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a", "b") // missing: NewFile creates it
	f, err := NewFile(filepath.Join(dir, "sync.ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.String(), "file:"+filepath.Join(dir, "sync.ckpt"); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("directory: %v, mode %v, want 0700", err, fi.Mode().Perm())
	}
	got, err := f.Load(ctx)
	if got != nil || err != nil {
		t.Fatalf("Load before any Save = (%d bytes, %v), want (nil, nil)", len(got), err)
	}
	cases := map[string][]byte{
		"empty":          {},
		"text":           []byte(strings.Repeat("tenant-1/default/pod-a ", 1000)),
		"incompressible": randomBytes(1, 3<<20),
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			if err := f.Save(ctx, want); err != nil {
				t.Fatal(err)
			}
			got, err := f.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || !bytes.Equal(got, want) {
				t.Fatalf("Load returned %d bytes (nil: %v), want the %d saved", len(got), got == nil, len(want))
			}
			fi, err := os.Stat(f.path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
			}
			if tmp := tempFiles(t, f); len(tmp) != 0 {
				t.Errorf("temporary files left after Save: %v", tmp)
			}
		})
	}
}

// TestFileCrashBeforeRename kills a Save between writing its temporary file and the rename:
// the previous checkpoint still loads, and the next NewFile sweeps the temporary file.
func TestFileCrashBeforeRename(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sync.ckpt")
	f, err := NewFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := []byte("generation 1")
	if err := f.Save(ctx, old); err != nil {
		t.Fatal(err)
	}
	crash := errors.New("killed")
	var tmpSeen string
	f.beforeRename = func(tmp string) error {
		tmpSeen = tmp
		return crash
	}
	if err := f.Save(ctx, randomBytes(2, 1<<20)); !errors.Is(err, crash) {
		t.Fatalf("Save with crash hook = %v, want %v", err, crash)
	}
	if _, err := os.Stat(tmpSeen); err != nil {
		t.Fatalf("the crashed Save's temporary file should still exist: %v", err)
	}
	// A restarted process.
	f2, err := NewFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmpSeen); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("NewFile did not sweep the stale temporary file: %v", err)
	}
	got, err := f2.Load(ctx)
	if err != nil || !bytes.Equal(got, old) {
		t.Fatalf("Load after crash = (%q, %v), want the previous checkpoint %q", got, err, old)
	}
}

// TestFileSweepKeepsOthers checks that NewFile removes only its own temporary files.
func TestFileSweepKeepsOthers(t *testing.T) {
	dir := t.TempDir()
	keep := []string{"other.ckpt", ".other.ckpt.tmp-123", "sync.ckpt.tmp-1"}
	for _, n := range append([]string{".sync.ckpt.tmp-42"}, keep...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := NewFile(filepath.Join(dir, "sync.ckpt")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".sync.ckpt.tmp-42")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("own temporary file not swept: %v", err)
	}
	for _, n := range keep {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was removed: %v", n, err)
		}
	}
}

func TestFileCorrupt(t *testing.T) {
	ctx := context.Background()
	good := encodeFile(randomBytes(3, 64<<10))
	cases := map[string]func([]byte) []byte{
		"flipped payload byte": func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b },
		"flipped checksum":     func(b []byte) []byte { b[len(fileMagic)] ^= 1; return b },
		"truncated":            func(b []byte) []byte { return b[:len(b)-100] },
		"header only":          func(b []byte) []byte { return b[:headerLen] },
		"shorter than header":  func(b []byte) []byte { return b[:10] },
		"empty":                func(b []byte) []byte { return nil },
		"wrong magic":          func(b []byte) []byte { b[0] = 'X'; return b },
		"trailing garbage":     func(b []byte) []byte { return append(b, 0) },
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sync.ckpt")
			if err := os.WriteFile(path, damage(bytes.Clone(good)), 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := NewFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.Load(ctx)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Load = (%d bytes, %v), want ErrCorrupt", len(got), err)
			}
		})
	}
}

// TestFileChecksumValidGzipInvalid stores a file whose checksum matches but whose gzip is
// damaged (a writer bug, not bit rot): still ErrCorrupt, through gzip's own CRC.
func TestFileChecksumValidGzipInvalid(t *testing.T) {
	gz := compress([]byte(strings.Repeat("abc", 1000)))
	gz[len(gz)-6] ^= 0xff // inside the CRC-32 trailer
	b := append([]byte(fileMagic), make([]byte, 32)...)
	sum := sha256Sum(gz)
	copy(b[len(fileMagic):], sum)
	b = append(b, gz...)
	if _, err := decodeFile(b); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("decodeFile = %v, want ErrCorrupt", err)
	}
}

func TestNewFileErrors(t *testing.T) {
	if _, err := NewFile(""); err == nil {
		t.Error("NewFile(\"\") succeeded")
	}
	if _, err := NewFile(t.TempDir()); err == nil {
		t.Error("NewFile(directory) succeeded")
	}
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFile(filepath.Join(blocker, "sync.ckpt")); err == nil {
		t.Error("NewFile under a regular file succeeded")
	}
}

// TestFileLoadDuringSaves checks atomicity from a reader's side: Loads racing with Saves
// always return one whole saved blob.
func TestFileLoadDuringSaves(t *testing.T) {
	ctx := context.Background()
	f, err := NewFile(filepath.Join(t.TempDir(), "sync.ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	blobs := make([][]byte, 8)
	for i := range blobs {
		blobs[i] = randomBytes(uint64(10+i), 256<<10)
	}
	if err := f.Save(ctx, blobs[0]); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		for {
			select {
			case <-done:
				return
			default:
			}
			got, err := f.Load(ctx)
			if err != nil {
				errs <- err
				return
			}
			found := false
			for _, b := range blobs {
				found = found || bytes.Equal(got, b)
			}
			if !found {
				errs <- errors.New("Load returned bytes that were never saved")
				return
			}
		}
	}()
	for _, b := range blobs[1:] {
		if err := f.Save(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}
