package kubeletproxy

import (
	"bufio"
	"context"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"sync"

	"github.com/vcsyncer/syncer/pkg/metrics"
)

// stream is one request being forwarded for a tenant: the client certificate that named the
// tenant (checked again by revalidate) and how to end it.
type stream struct {
	tenant, uid string
	leaf        *x509.Certificate
	inter       *x509.CertPool
	cancel      context.CancelFunc

	mu      sync.Mutex
	conn    net.Conn // the hijacked client connection of an upgrade (exec, attach, port-forward)
	revoked bool
}

// end ends the stream: its request context (a log stream) and its hijacked connection (an
// upgraded stream, which the upgrade proxy copies until one side closes). It reports false
// when the stream had already been ended.
func (st *stream) end() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.revoked {
		return false
	}
	st.revoked = true
	st.cancel()
	if st.conn != nil {
		_ = st.conn.Close()
	}
	return true
}

// streams holds the open streams by tenant name.
type streams struct {
	mu       sync.Mutex
	byTenant map[string]map[*stream]struct{}
}

// acquire registers a stream for tenant t with the client certificate of r, unless t already
// has its limit open (t.MaxStreams, at most Options.MaxStreamsPerTenant); ctx is r's context,
// ended by st.end.
func (s *Server) acquire(t *Tenant, r *http.Request) (st *stream, ctx context.Context, open int, ok bool) {
	limit := s.opts.MaxStreamsPerTenant
	if t.MaxStreams > 0 {
		limit = min(limit, t.MaxStreams)
	}
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	set := s.streams.byTenant[t.Name]
	if len(set) >= limit {
		return nil, nil, len(set), false
	}
	if set == nil {
		set = map[*stream]struct{}{}
		s.streams.byTenant[t.Name] = set
	}
	ctx, cancel := context.WithCancel(r.Context())
	leaf, inter := peerChain(r)
	st = &stream{tenant: t.Name, uid: t.UID, leaf: leaf, inter: inter, cancel: cancel}
	set[st] = struct{}{}
	metrics.KubeletOpenStreams(t.Name, len(set))
	return st, ctx, len(set), true
}

// release unregisters st once its request was answered.
func (s *Server) release(st *stream) {
	st.mu.Lock()
	st.revoked = true // nothing to end any more
	st.cancel()
	st.mu.Unlock()
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	set := s.streams.byTenant[st.tenant]
	delete(set, st)
	if len(set) == 0 {
		delete(s.streams.byTenant, st.tenant)
	}
	metrics.KubeletOpenStreams(st.tenant, len(set))
}

// OpenStreams returns the number of requests forwarded for the named tenant now.
func (s *Server) OpenStreams(tenant string) int {
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	return len(s.streams.byTenant[tenant])
}

// snapshot returns every open stream.
func (s *Server) snapshot() []*stream {
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	var out []*stream
	for _, set := range s.streams.byTenant {
		for st := range set {
			out = append(out, st)
		}
	}
	return out
}

// revalidate ends every open stream whose client certificate no longer names its tenant
// alone: the Tenant was removed (or re-created: another UID), or its spec.kubeletClientCA
// no longer verifies the certificate, or another Tenant's does too. Each ended stream is
// counted in vcsyncer_kubelet_streams_revoked_total{reason}.
func (s *Server) revalidate() {
	open := s.snapshot()
	if len(open) == 0 {
		return
	}
	tenants := s.opts.Tenants()
	for _, st := range open {
		t, _ := identify(st.leaf, st.inter, tenants)
		if t != nil && t.Name == st.tenant && t.UID == st.uid {
			continue
		}
		reason := RevokedTenantRemoved
		for i := range tenants {
			if tenants[i].Name == st.tenant && tenants[i].UID == st.uid {
				reason = RevokedCredentialsChanged
			}
		}
		if st.end() {
			metrics.KubeletStreamRevoked(reason)
			s.log.Info("Closing a kubelet API stream whose certificate no longer names its tenant", "tenant", st.tenant, "reason", reason)
		}
	}
}

// endAll ends every open stream (the server stops: hijacked connections are not closed by
// http.Server.Close).
func (s *Server) endAll() {
	for _, st := range s.snapshot() {
		st.end()
	}
}

// streamWriter is the ResponseWriter of a forwarded request: it records the connection an
// upgrade hijacks so that the stream can be ended, and counts the bytes written to the tenant
// apiserver (toTenant) and, on a hijacked connection, read from it (fromTenant).
type streamWriter struct {
	http.ResponseWriter
	st                   *stream
	toTenant, fromTenant func(n int)
}

// Write writes a response body chunk and counts it.
func (w streamWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.toTenant(n)
	return n, err
}

// Hijack hijacks the client connection and records it in the stream; a stream ended
// meanwhile has its connection closed at once. The connection returned counts its bytes.
func (w streamWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("kubeletproxy: the connection cannot be hijacked")
	}
	c, rw, err := h.Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.st.mu.Lock()
	w.st.conn = c
	ended := w.st.revoked
	w.st.mu.Unlock()
	if ended {
		_ = c.Close()
	}
	return countingConn{Conn: c, read: w.fromTenant, written: w.toTenant}, rw, nil
}

// countingConn is a hijacked connection that counts the bytes read and written.
type countingConn struct {
	net.Conn
	read, written func(n int)
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read(n)
	return n, err
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written(n)
	return n, err
}

// Flush flushes the response (logs -f).
func (w streamWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap returns the underlying ResponseWriter (http.ResponseController).
func (w streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
