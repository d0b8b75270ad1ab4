package kubeletproxy

import (
	"errors"
	"io"
	"net/http"
)

// Log reads copy through a buffer that follows the stream's pace: minLogBuffer for a
// `logs -f` that waits for sparse lines (most held streams), doubling up to maxLogBuffer
// while every read fills it (a whole log, a follow catching up), back to minLogBuffer after
// shrinkAfter reads in a row that used less than an eighth of it (a follow that caught up;
// one short read amid a bulk copy does not reallocate). httputil.ReverseProxy holds 32 KiB per
// response for the whole stream, the most of an idle follow's memory.
const (
	minLogBuffer = 4 << 10
	maxLogBuffer = 32 << 10
	shrinkAfter  = 4
)

// logResponseHeaders are the super apiserver's response headers passed on to the tenant
// apiserver; the others (its audit ID, its flow-control schema and priority level, warnings
// about the super cluster, hop-by-hop headers) stay in the super cluster.
var logResponseHeaders = []string{"Content-Type", "Content-Length", "Date", "Cache-Control"}

// forwardRead sends out (a log read: a GET, never upgraded) to the super apiserver with the
// syncer's transport and copies the answer to w as it comes, flushing after every chunk so
// that `logs -f` shows each line at once, with only logResponseHeaders. A redirect or a 1xx
// from the super apiserver is refused with 502 (it would send the tenant's request elsewhere
// or turn it into another protocol); a failed request answers 502 through the responder.
func (s *Server) forwardRead(w http.ResponseWriter, out *http.Request) {
	resp, err := s.transport.RoundTrip(out)
	if err != nil {
		responder{log: s.log}.Error(w, out, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 && resp.StatusCode <= 399 && resp.Header.Get("Location") != "" {
		http.Error(w, "the super apiserver attempted to redirect or switch protocols on a log read, which is not permitted", http.StatusBadGateway)
		return
	}
	h := w.Header()
	for _, k := range logResponseHeaders {
		if vs := resp.Header.Values(k); len(vs) > 0 {
			h[k] = append([]string(nil), vs...)
		}
	}
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	_ = rc.Flush() // the headers, before a follow's first line
	if _, err := copyPaced(w, func() { _ = rc.Flush() }, resp.Body); err != nil {
		s.log.V(2).Info("Copying a log read ended", "path", out.URL.Path, "err", err.Error())
	}
}

// copyPaced copies src to dst until EOF, calling flush after every write, through a buffer
// sized as the constants above say. It returns the bytes copied and the first error other
// than io.EOF.
func copyPaced(dst io.Writer, flush func(), src io.Reader) (int64, error) {
	buf := make([]byte, minLogBuffer)
	var n int64
	short := 0 // reads in a row that used less than an eighth of buf
	for {
		k, err := src.Read(buf)
		if k > 0 {
			if _, werr := dst.Write(buf[:k]); werr != nil {
				return n, werr
			}
			n += int64(k)
			flush()
			if k < len(buf)/8 {
				short++
			} else {
				short = 0
			}
			switch {
			case k == len(buf) && len(buf) < maxLogBuffer:
				buf = make([]byte, 2*len(buf))
			case short >= shrinkAfter && len(buf) > minLogBuffer:
				buf, short = make([]byte, minLogBuffer), 0
			}
		}
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
