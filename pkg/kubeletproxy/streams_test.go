package kubeletproxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vcsyncer/syncer/pkg/metrics"
)

// openStream starts a follow=true log request (logs -f of web/frontend/app) of cert in the background. The returned
// function cancels it (the caller going away); done is closed when ServeHTTP returned.
func (f *fixture) openStream(t *testing.T, cert *x509.Certificate) (cancel func(), done <-chan struct{}) {
	t.Helper()
	const target = "/containerLogs/web/frontend/app?follow=true"
	ctx, cancelCtx := context.WithCancel(context.Background())
	r := httptest.NewRequest(http.MethodGet, target, nil).WithContext(ctx)
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
	w := httptest.NewRecorder()
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		f.srv.ServeHTTP(w, r)
	}()
	t.Cleanup(func() { cancelCtx(); <-ch })
	return cancelCtx, ch
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func closedWithin(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

func TestStreamLimitPerTenant(t *testing.T) {
	f := newFixtureWith(t, func(o *Options) { o.MaxStreamsPerTenant = 2 })
	const follow = "/containerLogs/web/frontend/app?follow=true"
	cancel1, done1 := f.openStream(t, f.certA)
	_, _ = f.openStream(t, f.certA)
	waitFor(t, "two open streams of tenant-a, both at the super apiserver", func() bool {
		return f.srv.OpenStreams("tenant-a") == 2 && len(f.seen()) == 2
	})

	refused := metrics.KubeletRequests("tenant-a", EndpointContainerLogs, reasonTooManyStreams)
	forwarded := len(f.seen())
	for _, target := range []string{follow, "/containerLogs/web/frontend/app", "/exec/web/frontend/app?command=ls&output=1"} {
		w := f.do(target, f.certA, nil)
		if w.Code != http.StatusTooManyRequests || !strings.Contains(w.Body.String(), "2 open streams") {
			t.Errorf("%s past the limit: code %d body %q, want 429 naming the limit", target, w.Code, w.Body.String())
		}
	}
	if d := metrics.KubeletRequests("tenant-a", EndpointContainerLogs, reasonTooManyStreams) - refused; d != 2 {
		t.Errorf("requests_total{result=%q} rose by %v for logs, want 2", reasonTooManyStreams, d)
	}
	if n := len(f.seen()) - forwarded; n != 0 {
		t.Errorf("forwarded %d requests past the limit, want none", n)
	}

	// Another tenant has a limit of its own.
	if w := f.do("/containerLogs/web/frontend/app", f.certB, nil); w.Code != http.StatusOK {
		t.Errorf("tenant-b while tenant-a is at its limit: code %d body %q", w.Code, w.Body.String())
	}

	// A closed stream frees its place.
	cancel1()
	if !closedWithin(done1, 10*time.Second) {
		t.Fatal("a cancelled stream was still served after 10s")
	}
	if w := f.do("/containerLogs/web/frontend/app", f.certA, nil); w.Code != http.StatusOK {
		t.Errorf("after one stream closed: code %d body %q", w.Code, w.Body.String())
	}
	if n := f.srv.OpenStreams("tenant-a"); n != 1 {
		t.Errorf("open streams %d, want 1", n)
	}
}

func TestStreamLimitDefault(t *testing.T) {
	f := newFixture(t)
	if got := f.srv.opts.MaxStreamsPerTenant; got != DefaultMaxStreamsPerTenant || got < 1 {
		t.Errorf("MaxStreamsPerTenant defaults to %d, want %d", got, DefaultMaxStreamsPerTenant)
	}
}

func TestStreamsRevoked(t *testing.T) {
	cases := map[string]struct {
		change     func(f *fixture)
		wantReason string
		wantRise   float64 // streams revoked; default 1 (tenant-a's)
	}{
		"tenant removed":               {change: func(f *fixture) { f.tenants = f.tenants[1:] }, wantReason: RevokedTenantRemoved},
		"tenant re-created, same name": {change: func(f *fixture) { f.tenants[0].UID = "tuid-a-2" }, wantReason: RevokedTenantRemoved},
		"kubeletClientCA changed":      {change: func(f *fixture) { f.tenants[0].ClientCAs = f.caX.pool }, wantReason: RevokedCredentialsChanged},
		"kubeletClientCA removed":      {change: func(f *fixture) { f.tenants[0].ClientCAs = nil }, wantReason: RevokedCredentialsChanged},
		// Both: tenant-a's certificate names two tenants, tenant-b's none.
		"another tenant trusts the CA": {change: func(f *fixture) { f.tenants[1].ClientCAs = f.caA.pool }, wantReason: RevokedCredentialsChanged, wantRise: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			_, doneA := f.openStream(t, f.certA)
			_, doneB := f.openStream(t, f.certB)
			waitFor(t, "one open stream per tenant", func() bool {
				return f.srv.OpenStreams("tenant-a") == 1 && f.srv.OpenStreams("tenant-b") == 1
			})
			before := metrics.KubeletStreamsRevokedCount(tc.wantReason)
			tc.change(f)
			f.srv.revalidate()
			if !closedWithin(doneA, 10*time.Second) {
				t.Fatal("tenant-a's stream still open 10s after revalidation")
			}
			want := tc.wantRise
			if want == 0 {
				want = 1
			}
			if d := metrics.KubeletStreamsRevokedCount(tc.wantReason) - before; d != want {
				t.Errorf("streams_revoked_total{reason=%q} rose by %v, want %v", tc.wantReason, d, want)
			}
			if want == 1 && closedWithin(doneB, 0) {
				t.Error("tenant-b's stream was closed too")
			}
			// Revalidating again closes nothing more (no stream counted twice).
			f.srv.revalidate()
			if d := metrics.KubeletStreamsRevokedCount(tc.wantReason) - before; d != want {
				t.Errorf("after a second revalidation streams_revoked_total{reason=%q} rose by %v, want %v", tc.wantReason, d, want)
			}
		})
	}
}

// serve starts f's server on a loopback listener of its own and returns its address.
func (f *fixture) serve(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// closedByServer reports whether the server closes conn (a read returns EOF or a reset)
// within d.
func closedByServer(conn net.Conn, d time.Duration) bool {
	_ = conn.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 4096)
	for {
		_, err := conn.Read(buf)
		if err == nil {
			continue
		}
		var ne net.Error
		return !errors.As(err, &ne) || !ne.Timeout()
	}
}

func TestServerTimeouts(t *testing.T) {
	f := newFixtureWith(t, func(o *Options) {
		o.IdleTimeout = 200 * time.Millisecond
		o.ReadHeaderTimeout = 200 * time.Millisecond
	})
	addr := f.serve(t)
	tlsDial := func(t *testing.T) *tls.Conn {
		t.Helper()
		//nolint:gosec // the test server's certificate is self-signed
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}

	t.Run("idle keep-alive connection", func(t *testing.T) {
		c := tlsDial(t)
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 512)
		n, err := c.Read(buf)
		if err != nil || !strings.Contains(string(buf[:n]), "200 OK") {
			t.Fatalf("healthz: %q %v", buf[:n], err)
		}
		if !closedByServer(c, 5*time.Second) {
			t.Error("an idle keep-alive connection was kept 5s (IdleTimeout 200ms)")
		}
	})
	t.Run("no request headers", func(t *testing.T) {
		c := tlsDial(t)
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\n"); err != nil { // and nothing more
			t.Fatal(err)
		}
		if !closedByServer(c, 5*time.Second) {
			t.Error("a connection that never finished its headers was kept 5s (ReadHeaderTimeout 200ms)")
		}
	})
	t.Run("no TLS handshake", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if !closedByServer(c, 5*time.Second) {
			t.Error("a connection without a TLS handshake was kept 5s (ReadHeaderTimeout 200ms)")
		}
	})
}

func TestServerTimeoutDefaults(t *testing.T) {
	f := newFixture(t)
	if f.srv.opts.IdleTimeout <= 0 || f.srv.opts.ReadHeaderTimeout <= 0 || f.srv.opts.RevalidateInterval <= 0 {
		t.Errorf("timeouts default to IdleTimeout %v ReadHeaderTimeout %v RevalidateInterval %v, want all > 0",
			f.srv.opts.IdleTimeout, f.srv.opts.ReadHeaderTimeout, f.srv.opts.RevalidateInterval)
	}
}

// A tenant's TenantPolicy kubelet.maxStreams bounds its streams below the server's limit; it
// never raises it, and another tenant keeps the server's.
func TestStreamLimitFromPolicy(t *testing.T) {
	f := newFixtureWith(t, func(o *Options) { o.MaxStreamsPerTenant = 3 })
	f.tenants[0].MaxStreams = 1
	f.tenants[1].MaxStreams = 100 // above the server's: capped at 3
	_, _ = f.openStream(t, f.certA)
	waitFor(t, "one open stream of tenant-a", func() bool { return f.srv.OpenStreams("tenant-a") == 1 })
	if w := f.do("/containerLogs/web/frontend/app", f.certA, nil); w.Code != http.StatusTooManyRequests || !strings.Contains(w.Body.String(), "kubelet.maxStreams") {
		t.Errorf("tenant-a past its policy's limit of 1: code %d body %q, want 429 naming kubelet.maxStreams", w.Code, w.Body.String())
	}
	for range 3 {
		_, _ = f.openStream(t, f.certB)
	}
	waitFor(t, "three open streams of tenant-b", func() bool { return f.srv.OpenStreams("tenant-b") == 3 })
	if w := f.do("/containerLogs/web/frontend/app", f.certB, nil); w.Code != http.StatusTooManyRequests {
		t.Errorf("tenant-b whose policy asks for 100 streams, at the server's limit of 3: code %d, want 429", w.Code)
	}
}
