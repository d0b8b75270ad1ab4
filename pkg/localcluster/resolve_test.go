package localcluster

import (
	"errors"
	"net"
	"slices"
	"sync"
	"testing"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// serveZone runs a DNS server on 127.0.0.1 (UDP) that answers A queries from records (FQDN →
// IPs), NXDOMAIN for other names, and records every question it gets in asked.
func serveZone(t *testing.T, records map[string][]string, mu *sync.Mutex, asked *[]string) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		mu.Lock()
		*asked = append(*asked, q.Name)
		mu.Unlock()
		ips, ok := records[q.Name]
		if !ok {
			m.Rcode = dns.RcodeNameError
		}
		for _, ip := range ips {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 5}, A: net.ParseIP(ip)})
		}
		_ = w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}

// PodResolver follows the search list and ndots of a Pod's dnsConfig: short names are tried
// with the search domains first, names with ndots dots as they are first, and the first
// candidate with an A record wins.
func TestPodResolver(t *testing.T) {
	var (
		mu    sync.Mutex
		asked []string
	)
	addr := serveZone(t, map[string][]string{
		"web.shop.svc.cluster.local.":     {"10.96.0.20"},
		"web.other.svc.cluster.local.":    {"10.96.0.30"},
		"db-0.db.shop.svc.cluster.local.": {"10.244.0.7"},
		"db.shop.svc.cluster.local.":      {"10.244.1.8", "10.244.0.7"},
		"example.com.":                    {"192.0.2.1"},
	}, &mu, &asked)
	cfg := &corev1.PodDNSConfig{
		Nameservers: []string{"10.96.0.10"},
		Searches:    []string{"shop.svc.cluster.local", "svc.cluster.local", "cluster.local"},
		Options:     []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("5")}},
	}
	r, err := NewPodResolver(cfg, map[string]string{"10.96.0.10": addr})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, fqdn string
		ips        []string
		asked      []string
	}{
		{"web", "web.shop.svc.cluster.local.", []string{"10.96.0.20"}, []string{"web.shop.svc.cluster.local."}},
		{"web.other", "web.other.svc.cluster.local.", []string{"10.96.0.30"},
			[]string{"web.other.shop.svc.cluster.local.", "web.other.svc.cluster.local."}},
		{"db", "db.shop.svc.cluster.local.", []string{"10.244.0.7", "10.244.1.8"}, []string{"db.shop.svc.cluster.local."}},
		{"db-0.db", "db-0.db.shop.svc.cluster.local.", []string{"10.244.0.7"}, []string{"db-0.db.shop.svc.cluster.local."}},
		// 5 dots, ndots 5: as it is first.
		{"db-0.db.shop.svc.cluster.local", "db-0.db.shop.svc.cluster.local.", []string{"10.244.0.7"}, []string{"db-0.db.shop.svc.cluster.local."}},
		{"db.shop.svc", "db.shop.svc.cluster.local.", []string{"10.244.0.7", "10.244.1.8"}, []string{
			"db.shop.svc.shop.svc.cluster.local.", "db.shop.svc.svc.cluster.local.", "db.shop.svc.cluster.local."}},
		{"example.com.", "example.com.", []string{"192.0.2.1"}, []string{"example.com."}},
	} {
		mu.Lock()
		asked = nil
		mu.Unlock()
		fqdn, ips, err := r.LookupA(t.Context(), tc.name)
		mu.Lock()
		got := slices.Clone(asked)
		mu.Unlock()
		if err != nil || fqdn != tc.fqdn || !slices.Equal(ips, tc.ips) {
			t.Errorf("LookupA(%q) = %q %v %v, want %q %v", tc.name, fqdn, ips, err, tc.fqdn, tc.ips)
		}
		if !slices.Equal(got, tc.asked) {
			t.Errorf("LookupA(%q) asked %q, want %q", tc.name, got, tc.asked)
		}
	}
	// ndots 1 (no option): a dotted name is tried as it is first.
	r1, _ := NewPodResolver(&corev1.PodDNSConfig{Nameservers: cfg.Nameservers, Searches: cfg.Searches}, r.Servers)
	if got := r1.Candidates("web.other"); got[0] != "web.other." {
		t.Errorf("ndots 1: candidates %q, want web.other. first", got)
	}
	if _, _, err := r.LookupA(t.Context(), "api.payments"); !errors.Is(err, ErrNameNotFound) {
		t.Errorf("LookupA(api.payments) = %v, want ErrNameNotFound", err)
	}
	if _, _, err := (&PodResolver{Config: r.Config, Servers: map[string]string{}}).LookupA(t.Context(), "web"); err == nil || errors.Is(err, ErrNameNotFound) {
		t.Errorf("LookupA with an unmapped nameserver = %v, want a configuration error", err)
	}
	if _, err := NewPodResolver(&corev1.PodDNSConfig{Nameservers: []string{"10.96.0.10"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("x")}}}, nil); err == nil {
		t.Error("ndots x accepted")
	}
}
