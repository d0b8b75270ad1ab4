package kubeletproxy

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
)

// ca is a test CA that signs client certificates.
type ca struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newCA(t *testing.T, name string) *ca {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &ca{cert: cert, key: key, pool: pool}
}

func (c *ca) client(t *testing.T, usage x509.ExtKeyUsage) *x509.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver-kubelet-client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, key.Public(), c.key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert
}

func pod(ns, name, uid string, containers ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
	}
	return p
}

// superCopy is the super Pod the syncer made of tenant Pod p of tenant (name, uid).
func superCopy(tenant, tenantUID string, p *corev1.Pod) *corev1.Pod {
	sp := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: conversion.SuperNamespace(tenant, tenantUID, p.Namespace), Name: p.Name}}
	conversion.Stamp(&sp.ObjectMeta, conversion.Owner{Tenant: tenant, TenantUID: tenantUID, Namespace: p.Namespace, Name: p.Name, UID: string(p.UID)})
	return sp
}

type fixture struct {
	srv               *Server
	caA, caB, caX     *ca
	certA, certB      *x509.Certificate
	mu                sync.Mutex
	superSaw          []*http.Request
	tenants           []Tenant
	superPods         map[string]*corev1.Pod
	aPod, bPod, aPod2 *corev1.Pod
}

func (f *fixture) seen() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request(nil), f.superSaw...)
}

func newFixture(t *testing.T) *fixture { return newFixtureWith(t, nil) }

// newFixtureWith is newFixture with its server Options changed by mutate. Its super
// apiserver answers a follow=true log request with one line, then holds the stream open
// until the client goes.
func newFixtureWith(t *testing.T, mutate func(*Options)) *fixture {
	f := &fixture{caA: newCA(t, "a"), caB: newCA(t, "b"), caX: newCA(t, "x"), superPods: map[string]*corev1.Pod{}}
	f.certA, f.certB = f.caA.client(t, x509.ExtKeyUsageClientAuth), f.caB.client(t, x509.ExtKeyUsageClientAuth)
	super := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.superSaw = append(f.superSaw, r.Clone(r.Context()))
		f.mu.Unlock()
		// Headers of the super cluster's own that must not reach a tenant.
		w.Header().Set("Audit-Id", "super-audit-id")
		w.Header().Set("X-Kubernetes-Pf-Flowschema-Uid", "super-flowschema")
		w.Header().Set("Warning", `299 - "about the super cluster"`)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "hello from the super Pod\n")
		if r.URL.Query().Get("follow") == "true" {
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	t.Cleanup(super.Close)
	f.aPod, f.aPod2 = pod("web", "frontend", "uid-a1", "app"), pod("other", "frontend", "uid-a2", "app")
	f.bPod = pod("web", "frontend", "uid-b1", "app")
	byTenant := map[string][]*corev1.Pod{"tenant-a": {f.aPod, f.aPod2}, "tenant-b": {f.bPod}}
	mk := func(name, uid string, c *ca) Tenant {
		return Tenant{Name: name, UID: uid, ClientCAs: c.pool, Synced: true, Pod: func(ns, n string) (*corev1.Pod, error) {
			for _, p := range byTenant[name] {
				if p.Namespace == ns && p.Name == n {
					return p, nil
				}
			}
			return nil, apierrors.NewNotFound(corev1.Resource("pods"), n)
		}}
	}
	f.tenants = []Tenant{mk("tenant-a", "tuid-a", f.caA), mk("tenant-b", "tuid-b", f.caB)}
	for _, sp := range []*corev1.Pod{superCopy("tenant-a", "tuid-a", f.aPod), superCopy("tenant-b", "tuid-b", f.bPod)} {
		f.superPods[sp.Namespace+"/"+sp.Name] = sp
	}
	o := Options{
		Tenants: func() []Tenant { return f.tenants },
		SuperPod: func(ns, name string) (metav1.Object, bool) {
			p, ok := f.superPods[ns+"/"+name]
			return p, ok
		},
		Super: &rest.Config{Host: super.URL, BearerToken: "super-token", TLSClientConfig: rest.TLSClientConfig{Insecure: true}},
	}
	if mutate != nil {
		mutate(&o)
	}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	return f
}

func (f *fixture) do(target string, cert *x509.Certificate, hdr map[string]string) *httptest.ResponseRecorder {
	return f.doMethod(http.MethodGet, target, cert, hdr)
}

// doMethod is do with another method.
func (f *fixture) doMethod(method, target string, cert *x509.Certificate, hdr map[string]string) *httptest.ResponseRecorder {
	// A stream the server wrongly forwards ends after 10s instead of hanging the test.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := httptest.NewRequest(method, target, nil).WithContext(ctx)
	if cert != nil {
		r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
	} else {
		r.TLS = &tls.ConnectionState{}
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, r)
	return w
}

func TestLogsForwardedWithSyncerCredentialsOnly(t *testing.T) {
	f := newFixture(t)
	before := metrics.KubeletRequests("tenant-a", EndpointContainerLogs, resultForwarded)
	bytesBefore := metrics.KubeletBytesCount("tenant-a", EndpointContainerLogs, metrics.KubeletToTenant)
	w := f.do("/containerLogs/web/frontend/app?follow=true&tailLines=10&insecureSkipTLSVerifyBackend=true&container=evil",
		f.certA, map[string]string{"Authorization": "Bearer tenant-user-token", "Impersonate-User": "system:admin", "Cookie": "x=y"})
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "hello from the super Pod") {
		t.Fatalf("code %d body %q", w.Code, w.Body.String())
	}
	saw := f.seen()
	if len(saw) != 1 {
		t.Fatalf("super apiserver got %d requests, want 1", len(saw))
	}
	r := saw[0]
	wantPath := "/api/v1/namespaces/" + conversion.SuperNamespace("tenant-a", "tuid-a", "web") + "/pods/frontend/log"
	if r.URL.Path != wantPath {
		t.Errorf("path %q, want %q", r.URL.Path, wantPath)
	}
	if q := r.URL.Query(); q.Get("container") != "app" || q.Get("follow") != "true" || q.Get("tailLines") != "10" || q.Has("insecureSkipTLSVerifyBackend") || len(q["container"]) != 1 {
		t.Errorf("query %v", q)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer super-token" {
		t.Errorf("Authorization %q, want the syncer's own token", got)
	}
	if r.Header.Get("Impersonate-User") != "" || r.Header.Get("Cookie") != "" {
		t.Errorf("caller headers forwarded: %v", r.Header)
	}
	if d := metrics.KubeletRequests("tenant-a", EndpointContainerLogs, resultForwarded) - before; d != 1 {
		t.Errorf("forwarded counter rose by %v, want 1", d)
	}
	if d := metrics.KubeletBytesCount("tenant-a", EndpointContainerLogs, metrics.KubeletToTenant) - bytesBefore; d != float64(w.Body.Len()) {
		t.Errorf("bytes_total{direction=to_tenant} rose by %v, want the body's %d", d, w.Body.Len())
	}
}

// TestLogReadPassesNoUpgradeAndNoSuperHeaders: a log read reaches the super apiserver as a
// plain GET (no upgrade headers a tenant sent), and only the content headers of its answer
// come back.
func TestLogReadPassesNoUpgradeAndNoSuperHeaders(t *testing.T) {
	f := newFixture(t)
	w := f.do("/containerLogs/web/frontend/app", f.certA, map[string]string{"Connection": "Upgrade", "Upgrade": "websocket",
		"Sec-Websocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-Websocket-Version": "13", "Accept": "text/plain"})
	if w.Code != http.StatusOK {
		t.Fatalf("code %d body %q", w.Code, w.Body.String())
	}
	saw := f.seen()
	if len(saw) != 1 {
		t.Fatalf("super apiserver got %d requests, want 1", len(saw))
	}
	for _, h := range []string{"Upgrade", "Sec-Websocket-Key", "Sec-Websocket-Version"} {
		if v := saw[0].Header.Get(h); v != "" {
			t.Errorf("%s %q reached the super apiserver on a log read", h, v)
		}
	}
	if saw[0].Header.Get("Accept") != "text/plain" {
		t.Errorf("Accept %q, want the caller's", saw[0].Header.Get("Accept"))
	}
	for _, h := range []string{"Audit-Id", "X-Kubernetes-Pf-Flowschema-Uid", "Warning"} {
		if v := w.Header().Get(h); v != "" {
			t.Errorf("the super apiserver's %s %q reached the tenant", h, v)
		}
	}
	if w.Header().Get("Content-Type") != "text/plain" {
		t.Errorf("Content-Type %q, want the super answer's", w.Header().Get("Content-Type"))
	}
}

func TestExecQueryTranslated(t *testing.T) {
	f := newFixture(t)
	w := f.do("/exec/web/frontend/app?command=ls&command=-l&input=1&output=1&error=0&tty=1", f.certA, nil)
	if w.Code != http.StatusOK {
		t.Fatalf("code %d body %q", w.Code, w.Body.String())
	}
	q := f.seen()[0].URL.Query()
	if got := q["command"]; len(got) != 2 || got[0] != "ls" || got[1] != "-l" {
		t.Errorf("command %v", got)
	}
	if q.Get("stdin") != "true" || q.Get("stdout") != "true" || q.Get("stderr") != "false" || q.Get("tty") != "true" || q.Has("input") {
		t.Errorf("query %v", q)
	}
}

func TestRefusals(t *testing.T) {
	long := strings.Repeat("a", 300)
	cases := map[string]struct {
		target     string
		cert       func(f *fixture) *x509.Certificate
		setup      func(f *fixture)
		wantCode   int
		wantUnauth string // reason of vcsyncer_kubelet_unauthenticated_total that must rise
	}{
		"no client certificate":            {target: "/containerLogs/web/frontend/app", wantCode: 401, wantUnauth: "no_certificate"},
		"certificate of no tenant":         {target: "/containerLogs/web/frontend/app", cert: func(f *fixture) *x509.Certificate { return f.caX.client(t, x509.ExtKeyUsageClientAuth) }, wantCode: 401, wantUnauth: "unknown_certificate"},
		"server-auth certificate":          {target: "/containerLogs/web/frontend/app", cert: func(f *fixture) *x509.Certificate { return f.caA.client(t, x509.ExtKeyUsageServerAuth) }, wantCode: 401, wantUnauth: "unknown_certificate"},
		"CA trusted by two tenants":        {target: "/containerLogs/web/frontend/app", setup: func(f *fixture) { f.tenants[1].ClientCAs = f.caA.pool }, wantCode: 401, wantUnauth: "ambiguous_certificate"},
		"tenant B asks for tenant A's Pod": {target: "/containerLogs/other/frontend/app", cert: func(f *fixture) *x509.Certificate { return f.certB }, wantCode: 404},
		"tenant Pod not synced":            {target: "/containerLogs/other/frontend/app", wantCode: 404},
		"super Pod at the mapped place owned by another tenant": {target: "/containerLogs/web/frontend/app", cert: func(f *fixture) *x509.Certificate { return f.certB },
			setup: func(f *fixture) {
				sp := superCopy("tenant-a", "tuid-a", f.aPod)
				sp.Namespace = conversion.SuperNamespace("tenant-b", "tuid-b", "web")
				f.superPods[sp.Namespace+"/"+sp.Name] = sp
			}, wantCode: 403},
		"super Pod of an older tenant Pod (UID differs)": {target: "/containerLogs/web/frontend/app", setup: func(f *fixture) { f.aPod.UID = "recreated" }, wantCode: 403},
		"container not declared":                         {target: "/containerLogs/web/frontend/sidecar", wantCode: 404},
		"encoded slash":                                  {target: "/containerLogs/web%2Ffrontend/frontend/app", wantCode: 404},
		"double-encoded slash":                           {target: "/containerLogs/web%252Ffrontend/frontend/app", wantCode: 404},
		"dot-dot segment":                                {target: "/containerLogs/web/../frontend/app", wantCode: 404},
		"encoded dot-dot":                                {target: "/containerLogs/web/%2E%2E/frontend/app", wantCode: 404},
		"very long Pod name":                             {target: "/containerLogs/web/" + long + "/app", wantCode: 404},
		"extra segment":                                  {target: "/containerLogs/web/frontend/app/x", wantCode: 404},
		"uid form":                                       {target: "/exec/web/frontend/uid-a1/app", wantCode: 404},
		"other kubelet endpoint":                         {target: "/runningpods/", wantCode: 404},
		"configz":                                        {target: "/configz", wantCode: 404},
		"tenant not synced yet":                          {target: "/containerLogs/web/frontend/app", setup: func(f *fixture) { f.tenants[0].Synced = false }, wantCode: 503},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			var cert *x509.Certificate
			if tc.cert != nil {
				cert = tc.cert(f)
			} else if tc.wantUnauth != "no_certificate" {
				cert = f.certA
			}
			if tc.setup != nil {
				tc.setup(f)
			}
			var before float64
			if tc.wantUnauth != "" {
				before = metrics.KubeletUnauthenticatedCount(tc.wantUnauth)
			}
			w := f.do(tc.target, cert, nil)
			if w.Code != tc.wantCode {
				t.Errorf("code %d, want %d (body %q)", w.Code, tc.wantCode, w.Body.String())
			}
			if n := len(f.seen()); n != 0 {
				t.Errorf("forwarded %d requests to the super apiserver, want none", n)
			}
			if tc.wantUnauth != "" {
				if d := metrics.KubeletUnauthenticatedCount(tc.wantUnauth) - before; d != 1 {
					t.Errorf("unauthenticated{%s} rose by %v, want 1", tc.wantUnauth, d)
				}
			}
		})
	}
}

// Exec, attach and port-forward switched off by the tenant's TenantPolicy are refused with
// 403 naming the field, counted, and never forwarded; logs stay served, and another tenant
// keeps them.
func TestPolicyForbiddenEndpoints(t *testing.T) {
	f := newFixture(t)
	f.tenants[0].Forbidden = []string{EndpointExec, EndpointAttach, EndpointPortForward}
	for target, field := range map[string]string{
		"/exec/web/frontend/app?command=ls&output=1": "kubelet.allowExec",
		"/attach/web/frontend/app?output=1":          "kubelet.allowAttach",
		"/portForward/web/frontend?port=80":          "kubelet.allowPortForward",
	} {
		endpoint := strings.Split(target, "/")[1]
		before := metrics.KubeletRequests("tenant-a", endpoint, reasonPolicyForbidden)
		if w := f.do(target, f.certA, nil); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), field) {
			t.Errorf("%s switched off: code %d body %q, want 403 naming %s", target, w.Code, w.Body.String(), field)
		}
		if d := metrics.KubeletRequests("tenant-a", endpoint, reasonPolicyForbidden) - before; d != 1 {
			t.Errorf("%s: requests_total{result=%q} rose by %v, want 1", target, reasonPolicyForbidden, d)
		}
	}
	if n := len(f.seen()); n != 0 {
		t.Errorf("forwarded %d requests the policy switches off", n)
	}
	if w := f.do("/containerLogs/web/frontend/app", f.certA, nil); w.Code != http.StatusOK {
		t.Errorf("logs with exec switched off: code %d body %q, want 200", w.Code, w.Body.String())
	}
	if w := f.do("/exec/web/frontend/app?command=ls&output=1", f.certB, nil); w.Code != http.StatusOK {
		t.Errorf("tenant-b's exec: code %d body %q, want 200", w.Code, w.Body.String())
	}
}

func TestLogQueryAllowlist(t *testing.T) {
	cases := map[string]struct {
		query    string
		wantCode int
		want     map[string]string // forwarded parameters (all of them, container aside)
	}{
		"flags, tail, limit, since": {
			// (follow=true is TestStreamLimitPerTenant's: the fixture holds such a stream open.)
			query:    "follow=f&previous=true&tailLines=5&timestamps=1&limitBytes=100&sinceSeconds=10&insecureSkipTLSVerifyBackend=true&pretty=true",
			wantCode: 200,
			want:     map[string]string{"follow": "false", "previous": "true", "tailLines": "5", "timestamps": "true", "limitBytes": "100", "sinceSeconds": "10"},
		},
		"sinceTime":              {query: "sinceTime=2026-12-06T10:00:00Z", wantCode: 200, want: map[string]string{"sinceTime": "2026-12-06T10:00:00Z"}},
		"false flags":            {query: "follow=false&previous=0", wantCode: 200, want: map[string]string{"follow": "false", "previous": "false"}},
		"tailLines not a number": {query: "tailLines=abc", wantCode: 400},
		"negative limitBytes":    {query: "limitBytes=-1", wantCode: 400},
		"tailLines twice":        {query: "tailLines=5&tailLines=6", wantCode: 400},
		"follow not a boolean":   {query: "follow=maybe", wantCode: 400},
		"sinceTime not RFC 3339": {query: "sinceTime=yesterday", wantCode: 400},
		"sinceSeconds zero":      {query: "sinceSeconds=0", wantCode: 400},
		"huge tailLines":         {query: "tailLines=99999999999999999999999", wantCode: 400},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			before := metrics.KubeletRequests("tenant-a", EndpointContainerLogs, reasonBadQuery)
			w := f.do("/containerLogs/web/frontend/app?"+tc.query, f.certA, nil)
			if w.Code != tc.wantCode {
				t.Fatalf("code %d, want %d (body %q)", w.Code, tc.wantCode, w.Body.String())
			}
			saw := f.seen()
			if tc.wantCode != 200 {
				if len(saw) != 0 {
					t.Errorf("forwarded %d requests, want none", len(saw))
				}
				if d := metrics.KubeletRequests("tenant-a", EndpointContainerLogs, reasonBadQuery) - before; d != 1 {
					t.Errorf("requests_total{result=%q} rose by %v, want 1", reasonBadQuery, d)
				}
				return
			}
			q := saw[0].URL.Query()
			q.Del("container")
			if len(q) != len(tc.want) {
				t.Errorf("forwarded query %v, want %v", q, tc.want)
			}
			for k, v := range tc.want {
				if got := q[k]; len(got) != 1 || got[0] != v {
					t.Errorf("%s = %v, want %q", k, got, v)
				}
			}
		})
	}
}

// A tenant apiserver asks a kubelet for port-forward with port=<p1>,<p2> (api.PortHeader, the
// ports joined by commas); the super apiserver's pods/portforward reads ports=<p> (one
// value each, PodPortForwardOptions.Ports).
func TestPortForwardQueryTranslated(t *testing.T) {
	cases := map[string]struct {
		query     string
		wantCode  int
		wantPorts []string
	}{
		"one port":            {query: "port=8080", wantCode: 200, wantPorts: []string{"8080"}},
		"two ports":           {query: "port=80,443", wantCode: 200, wantPorts: []string{"80", "443"}},
		"none (SPDY headers)": {query: "", wantCode: 200},
		"port zero":           {query: "port=0", wantCode: 400},
		"port too large":      {query: "port=65536", wantCode: 400},
		"not a number":        {query: "port=http", wantCode: 400},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			w := f.do("/portForward/web/frontend?"+tc.query, f.certA, nil)
			if w.Code != tc.wantCode {
				t.Fatalf("code %d, want %d (body %q)", w.Code, tc.wantCode, w.Body.String())
			}
			saw := f.seen()
			if tc.wantCode != 200 {
				if len(saw) != 0 {
					t.Errorf("forwarded %d requests, want none", len(saw))
				}
				return
			}
			r := saw[0]
			if want := "/api/v1/namespaces/" + conversion.SuperNamespace("tenant-a", "tuid-a", "web") + "/pods/frontend/portforward"; r.URL.Path != want {
				t.Errorf("path %q, want %q", r.URL.Path, want)
			}
			q := r.URL.Query()
			if got := q["ports"]; strings.Join(got, " ") != strings.Join(tc.wantPorts, " ") || q.Has("port") || q.Has("container") {
				t.Errorf("query %v, want ports %v", q, tc.wantPorts)
			}
		})
	}
}

func TestAttachQueryTranslated(t *testing.T) {
	f := newFixture(t)
	w := f.do("/attach/web/frontend/app?input=1&output=1&error=0&tty=1&command=sh", f.certA, nil)
	if w.Code != http.StatusOK {
		t.Fatalf("code %d body %q", w.Code, w.Body.String())
	}
	r := f.seen()[0]
	if want := "/api/v1/namespaces/" + conversion.SuperNamespace("tenant-a", "tuid-a", "web") + "/pods/frontend/attach"; r.URL.Path != want {
		t.Errorf("path %q, want %q", r.URL.Path, want)
	}
	q := r.URL.Query()
	if q.Get("stdin") != "true" || q.Get("stdout") != "true" || q.Get("stderr") != "false" || q.Get("tty") != "true" || q.Get("container") != "app" || q.Has("command") {
		t.Errorf("query %v", q)
	}
}
