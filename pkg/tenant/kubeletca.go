package tenant

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// ParseCABundle parses a PEM bundle of CA certificates (Tenant spec.kubeletClientCA). Every
// PEM block must be a CERTIFICATE of a CA (basic constraints CA:true); an empty bundle, any
// other block or trailing garbage is an error.
func ParseCABundle(data []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	n := 0
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			if len(bytes.TrimSpace(rest)) > 0 {
				return nil, errors.New("not a PEM bundle of certificates")
			}
			break
		}
		if b.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("unexpected PEM block %q: want CERTIFICATE", b.Type)
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("invalid certificate: %w", err)
		}
		if !cert.IsCA {
			return nil, fmt.Errorf("certificate %q is not a CA", cert.Subject.CommonName)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, errors.New("no certificate in the CA bundle")
	}
	return pool, nil
}

// SetKubeletClientCA records the CA bundle that signs the tenant apiserver's kubelet client
// certificate (Tenant spec.kubeletClientCA). An empty or invalid bundle leaves none: the
// kubelet API then attributes no request to this tenant. The error names what is invalid.
func (c *Cluster) SetKubeletClientCA(data string) error {
	if data == "" {
		c.kubeletCA.Store(nil)
		return nil
	}
	pool, err := ParseCABundle([]byte(data))
	if err != nil {
		c.kubeletCA.Store(nil)
		return fmt.Errorf("spec.kubeletClientCA: %w", err)
	}
	c.kubeletCA.Store(pool)
	return nil
}

// KubeletClientCAs returns the pool of spec.kubeletClientCA, or nil when the Tenant has none
// (or an invalid one). The result must not be modified.
func (c *Cluster) KubeletClientCAs() *x509.CertPool { return c.kubeletCA.Load() }
