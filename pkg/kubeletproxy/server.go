package kubeletproxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
)

// Tenant is what the server knows of one registered tenant.
type Tenant struct {
	// Name and UID of the Tenant object.
	Name, UID string
	// ClientCAs verifies the tenant apiserver's kubelet client certificate (Tenant
	// spec.kubeletClientCA); nil: no certificate names this tenant.
	ClientCAs *x509.CertPool
	// Synced reports whether the tenant's caches have synced (requests wait for nothing:
	// they are refused with 503 before).
	Synced bool
	// Pod returns the tenant Pod namespace/name from the syncer's tenant cache, or a NotFound
	// error.
	Pod func(namespace, name string) (*corev1.Pod, error)
	// Pods lists the tenant's Pods from the syncer's tenant cache (stats/summary and
	// metrics/resource report those on the asked Node); nil: the tenant has none to report.
	Pods func() ([]*corev1.Pod, error)
	// Forbidden lists the endpoints (EndpointExec, EndpointAttach, EndpointPortForward) the
	// tenant's TenantPolicy switches off (kubelet.allowExec, allowAttach, allowPortForward):
	// refused with 403 before anything is looked up.
	Forbidden []string
	// MaxStreams bounds the tenant's open streams (TenantPolicy kubelet.maxStreams); 0:
	// Options.MaxStreamsPerTenant, which also caps it.
	MaxStreams int
}

// Tenants lists the registered tenants; it is called once per request.
type Tenants func() []Tenant

// Options configures a Server.
type Options struct {
	// Tenants lists the registered tenants (required).
	Tenants Tenants
	// SuperPod returns the super Pod namespace/name from the syncer's super cache (required).
	SuperPod func(namespace, name string) (metav1.Object, bool)
	// Super is the syncer's super-cluster rest.Config: requests are forwarded with its
	// credentials to the super apiserver's Pod subresources (required).
	Super *rest.Config
	// BindAddress is the host:port to listen on (Start). Required for Start.
	BindAddress string
	// CertFile and KeyFile are the PEM serving certificate and key. Both empty: a self-signed
	// certificate for the advertised address is generated at Start (tenant apiservers verify
	// it only with --kubelet-certificate-authority, which this one cannot satisfy).
	CertFile, KeyFile string
	// AdvertisedHost is the address the vNodes advertise, put in a generated certificate.
	AdvertisedHost string
	// MaxStreamsPerTenant bounds the requests forwarded for one tenant at a time (logs,
	// exec, attach and port-forward streams); one past it is answered 429. Defaults to
	// DefaultMaxStreamsPerTenant.
	MaxStreamsPerTenant int
	// IdleTimeout closes a keep-alive connection idle this long. Defaults to 90s.
	IdleTimeout time.Duration
	// ReadHeaderTimeout closes a connection that has not completed its TLS handshake and
	// request headers this long after it opened. Defaults to 10s.
	ReadHeaderTimeout time.Duration
	// NodeStats turns on stats/summary and metrics/resource (answered 404, reason
	// node_stats_off, without it). They read the super Nodes' resource metrics through the
	// super apiserver's nodes/<node>/proxy, which needs RBAC nodes/proxy get: that grant also
	// lets the syncer's credentials call any super kubelet's own API directly, exec over a
	// WebSocket GET included (a kubelet authorizes every path but stats, metrics and logs as
	// nodes/proxy), so it is an opt-in of the provider's.
	NodeStats bool
	// SuperMetricsPath is the path, on the super Node's kubelet, of its resource metrics
	// (Prometheus text), read through the super apiserver's nodes/<node>/proxy for
	// stats/summary and metrics/resource; "{nodeName}" in it is replaced by the Node's
	// name. Defaults to DefaultSuperMetricsPath, a kubelet's; kwok serves them at
	// "/metrics/nodes/{nodeName}/metrics/resource".
	SuperMetricsPath string
	// SuperMetricsURL, when set, is read instead of nodes/<node>/proxy<SuperMetricsPath>: an
	// https URL of a super Node's resource metrics ("{nodeName}" replaced), dialled directly
	// with the TLS settings of Super (its CA and client certificate, never its token). For
	// super clusters whose kubelets listen on loopback, which kube-apiserver refuses to proxy
	// to ("address not allowed"): the local super cluster's kwok (localcluster.KwokMetricsURL).
	SuperMetricsURL string
	// RevalidateInterval is how often open streams are checked against the current Tenants:
	// a stream whose client certificate no longer names its tenant (Tenant removed,
	// spec.kubeletClientCA changed) is closed. Defaults to 2s.
	RevalidateInterval time.Duration
}

// DefaultMaxStreamsPerTenant is the default of Options.MaxStreamsPerTenant.
const DefaultMaxStreamsPerTenant = 32

// Reasons of vcsyncer_kubelet_streams_revoked_total.
const (
	// RevokedTenantRemoved: no Tenant of the stream's tenant name and UID is registered now.
	RevokedTenantRemoved = "tenant_removed"
	// RevokedCredentialsChanged: the stream's client certificate no longer names its tenant
	// alone (its spec.kubeletClientCA changed, or another Tenant's CA verifies it too).
	RevokedCredentialsChanged = "credentials_changed"
)

// Server is the kubelet API of the tenants' virtual Nodes: it attributes each request to one
// tenant by its TLS client certificate, checks that it names one of that tenant's synced Pods
// and a container the Pod declares, and forwards it to the super apiserver's Pod subresource.
type Server struct {
	opts      Options
	nodeReads nodeReads // one read of a super Node's resource metrics at a time, shared
	superURL  *url.URL
	transport http.RoundTripper
	direct    http.RoundTripper // SuperMetricsURL: TLS of Super, no token
	upgrade   proxy.UpgradeRequestRoundTripper
	log       logr.Logger
	streams   streams
}

// New returns a Server. It fails when a required option is missing or the super config
// cannot build transports.
func New(o Options) (*Server, error) {
	if o.Tenants == nil || o.SuperPod == nil || o.Super == nil {
		return nil, errors.New("kubeletproxy: Tenants, SuperPod and Super are required")
	}
	if o.MaxStreamsPerTenant <= 0 {
		o.MaxStreamsPerTenant = DefaultMaxStreamsPerTenant
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 90 * time.Second
	}
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = 10 * time.Second
	}
	if o.SuperMetricsPath == "" {
		o.SuperMetricsPath = DefaultSuperMetricsPath
	}
	if err := ValidateSuperMetricsPath(o.SuperMetricsPath); err != nil {
		return nil, err
	}
	if err := ValidateSuperMetricsURL(o.SuperMetricsURL); err != nil {
		return nil, err
	}
	if o.RevalidateInterval <= 0 {
		o.RevalidateInterval = 2 * time.Second
	}
	cfg := rest.CopyConfig(o.Super)
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Host == "" {
		if u, err = url.Parse("https://" + cfg.Host); err != nil {
			return nil, fmt.Errorf("kubeletproxy: invalid super host %q: %w", cfg.Host, err)
		}
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeletproxy: failed to build the super transport: %w", err)
	}
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeletproxy: failed to build the super TLS config: %w", err)
	}
	// Upgrades (exec, attach, port-forward) dial the super apiserver themselves: TLS from
	// the config (client certificate included), then the config's other credentials (a
	// bearer token) added to the upgrade request.
	wrap, err := rest.HTTPWrappersForConfig(cfg, proxy.MirrorRequest)
	if err != nil {
		return nil, fmt.Errorf("kubeletproxy: failed to build the super request wrappers: %w", err)
	}
	conn := &http.Transport{TLSClientConfig: tlsCfg, Proxy: http.ProxyFromEnvironment}
	return &Server{opts: o, superURL: u, transport: rt, upgrade: proxy.NewUpgradeRequestRoundTripper(conn, wrap),
		direct: &http.Transport{TLSClientConfig: tlsCfg.Clone(), ResponseHeaderTimeout: superMetricsTimeout},
		log:    ctrl.Log.WithName("kubeletproxy"), streams: streams{byTenant: map[string]map[*stream]struct{}{}}}, nil
}

// Start serves the kubelet API on BindAddress over TLS until ctx is done. It implements
// manager.Runnable.
func (s *Server) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.opts.BindAddress)
	if err != nil {
		return fmt.Errorf("kubeletproxy: failed to listen on %s: %w", s.opts.BindAddress, err)
	}
	return s.serve(ctx, ln)
}

// serve serves the kubelet API on ln until ctx is done.
func (s *Server) serve(ctx context.Context, ln net.Listener) error {
	cert, err := s.servingCertificate()
	if err != nil {
		_ = ln.Close()
		return err
	}
	srv := &http.Server{
		Handler: s,
		// Bounds the TLS handshake and the request headers; an upgraded stream (hijacked)
		// and a log stream are bounded by the per-tenant limit and end with their tenant.
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		TLSConfig: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			Certificates: []tls.Certificate{cert},
			// Every tenant has a CA of its own: the handler verifies the chain against each
			// (attribute), so the handshake only asks for a certificate.
			ClientAuth: tls.RequestClientCert,
			NextProtos: []string{"http/1.1"}, // upgrades (SPDY, WebSocket) need HTTP/1.1
		},
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeTLS(ln, "", "") }()
	s.log.Info("Serving the kubelet API of the virtual Nodes", "address", ln.Addr().String(),
		"maxStreamsPerTenant", s.opts.MaxStreamsPerTenant)
	tick := time.NewTicker(s.opts.RevalidateInterval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			s.revalidate()
		case <-ctx.Done():
			s.endAll() // streams (logs -f, exec) do not end by themselves; Close skips hijacked ones
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
			_ = srv.Close()
			return nil
		case err := <-done:
			s.endAll()
			return fmt.Errorf("kubeletproxy: %w", err)
		}
	}
}

// NeedLeaderElection reports false: every replica serves the kubelet API.
func (s *Server) NeedLeaderElection() bool { return false }

// ServeHTTP answers one kubelet API request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" {
		_, _ = w.Write([]byte("ok"))
		return
	}
	t, reason := s.authenticate(r)
	if t == nil {
		metrics.KubeletUnauthenticated(reason)
		http.Error(w, "Unauthorized: the client certificate names no single tenant", http.StatusUnauthorized)
		return
	}
	if ep, ok := statsEndpoints[r.URL.EscapedPath()]; ok {
		if !s.opts.NodeStats {
			metrics.KubeletRequest(t.Name, ep, reasonNodeStatsOff)
			http.Error(w, "Not Found: this syncer serves no node stats (vc-syncer run --kubelet-node-stats)", http.StatusNotFound)
			return
		}
		s.serveStats(w, r, t, ep)
		return
	}
	tgt, ok := parseTarget(r.URL.EscapedPath())
	if !ok {
		metrics.KubeletRequest(t.Name, "other", reasonBadPath)
		http.NotFound(w, r)
		return
	}
	if !methodAllowed(tgt.endpoint, r.Method) {
		metrics.KubeletRequest(t.Name, tgt.endpoint, reasonBadMethod)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if slices.Contains(t.Forbidden, tgt.endpoint) {
		metrics.KubeletRequest(t.Name, tgt.endpoint, reasonPolicyForbidden)
		http.Error(w, fmt.Sprintf("Forbidden: the TenantPolicy of tenant %s switches %s off (%s: false); ask the provider of the virtual cluster",
			t.Name, tgt.endpoint, policyField[tgt.endpoint]), http.StatusForbidden)
		return
	}
	if tgt.endpoint == EndpointContainerLogs || tgt.endpoint == EndpointPortForward {
		check := checkLogQuery
		if tgt.endpoint == EndpointPortForward {
			check = func(q url.Values) error { _, err := portList(q); return err }
		}
		if err := check(r.URL.Query()); err != nil {
			metrics.KubeletRequest(t.Name, tgt.endpoint, reasonBadQuery)
			http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	superNS, code, reason := s.check(t, tgt)
	if code != 0 {
		metrics.KubeletRequest(t.Name, tgt.endpoint, reason)
		http.Error(w, fmt.Sprintf("%s: %s", http.StatusText(code), reason), code)
		return
	}
	st, ctx, open, ok := s.acquire(t, r)
	if !ok {
		metrics.KubeletRequest(t.Name, tgt.endpoint, reasonTooManyStreams)
		http.Error(w, fmt.Sprintf("Too Many Requests: tenant %s has %d open streams through the kubelet API (logs, exec, attach, port-forward), its limit (TenantPolicy kubelet.maxStreams, or the syncer's --kubelet-max-streams-per-tenant); close one and retry",
			t.Name, open), http.StatusTooManyRequests)
		return
	}
	defer s.release(st)
	metrics.KubeletRequest(t.Name, tgt.endpoint, resultForwarded)
	s.forward(streamWriter{ResponseWriter: w, st: st,
		toTenant:   metrics.KubeletBytes(t.Name, tgt.endpoint, metrics.KubeletToTenant),
		fromTenant: metrics.KubeletBytes(t.Name, tgt.endpoint, metrics.KubeletFromTenant)},
		r.WithContext(ctx), tgt, superNS)
}

// authenticate returns the one tenant whose ClientCAs verify the request's client
// certificate, or nil and why not.
func (s *Server) authenticate(r *http.Request) (*Tenant, string) {
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 1+maxIntermediates {
		return nil, reasonLongChain
	}
	leaf, inter := peerChain(r)
	if leaf == nil {
		return nil, "no_certificate"
	}
	return identify(leaf, inter, s.opts.Tenants())
}

// maxIntermediates is the most intermediate certificates a client may send with its
// certificate. A tenant apiserver's kubelet client certificate is signed by the tenant's CA
// or one intermediate below it; each intermediate sent costs signature checks against every
// Tenant's CA (crypto/x509 tries up to 100 per verification), so a long chain of junk would
// let anyone who reaches the port spend the syncer's CPU before its 401, and slow the
// periodic re-check of every open stream. Longer chains are refused (reasonLongChain) before
// any verification.
const maxIntermediates = 3

// reasonLongChain is the unauthenticated reason of a client certificate sent with more than
// maxIntermediates intermediates.
const reasonLongChain = "too_many_certificates"

// peerChain returns the client certificate of r and the intermediates sent with it (nil: no
// certificate).
func peerChain(r *http.Request) (*x509.Certificate, *x509.CertPool) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, nil
	}
	inter := x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	return r.TLS.PeerCertificates[0], inter
}

// identify returns the one tenant of tenants whose ClientCAs verify leaf (client-auth usage),
// or nil and why not.
func identify(leaf *x509.Certificate, inter *x509.CertPool, tenants []Tenant) (*Tenant, string) {
	var found *Tenant
	for _, t := range tenants {
		if t.ClientCAs == nil {
			continue
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: t.ClientCAs, Intermediates: inter,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			continue
		}
		if found != nil {
			return nil, "ambiguous_certificate" // two tenants trust the same CA: neither is served
		}
		found = &t
	}
	if found == nil {
		return nil, "unknown_certificate"
	}
	return found, ""
}

// check decides whether tenant t may reach tgt: the tenant's caches synced, the tenant Pod
// exists and declares the container, and the super Pod at the place the namespace maps to is
// the syncer's copy of exactly that Pod (same tenant UID, namespace, name and Pod UID). It
// returns the super namespace, or an HTTP status and a reason.
func (s *Server) check(t *Tenant, tgt target) (superNS string, code int, reason string) {
	if !t.Synced {
		return "", http.StatusServiceUnavailable, reasonNotConnected
	}
	pod, err := t.Pod(tgt.namespace, tgt.pod)
	if apierrors.IsNotFound(err) || err == nil && pod == nil {
		return "", http.StatusNotFound, reasonNotFound
	} else if err != nil {
		return "", http.StatusServiceUnavailable, reasonNotConnected
	}
	if tgt.container != "" && !declares(pod, tgt.container) {
		return "", http.StatusNotFound, reasonNoContainer
	}
	superNS = conversion.SuperNamespace(t.Name, t.UID, tgt.namespace)
	sp, ok := s.opts.SuperPod(superNS, tgt.pod)
	if !ok {
		return "", http.StatusNotFound, reasonNotSynced
	}
	if !isCopyOf(sp, t, tgt.namespace, tgt.pod, pod.UID) {
		return "", http.StatusForbidden, reasonNotOwned
	}
	return superNS, 0, ""
}

// isCopyOf reports whether super Pod sp is the syncer's copy of tenant t's Pod
// namespace/name of UID uid: its ownership stamps name exactly these.
func isCopyOf(sp metav1.Object, t *Tenant, namespace, name string, uid types.UID) bool {
	o, ok := conversion.OwnerOf(sp)
	return ok && o.TenantUID == t.UID && o.Namespace == namespace && o.Name == name && o.UID == string(uid)
}

// declares reports whether pod declares container name (containers and init containers;
// ephemeral containers are never synced).
func declares(pod *corev1.Pod, name string) bool {
	has := func(c corev1.Container) bool { return c.Name == name }
	return slices.ContainsFunc(pod.Spec.Containers, has) || slices.ContainsFunc(pod.Spec.InitContainers, has)
}

// forward sends the request to the super apiserver's subresource of the super Pod with the
// syncer's credentials: a fresh URL (the checked names, the allowlisted query) and only the
// headers a stream upgrade needs.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, tgt target, superNS string) {
	loc := *s.superURL
	loc.Path = strings.TrimSuffix(loc.Path, "/") + "/api/v1/namespaces/" + superNS + "/pods/" + tgt.pod + "/" + subresource[tgt.endpoint]
	loc.RawPath = ""
	loc.RawQuery = forwardQuery(r.URL.Query(), tgt).Encode()

	out := r.Clone(r.Context())
	out.Header = http.Header{}
	for _, h := range forwardedHeaders {
		if v, ok := r.Header[http.CanonicalHeaderKey(h)]; ok {
			out.Header[http.CanonicalHeaderKey(h)] = slices.Clone(v)
		}
	}
	out.URL = &loc
	out.RequestURI = ""
	out.Host = loc.Host
	if tgt.endpoint == EndpointContainerLogs {
		// A log read is a plain GET: none of the upgrade headers.
		out.Header = http.Header{}
		if v := r.Header.Values("Accept"); len(v) > 0 {
			out.Header["Accept"] = slices.Clone(v)
		}
		out.Method, out.Body, out.ContentLength = http.MethodGet, http.NoBody, 0
		s.forwardRead(w, out)
		return
	}
	out.Body = http.NoBody

	h := proxy.NewUpgradeAwareHandler(&loc, s.transport, false, false, responder{log: s.log})
	h.UpgradeTransport = s.upgrade
	h.UseLocationHost = true
	h.FlushInterval = -1 // logs -f: every chunk as it comes
	h.RejectForwardingRedirects = true
	h.ServeHTTP(w, out)
}

// forwardQuery returns the allowlisted parameters of q under their apiserver names, plus the
// container.
func forwardQuery(q url.Values, tgt target) url.Values {
	out := url.Values{}
	if tgt.endpoint == EndpointPortForward {
		if ports, err := portList(q); err == nil && len(ports) > 0 {
			out["ports"] = ports
		}
		return out
	}
	for k, vs := range q {
		name, ok := queryAllowlist[tgt.endpoint][k]
		if !ok {
			continue
		}
		if boolParams[name] {
			b, err := strconv.ParseBool(vs[0])
			out.Set(name, strconv.FormatBool(err == nil && b))
			continue
		}
		out[name] = append(out[name], vs...)
	}
	if tgt.container != "" {
		out.Set("container", tgt.container)
	}
	return out
}

// responder answers a failed forward with 502 and logs it.
type responder struct{ log logr.Logger }

func (r responder) Error(w http.ResponseWriter, req *http.Request, err error) {
	r.log.V(2).Info("Forwarding a kubelet request failed", "path", req.URL.Path, "err", err.Error())
	http.Error(w, "failed to reach the super cluster", http.StatusBadGateway)
}
