package store

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
)

// fileMagic starts every checkpoint file: a format name and version 1.
const fileMagic = "vcsckpt1"

// headerLen is the length of a file header: the magic, then sha256 of the rest of the file.
const headerLen = len(fileMagic) + sha256.Size

// maxBlobBytes bounds the size of a decompressed checkpoint (1 GiB), so that a damaged or
// hostile file cannot exhaust memory through a gzip bomb.
const maxBlobBytes = 1 << 30

// compress returns data as one gzip member (default level).
func compress(data []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	// Writes to a bytes.Buffer do not fail.
	_, _ = zw.Write(data)
	_ = zw.Close()
	return buf.Bytes()
}

// decompress reverses compress. It reads the whole stream, so gzip's CRC-32 and length
// trailer are checked, and it fails when the output would exceed limit bytes. Every error
// wraps ErrCorrupt and never contains the data.
func decompress(gz []byte, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("%w: invalid gzip header: %w", ErrCorrupt, err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w: invalid gzip data: %w", ErrCorrupt, err)
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("%w: decompressed size exceeds %d bytes", ErrCorrupt, limit)
	}
	if err := zr.Close(); err != nil {
		return nil, fmt.Errorf("%w: invalid gzip data: %w", ErrCorrupt, err)
	}
	if out == nil {
		out = []byte{}
	}
	return out, nil
}

// encodeFile returns the file form of data: fileMagic, sha256 of the gzip stream, the gzip
// stream.
func encodeFile(data []byte) []byte {
	gz := compress(data)
	sum := sha256.Sum256(gz)
	out := make([]byte, 0, headerLen+len(gz))
	out = append(out, fileMagic...)
	out = append(out, sum[:]...)
	return append(out, gz...)
}

// decodeFile reverses encodeFile. A short file, a wrong magic, a checksum mismatch or invalid
// gzip returns an error wrapping ErrCorrupt. The checksum is verified before decompressing.
func decodeFile(b []byte) ([]byte, error) {
	if len(b) < headerLen {
		return nil, fmt.Errorf("%w: file of %d bytes is shorter than its %d-byte header", ErrCorrupt, len(b), headerLen)
	}
	if string(b[:len(fileMagic)]) != fileMagic {
		return nil, fmt.Errorf("%w: unknown file format", ErrCorrupt)
	}
	gz := b[headerLen:]
	if sum := sha256.Sum256(gz); !bytes.Equal(sum[:], b[len(fileMagic):headerLen]) {
		return nil, fmt.Errorf("%w: sha256 mismatch", ErrCorrupt)
	}
	return decompress(gz, maxBlobBytes)
}
