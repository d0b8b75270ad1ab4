package localcluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Files of the PKI directory of one control plane (Dir/pki).
const (
	caCertFile      = "ca.crt"
	caKeyFile       = "ca.key"
	servingCertFile = "apiserver.crt"
	servingKeyFile  = "apiserver.key"
	adminCertFile   = "admin.crt"
	adminKeyFile    = "admin.key"
	saKeyFile       = "sa.key"
	saPubFile       = "sa.pub"
	// The kubelet client CA signs only the kube-apiserver's kubelet client certificate
	// (--kubelet-client-certificate), never a user: a certificate that verifies against it was
	// presented by this control plane's apiserver (or by whoever holds its key).
	kubeletClientCAFile   = "kubelet-client-ca.crt"
	kubeletClientCertFile = "apiserver-kubelet-client.crt"
	kubeletClientKeyFile  = "apiserver-kubelet-client.key"
	kubeletClientUser     = "kube-apiserver-kubelet-client"
	// kubeletServingCertFile and kubeletServingKeyFile are the serving certificate of kwok's
	// kubelet API (super cluster only), for 127.0.0.1 and localhost, signed by ca.crt.
	kubeletServingCertFile = "kubelet-serving.crt"
	kubeletServingKeyFile  = "kubelet-serving.key"
	adminUser              = "admin"
	adminGroup             = "system:masters"
	certValidity           = 365 * 24 * time.Hour
	certClockSkewSlop      = time.Hour
)

// pki is the key material of one control plane, kept in memory (PEM) and written to dir.
type pki struct {
	dir                 string
	caPEM               []byte
	adminCert, adminKey []byte
	// kubeletClientCA, kubeletClientCert and kubeletClientKey: the kubelet client CA and the
	// apiserver's kubelet client certificate and key it signed (PEM).
	kubeletClientCA, kubeletClientCert, kubeletClientKey []byte
}

// path returns the absolute path of a PKI file.
func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

// generatePKI creates in dir: a self-signed CA (also used as the cluster signing CA of the
// kube-controller-manager), an apiserver serving certificate for 127.0.0.1, localhost,
// serviceIP and the in-cluster names of the kubernetes Service, an admin client certificate
// in group system:masters, and a service-account signing key pair. All keys are ECDSA P-256:
// kube-apiserver signs service-account tokens with ES256 and every component accepts EC keys.
func generatePKI(dir string, serviceIP net.IP) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("failed to create PKI dir: %w", err)
	}
	now := time.Now()
	caKey, err := newKey()
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "vc-syncer-test-ca"},
		NotBefore:             now.Add(-certClockSkewSlop),
		NotAfter:              now.Add(10 * certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, caCert, err := signCert(caTmpl, caKey, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("failed to create CA certificate: %w", err)
	}

	servingKey, err := newKey()
	if err != nil {
		return nil, err
	}
	servingDER, _, err := signCert(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:   now.Add(-certClockSkewSlop),
		NotAfter:    now.Add(certValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), serviceIP},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
	}, servingKey, caCert, caKey)
	if err != nil {
		return nil, fmt.Errorf("failed to create apiserver serving certificate: %w", err)
	}

	adminKey, err := newKey()
	if err != nil {
		return nil, err
	}
	adminDER, _, err := signCert(&x509.Certificate{
		Subject:     pkix.Name{CommonName: adminUser, Organization: []string{adminGroup}},
		NotBefore:   now.Add(-certClockSkewSlop),
		NotAfter:    now.Add(certValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, adminKey, caCert, caKey)
	if err != nil {
		return nil, fmt.Errorf("failed to create admin client certificate: %w", err)
	}

	saKey, err := newKey()
	if err != nil {
		return nil, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, fmt.Errorf("failed to encode service-account public key: %w", err)
	}

	kcaKey, err := newKey()
	if err != nil {
		return nil, err
	}
	kcaDER, kcaCert, err := signCert(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "vc-syncer-test-kubelet-client-ca"},
		NotBefore:             now.Add(-certClockSkewSlop),
		NotAfter:              now.Add(10 * certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, kcaKey, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("failed to create kubelet client CA: %w", err)
	}
	kclientKey, err := newKey()
	if err != nil {
		return nil, err
	}
	kclientDER, _, err := signCert(&x509.Certificate{
		Subject:     pkix.Name{CommonName: kubeletClientUser, Organization: []string{adminGroup}},
		NotBefore:   now.Add(-certClockSkewSlop),
		NotAfter:    now.Add(certValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, kclientKey, kcaCert, kcaKey)
	if err != nil {
		return nil, fmt.Errorf("failed to create kubelet client certificate: %w", err)
	}
	kservingKey, err := newKey()
	if err != nil {
		return nil, err
	}
	kservingDER, _, err := signCert(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kwok-kubelet"},
		NotBefore:   now.Add(-certClockSkewSlop),
		NotAfter:    now.Add(certValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:    []string{"localhost"},
	}, kservingKey, caCert, caKey)
	if err != nil {
		return nil, fmt.Errorf("failed to create kubelet serving certificate: %w", err)
	}

	p := &pki{dir: dir, caPEM: certPEM(caDER), adminCert: certPEM(adminDER),
		kubeletClientCA: certPEM(kcaDER), kubeletClientCert: certPEM(kclientDER)}
	if p.adminKey, err = keyPEM(adminKey); err != nil {
		return nil, err
	}
	if p.kubeletClientKey, err = keyPEM(kclientKey); err != nil {
		return nil, err
	}
	files := map[string][]byte{
		caCertFile:             p.caPEM,
		servingCertFile:        certPEM(servingDER),
		adminCertFile:          p.adminCert,
		adminKeyFile:           p.adminKey,
		saPubFile:              pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER}),
		kubeletClientCAFile:    p.kubeletClientCA,
		kubeletClientCertFile:  p.kubeletClientCert,
		kubeletClientKeyFile:   p.kubeletClientKey,
		kubeletServingCertFile: certPEM(kservingDER),
	}
	for name, key := range map[string]*ecdsa.PrivateKey{caKeyFile: caKey, servingKeyFile: servingKey, saKeyFile: saKey,
		kubeletServingKeyFile: kservingKey} {
		if files[name], err = keyPEM(key); err != nil {
			return nil, err
		}
	}
	for name, data := range files {
		if err := os.WriteFile(p.path(name), data, 0o600); err != nil {
			return nil, fmt.Errorf("failed to write %s: %w", name, err)
		}
	}
	return p, nil
}

// newKey returns a fresh ECDSA P-256 private key.
func newKey() (*ecdsa.PrivateKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("failed to generate ECDSA key: %w", err)
	}
	return k, nil
}

// signCert signs tmpl with parentKey (self-signed when parent is nil) and returns the DER
// bytes and the parsed certificate.
func signCert(tmpl *x509.Certificate, key crypto.Signer, parent *x509.Certificate, parentKey crypto.Signer) ([]byte, *x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return der, cert, err
}

func certPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func keyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("failed to encode ECDSA key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// adminTLSConfig returns a client TLS config that trusts the CA and presents the admin
// certificate; it is used to probe /readyz before any kubeconfig exists.
func (p *pki) adminTLSConfig() (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(p.caPEM) {
		return nil, fmt.Errorf("failed to parse CA certificate")
	}
	cert, err := tls.X509KeyPair(p.adminCert, p.adminKey)
	if err != nil {
		return nil, fmt.Errorf("failed to load admin certificate: %w", err)
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// adminKubeconfig serializes a self-contained admin kubeconfig (certificates embedded) for
// the apiserver at server, with cluster and context named name.
func (p *pki) adminKubeconfig(name, server string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: p.caPEM}
	cfg.AuthInfos[adminUser] = &clientcmdapi.AuthInfo{ClientCertificateData: p.adminCert, ClientKeyData: p.adminKey}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: adminUser}
	cfg.CurrentContext = name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to serialize kubeconfig: %w", err)
	}
	return data, nil
}
