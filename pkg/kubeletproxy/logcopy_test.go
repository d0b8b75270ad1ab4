package kubeletproxy

import (
	"bytes"
	"io"
	"slices"
	"testing"
)

// scriptedReader answers each Read with the next of its sizes (at most len(p)) and records
// the buffer length each Read was offered.
type scriptedReader struct {
	sizes   []int
	offered []int
}

func (r *scriptedReader) Read(p []byte) (int, error) {
	r.offered = append(r.offered, len(p))
	if len(r.sizes) == 0 {
		return 0, io.EOF
	}
	k := min(r.sizes[0], len(p))
	r.sizes = r.sizes[1:]
	for i := range p[:k] {
		p[i] = 'x'
	}
	return k, nil
}

func TestCopyPacedBufferFollowsThePace(t *testing.T) {
	const full = 1 << 20 // more than any buffer: every read fills what it is offered
	r := &scriptedReader{sizes: []int{full, full, full, full, full, 100, 100, 100, full, 100, 100, 100, 100, 100, full}}
	var dst bytes.Buffer
	flushes := 0
	n, err := copyPaced(&dst, func() { flushes++ }, r)
	if err != nil {
		t.Fatal(err)
	}
	// A follow of sparse lines reads into 4 KiB; whole reads double it to 32 KiB; three short
	// reads amid a bulk copy keep it; four in a row (lines, after catching up) bring it back
	// to 4 KiB.
	want := []int{4 << 10, 8 << 10, 16 << 10, 32 << 10, 32 << 10, 32 << 10, 32 << 10, 32 << 10, 32 << 10,
		32 << 10, 32 << 10, 32 << 10, 32 << 10, 4 << 10, 4 << 10, 8 << 10}
	if !slices.Equal(r.offered, want) {
		t.Errorf("buffers offered %v, want %v", r.offered, want)
	}
	wantBytes := int64(4<<10 + 8<<10 + 16<<10 + 32<<10 + 32<<10 + 3*100 + 32<<10 + 5*100 + 4<<10)
	if n != wantBytes || int64(dst.Len()) != wantBytes {
		t.Errorf("copied %d (dst %d) bytes, want %d", n, dst.Len(), wantBytes)
	}
	if flushes != 15 {
		t.Errorf("%d flushes, want one per write (15)", flushes)
	}
}

func TestCopyPacedStopsOnWriteError(t *testing.T) {
	r := &scriptedReader{sizes: []int{10, 10, 10}}
	n, err := copyPaced(failingWriter{}, func() {}, r)
	if err == nil || n != 0 {
		t.Errorf("copyPaced = %d, %v; want 0 and the write error", n, err)
	}
	if len(r.offered) != 1 {
		t.Errorf("%d reads after a failed write, want 1", len(r.offered))
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }
