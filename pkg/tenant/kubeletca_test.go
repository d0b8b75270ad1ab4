package tenant

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

func testCertPEM(t *testing.T, isCA bool) string {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "c"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), BasicConstraintsValid: true, IsCA: isCA}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestSetKubeletClientCA(t *testing.T) {
	ca := testCertPEM(t, true)
	cases := map[string]struct {
		data     string
		wantPool bool
		wantErr  string
	}{
		"none":              {},
		"one CA":            {data: ca, wantPool: true},
		"two CAs":           {data: ca + "\n" + testCertPEM(t, true), wantPool: true},
		"leaf, not a CA":    {data: testCertPEM(t, false), wantErr: "not a CA"},
		"private key block": {data: ca + "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n", wantErr: "want CERTIFICATE"},
		"trailing garbage":  {data: ca + "garbage", wantErr: "not a PEM bundle"},
		"no PEM at all":     {data: "garbage", wantErr: "not a PEM bundle"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &Cluster{}
			_ = c.SetKubeletClientCA(ca) // an earlier valid value must not survive an invalid one
			err := c.SetKubeletClientCA(tc.data)
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) || tc.wantErr == "" && err != nil {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
			if got := c.KubeletClientCAs() != nil; got != tc.wantPool {
				t.Errorf("pool set %v, want %v", got, tc.wantPool)
			}
		})
	}
}
