package itest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"time"
)

// WebhookServer serves an admission webhook handler over HTTPS on a free port of 127.0.0.1
// (the tenant apiservers of the tests and benchmarks run on this machine), with a self-signed
// CA of its own, so a tenant's ValidatingWebhookConfiguration can name it by URL and CABundle.
type WebhookServer struct {
	// CAPEM is the PEM-encoded CA certificate that signed the serving certificate: the
	// CABundle of a webhook configuration naming URL.
	CAPEM []byte
	// URL is https://127.0.0.1:<port>/validate.
	URL string
	srv *http.Server
}

// StartWebhookServer generates a CA and a serving certificate for 127.0.0.1 signed by it
// (ECDSA P-256, valid for a day) and serves h on a free port of 127.0.0.1 until Close. It
// returns an error when a key, a certificate or the listener cannot be made.
func StartWebhookServer(h http.HandlerFunc) (*WebhookServer, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "vc-syncer test webhook CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, IsCA: true, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	w := &WebhookServer{
		CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		URL:   "https://" + ln.Addr().String() + "/validate",
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second,
			TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{{
				Certificate: [][]byte{der}, PrivateKey: key,
			}}},
		},
	}
	go func() { _ = w.srv.ServeTLS(ln, "", "") }()
	return w, nil
}

// Close stops the server.
func (w *WebhookServer) Close() { _ = w.srv.Close() }
