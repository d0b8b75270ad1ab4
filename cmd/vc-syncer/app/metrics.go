package app

import (
	"net"

	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
)

// metricsServerOptions returns the options of the manager's metrics server, which serves
// /metrics and the status page (addStatusPage registers it as extra handlers, which
// controller-runtime wraps in the same filter as /metrics).
//
// With o.MetricsSecure the server speaks HTTPS (the certificate of o.MetricsCertDir, else a
// self-signed one for localhost made in memory) and every request goes through
// filters.WithAuthenticationAndAuthorization: its bearer token is checked with a TokenReview
// (401 when it is missing or not valid) and the user is checked with a SubjectAccessReview for
// verb get (the lower-cased HTTP method) on the request path as a non-resource URL (403 when
// not allowed). Both reviews are created with the syncer's own super-cluster credentials, which
// need create on tokenreviews and subjectaccessreviews; results are cached (authentication
// 1 min, allowed 5 min, denied 30 s). Without o.MetricsSecure it is plain HTTP for everyone.
func metricsServerOptions(o *options.Options) metricsserver.Options {
	mo := metricsserver.Options{BindAddress: o.MetricsBindAddress}
	if o.MetricsSecure {
		mo.SecureServing = true
		mo.FilterProvider = filters.WithAuthenticationAndAuthorization
		mo.CertDir = o.MetricsCertDir
	}
	return mo
}

// isLoopback reports whether bind address addr (host:port) listens on loopback only.
// An empty host listens on every interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
