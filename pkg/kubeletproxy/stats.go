package kubeletproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
)

// Endpoints of the kubelet API answered from the super Node's resource metrics.
const (
	// EndpointStatsSummary is /stats/summary (JSON, k8s.io/kubelet stats/v1alpha1 Summary).
	EndpointStatsSummary = "statsSummary"
	// EndpointMetricsResource is /metrics/resource (Prometheus text).
	EndpointMetricsResource = "metricsResource"
)

// statsEndpoints maps the escaped paths of the resource endpoints to their names.
var statsEndpoints = map[string]string{"/stats/summary": EndpointStatsSummary, "/metrics/resource": EndpointMetricsResource}

// DefaultSuperMetricsPath is the default of Options.SuperMetricsPath: a kubelet's resource
// metrics.
const DefaultSuperMetricsPath = "/metrics/resource"

// MaxSuperMetricsBytes bounds the super Node's resource metrics read for one request: a
// larger response is refused (502), never parsed.
const MaxSuperMetricsBytes = 4 << 20

// maxNodeReads bounds the reads of super Nodes' resource metrics in flight at once, over all
// tenants: each holds its body and the parsed families (several times the body) in memory.
const maxNodeReads = 4

// superMetricsTimeout bounds one read of a super Node's resource metrics.
const superMetricsTimeout = 30 * time.Second

// Refusal reasons of the resource endpoints.
const (
	// reasonNoNode: the request names no Node (the tenant apiserver's X-Forwarded-Uri of
	// nodes/<node>/proxy/...) or an invalid one (404).
	reasonNoNode = "node_not_named"
	// reasonSuperError: the super Node's resource metrics could not be read or parsed (502).
	reasonSuperError = "super_error"
	// reasonNodeStatsOff: the syncer runs without --kubelet-node-stats (404).
	reasonNodeStatsOff = "node_stats_off"
)

// ValidateSuperMetricsPath checks Options.SuperMetricsPath: an absolute path without a
// query, percent-encoding, backslash or "." and ".." segments.
func ValidateSuperMetricsPath(p string) error {
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "?#%\\ ") {
		return fmt.Errorf("kubeletproxy: super metrics path %q must be an absolute path without query, percent-encoding or spaces", p)
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("kubeletproxy: super metrics path %q has an empty, \".\" or \"..\" segment", p)
		}
	}
	return nil
}

// ValidateSuperMetricsURL checks Options.SuperMetricsURL: empty, or an https URL with a
// host, no user, query or fragment, and a path ValidateSuperMetricsPath accepts.
func ValidateSuperMetricsURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return fmt.Errorf("kubeletproxy: super metrics URL %q must be an https URL with a host and a path, without user, query or fragment", raw)
	}
	return ValidateSuperMetricsPath(u.Path)
}

// nodeOf returns the Node a resource request of the tenant apiserver is for: a kubelet
// request carries no node name, but an apiserver's nodes/<node>/proxy/<path> sets
// X-Forwarded-Uri to /api/v1/nodes/<node>/proxy/<path> (a tenant user cannot set it: the
// apiserver overwrites it; whoever holds the tenant's kubelet client key can, and only picks a
// Node with it: what is shown is filtered by ownership). ok is false unless the header is
// exactly that form for this request's path, and for a name that is not a DNS subdomain
// (such as <scheme>:<node>:<port>).
func nodeOf(r *http.Request) (string, bool) {
	rest, ok := strings.CutSuffix(r.Header.Get("X-Forwarded-Uri"), "/proxy"+r.URL.EscapedPath())
	if !ok {
		return "", false
	}
	node, ok := strings.CutPrefix(rest, "/api/v1/nodes/")
	if !ok {
		return "", false
	}
	if len(validation.IsDNS1123Subdomain(node)) > 0 {
		return "", false
	}
	return node, true
}

// serveStats answers /stats/summary and /metrics/resource for tenant t: the super Node's
// resource metrics, read through the super apiserver's nodes/<node>/proxy, reduced to t's own
// synced Pods on that Node under their tenant names (filterResourceMetrics).
func (s *Server) serveStats(w http.ResponseWriter, r *http.Request, t *Tenant, endpoint string) {
	if r.Method != http.MethodGet {
		metrics.KubeletRequest(t.Name, endpoint, reasonBadMethod)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	node, ok := nodeOf(r)
	if !ok {
		metrics.KubeletRequest(t.Name, endpoint, reasonNoNode)
		http.Error(w, "Not Found: ask through the tenant apiserver's nodes/<node>/proxy"+r.URL.EscapedPath()+", which names the virtual Node", http.StatusNotFound)
		return
	}
	if !t.Synced {
		metrics.KubeletRequest(t.Name, endpoint, reasonNotConnected)
		http.Error(w, "Service Unavailable: "+reasonNotConnected, http.StatusServiceUnavailable)
		return
	}
	pods, err := s.podsOn(t, node)
	if err != nil {
		metrics.KubeletRequest(t.Name, endpoint, reasonNotConnected)
		http.Error(w, "Service Unavailable: "+reasonNotConnected, http.StatusServiceUnavailable)
		return
	}
	st, ctx, open, ok := s.acquire(t, r)
	if !ok {
		metrics.KubeletRequest(t.Name, endpoint, reasonTooManyStreams)
		http.Error(w, fmt.Sprintf("Too Many Requests: tenant %s has %d open requests through the kubelet API, its limit; retry later", t.Name, open), http.StatusTooManyRequests)
		return
	}
	defer s.release(st)
	fams, err := s.superResourceMetrics(ctx, node, len(pods) > 0)
	if err != nil {
		metrics.KubeletRequest(t.Name, endpoint, reasonSuperError)
		s.log.V(1).Info("Reading the resource metrics of a super Node failed", "tenant", t.Name, "node", node, "err", err.Error())
		http.Error(w, "Bad Gateway: failed to read the resource metrics of the super Node", http.StatusBadGateway)
		return
	}
	kept := filterResourceMetrics(fams, pods)
	var body bytes.Buffer
	if endpoint == EndpointMetricsResource {
		for _, f := range kept {
			if _, err := expfmt.MetricFamilyToText(&body, f); err != nil {
				metrics.KubeletRequest(t.Name, endpoint, reasonSuperError)
				http.Error(w, "Bad Gateway: invalid resource metrics of the super Node", http.StatusBadGateway)
				return
			}
		}
		w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	} else {
		if err := json.NewEncoder(&body).Encode(summaryOf(node, kept, pods, time.Now())); err != nil {
			metrics.KubeletRequest(t.Name, endpoint, reasonSuperError)
			http.Error(w, "Bad Gateway: invalid resource metrics of the super Node", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
	}
	metrics.KubeletRequest(t.Name, endpoint, resultForwarded)
	n, _ := w.Write(body.Bytes())
	metrics.KubeletBytes(t.Name, endpoint, metrics.KubeletToTenant)(n)
}

// podsOn returns t's Pods on node that the syncer has synced, keyed by their super
// namespace/name: the tenant Pod's spec.nodeName is node (vNodes are named as the super
// Nodes) and the super Pod at the place its namespace maps to is the syncer's copy of it
// (isCopyOf, as for logs and exec).
func (s *Server) podsOn(t *Tenant, node string) (map[string]tenantPod, error) {
	out := map[string]tenantPod{}
	if t.Pods == nil {
		return out, nil
	}
	pods, err := t.Pods()
	if err != nil {
		return nil, err
	}
	for _, p := range pods {
		if p == nil || p.Spec.NodeName != node {
			continue
		}
		superNS := conversion.SuperNamespace(t.Name, t.UID, p.Namespace)
		sp, ok := s.opts.SuperPod(superNS, p.Name)
		if !ok || !isCopyOf(sp, t, p.Namespace, p.Name, p.UID) {
			continue
		}
		out[superNS+"/"+p.Name] = tenantPod{namespace: p.Namespace, name: p.Name, uid: string(p.UID)}
	}
	return out, nil
}

// superResourceMetrics reads and parses the resource metrics of super Node node through the
// super apiserver's nodes/<node>/proxy with the syncer's credentials, at most
// MaxSuperMetricsBytes. Without read (the tenant has no Pod there) it reads nothing and
// returns the node-level families empty, so that the tenant sees zero usage.
func (s *Server) superResourceMetrics(ctx context.Context, node string, read bool) (map[string]*dto.MetricFamily, error) {
	if !read {
		return emptyNodeFamilies(), nil
	}
	return s.nodeReads.read(ctx, node, s.readSuperResourceMetrics)
}

// nodeReads shares the reads of super Nodes' resource metrics: concurrent requests for one
// Node (of any tenants) wait for one read and share its families, which filterResourceMetrics
// only reads; at most maxNodeReads reads are in flight.
type nodeReads struct {
	group singleflight.Group
	slots chan struct{}
	once  sync.Once
}

// read returns the families of node, reading them with fetch unless a read of node is in
// flight. It fails with ctx's error when ctx ends first.
func (n *nodeReads) read(ctx context.Context, node string, fetch func(context.Context, string) (map[string]*dto.MetricFamily, error)) (map[string]*dto.MetricFamily, error) {
	n.once.Do(func() { n.slots = make(chan struct{}, maxNodeReads) })
	ch := n.group.DoChan(node, func() (any, error) {
		n.slots <- struct{}{}
		defer func() { <-n.slots }()
		// The read is shared: it runs to its own timeout, not to the first caller's context.
		return fetch(context.WithoutCancel(ctx), node)
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(map[string]*dto.MetricFamily), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readSuperResourceMetrics reads node's resource metrics (superResourceMetrics).
func (s *Server) readSuperResourceMetrics(ctx context.Context, node string) (map[string]*dto.MetricFamily, error) {
	ctx, cancel := context.WithTimeout(ctx, superMetricsTimeout)
	defer cancel()
	loc, rt := *s.superURL, s.transport
	loc.Path = strings.TrimSuffix(loc.Path, "/") + "/api/v1/nodes/" + node + "/proxy" +
		strings.ReplaceAll(s.opts.SuperMetricsPath, "{nodeName}", node)
	if s.opts.SuperMetricsURL != "" {
		u, err := url.Parse(s.opts.SuperMetricsURL) // checked by New
		if err != nil {
			return nil, err
		}
		loc, rt = *u, s.direct
		loc.Path = strings.ReplaceAll(loc.Path, "{nodeName}", node)
	}
	loc.RawPath, loc.RawQuery = "", ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return nil, err
	}
	// No Accept header: a kubelet (promhttp) answers the text format without one, and kwok
	// (go-restful) refuses the text format's media type with parameters (406).
	hc := &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s answered %s", loc.Path, resp.Status)
	}
	return parseResourceMetrics(resp.Body)
}

// errTooLarge: the super Node's resource metrics exceed MaxSuperMetricsBytes.
var errTooLarge = fmt.Errorf("resource metrics larger than %d bytes", MaxSuperMetricsBytes)

// parseResourceMetrics parses Prometheus text of at most MaxSuperMetricsBytes from body.
func parseResourceMetrics(body io.Reader) (map[string]*dto.MetricFamily, error) {
	b, err := io.ReadAll(io.LimitReader(body, MaxSuperMetricsBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxSuperMetricsBytes {
		return nil, errTooLarge
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("invalid resource metrics: %w", err)
	}
	return fams, nil
}

// emptyNodeFamilies returns the node-level families a tenant with no Pod on a Node sees.
func emptyNodeFamilies() map[string]*dto.MetricFamily {
	return map[string]*dto.MetricFamily{
		famNodeCPU:    {Name: ptr.To(famNodeCPU), Type: dto.MetricType_COUNTER.Enum()},
		famNodeMemory: {Name: ptr.To(famNodeMemory), Type: dto.MetricType_GAUGE.Enum()},
	}
}
