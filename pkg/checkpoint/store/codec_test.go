package store

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"testing"
)

func sha256Sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// FuzzDecodeFile feeds arbitrary bytes to the file decoder: it must never panic, every
// failure must wrap ErrCorrupt, and whatever it accepts must re-encode to an equal blob.
// Without -fuzz it runs the seed corpus as a normal test.
func FuzzDecodeFile(f *testing.F) {
	for _, seed := range [][]byte{
		encodeFile(nil),
		encodeFile([]byte("checkpoint")),
		encodeFile(bytes.Repeat([]byte("tenant-1/ns/pod "), 500)),
		encodeFile(randomBytes(7, 4096)),
		encodeFile([]byte("x"))[:headerLen+3],
		[]byte(fileMagic),
		{},
		append([]byte(fileMagic), make([]byte, 40)...),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := decodeFile(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decodeFile error %v does not wrap ErrCorrupt", err)
			}
			if out != nil {
				t.Fatalf("decodeFile returned %d bytes with an error", len(out))
			}
			return
		}
		again, err := decodeFile(encodeFile(out))
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("accepted blob of %d bytes does not round-trip: %v", len(out), err)
		}
	})
}

// FuzzParseManifest feeds arbitrary bytes to the manifest parser: no panic, and every
// failure wraps ErrCorrupt.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"format":1,"generation":3,"size":10,"sha256":"00","chunks":[{"name":"c-g3-0","sha256":"00","size":1}]}`))
	f.Add([]byte(`{"format":2}`))
	f.Add([]byte(`{"format":1,"generation":-1}`))
	f.Add([]byte(`null`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseManifest(b)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("parseManifest error %v does not wrap ErrCorrupt", err)
		}
		if err == nil && (m.Generation < 1 || len(m.Chunks) == 0 || m.Size < 0) {
			t.Fatalf("parseManifest accepted an invalid manifest %+v", m)
		}
	})
}

func TestDecompressLimit(t *testing.T) {
	gz := compress(make([]byte, 1<<20))
	if _, err := decompress(gz, 1<<20-1); !errors.Is(err, ErrCorrupt) {
		t.Errorf("decompress over the limit = %v, want ErrCorrupt", err)
	}
	if out, err := decompress(gz, 1<<20); err != nil || len(out) != 1<<20 {
		t.Errorf("decompress at the limit = (%d bytes, %v)", len(out), err)
	}
}
