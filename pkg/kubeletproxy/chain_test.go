package kubeletproxy

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vcsyncer/syncer/pkg/metrics"
)

// A client certificate sent with more intermediates than a tenant's chain needs is refused
// before any tenant's CA is tried: each intermediate costs signature checks against every
// Tenant's CA, so a long junk chain (150 intermediates: seconds of CPU per request with 20
// Tenants) would let anyone who reaches the port spend the syncer's CPU without a
// certificate, and slow the re-checks of every open stream. A valid tenant certificate sent
// with a long chain is refused the same way.
func TestLongCertificateChainRefusedBeforeVerify(t *testing.T) {
	f := newFixture(t)
	leaf := f.caA.client(t, x509.ExtKeyUsageClientAuth)
	chain := []*x509.Certificate{leaf}
	for range maxIntermediates + 1 {
		chain = append(chain, f.caX.cert)
	}
	before := metrics.KubeletUnauthenticatedCount(reasonLongChain)
	r := httptest.NewRequest(http.MethodGet, "/containerLogs/web/frontend/app", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: chain}
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, r)
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("a leaf with %d intermediates: %d, want 401", len(chain)-1, w.Code)
	}
	if d := metrics.KubeletUnauthenticatedCount(reasonLongChain) - before; d != 1 {
		t.Fatalf("vcsyncer_kubelet_unauthenticated_total{reason=%q} rose by %v, want 1", reasonLongChain, d)
	}
	if n := len(f.seen()); n != 0 {
		t.Fatalf("%d requests forwarded", n)
	}
	// The same leaf with a short chain is served.
	r = httptest.NewRequest(http.MethodGet, "/containerLogs/web/frontend/app", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: chain[:maxIntermediates+1]}
	w = httptest.NewRecorder()
	f.srv.ServeHTTP(w, r)
	if w.Code == http.StatusUnauthorized {
		t.Fatalf("a leaf with %d intermediates: 401 %s, want it served", maxIntermediates, w.Body)
	}
}
