package app

import (
	"testing"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
)

func TestMetricsServerOptions(t *testing.T) {
	o := options.NewOptions()
	mo := metricsServerOptions(o)
	if !mo.SecureServing || mo.FilterProvider == nil || mo.BindAddress != ":8080" {
		t.Errorf("defaults: secure %t, filter %t, address %q; want HTTPS with the authn/authz filter on :8080",
			mo.SecureServing, mo.FilterProvider != nil, mo.BindAddress)
	}
	o.MetricsCertDir = "/certs"
	if mo := metricsServerOptions(o); mo.CertDir != "/certs" {
		t.Errorf("CertDir %q", mo.CertDir)
	}
	o.MetricsSecure, o.MetricsCertDir = false, ""
	if mo := metricsServerOptions(o); mo.SecureServing || mo.FilterProvider != nil {
		t.Errorf("--metrics-secure=false: secure %t, filter %t; want plain HTTP", mo.SecureServing, mo.FilterProvider != nil)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:8080": true, "localhost:8080": true,
		":8080": false, "0.0.0.0:8080": false, "10.0.0.1:8080": false, "bad": false,
	} {
		if got := isLoopback(addr); got != want {
			t.Errorf("isLoopback(%q) = %t, want %t", addr, got, want)
		}
	}
}
