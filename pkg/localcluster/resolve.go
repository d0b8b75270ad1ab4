package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
)

// ErrNameNotFound is returned by PodResolver.LookupA when no candidate name has an A record
// (every answer was NXDOMAIN, no data, or a server failure).
var ErrNameNotFound = errors.New("name not found")

// PodResolver resolves host names the way a container's stub resolver (glibc's res_nsearch, and
// musl's) does with the resolv.conf the kubelet writes for a Pod with dnsPolicy None: the
// nameservers, search domains and ndots option of the Pod's dnsConfig. Service IPs are not
// routable on this machine, so each nameserver IP is mapped to the local address of the DNS
// server that stands in for it (e.g. a DNSServer started by StartCoreDNS).
type PodResolver struct {
	// Config holds the Pod's nameservers, search domains and ndots (1 when the Pod sets none,
	// the resolver's default).
	Config dns.ClientConfig
	// Servers maps a nameserver IP of Config to the host:port that answers for it.
	Servers map[string]string
	// Timeout bounds one query to one server. Defaults to 2 s.
	Timeout time.Duration
}

// NewPodResolver returns a PodResolver for the dnsConfig of a super Pod (spec.dnsConfig, as the
// kubelet would write it into /etc/resolv.conf for dnsPolicy None), with servers mapping
// nameserver IPs to local host:port addresses. It fails when cfg is nil, has no nameserver or a
// malformed ndots option.
func NewPodResolver(cfg *corev1.PodDNSConfig, servers map[string]string) (*PodResolver, error) {
	if cfg == nil || len(cfg.Nameservers) == 0 {
		return nil, fmt.Errorf("dnsConfig %+v has no nameserver", cfg)
	}
	r := &PodResolver{Config: dns.ClientConfig{Servers: slices.Clone(cfg.Nameservers), Search: slices.Clone(cfg.Searches), Ndots: 1}, Servers: servers}
	for _, o := range cfg.Options {
		if o.Name == "ndots" && o.Value != nil {
			n, err := strconv.Atoi(*o.Value)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("dnsConfig option ndots=%q is not a number", *o.Value)
			}
			r.Config.Ndots = min(n, 15) // the resolver's cap (RES_MAXNDOTS)
		}
	}
	return r, nil
}

// Candidates returns the names the resolver tries for name, in order (miekg/dns
// ClientConfig.NameList: with fewer than ndots dots the search domains first, then the name
// itself; with ndots or more the name first; a name ending in "." alone).
func (r *PodResolver) Candidates(name string) []string { return r.Config.NameList(name) }

// LookupA resolves name to IPv4 addresses: it tries each candidate (Candidates) in order,
// asking the nameservers in order, and returns the first candidate that has A records (after
// any CNAMEs), with its addresses sorted. A candidate answered with NXDOMAIN or no A record
// moves on to the next candidate, a server failure or timeout to the next server, as
// res_nsearch does. It fails with ErrNameNotFound (wrapped, with each candidate's outcome) when
// no candidate resolves, and with another error when a nameserver has no entry in Servers.
func (r *PodResolver) LookupA(ctx context.Context, name string) (string, []string, error) {
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 2 * time.Second
	}
	var tried []string
	for _, fqdn := range r.Candidates(name) {
		outcome := "no server answered"
		for _, ns := range r.Config.Servers {
			addr, ok := r.Servers[ns]
			if !ok {
				return "", nil, fmt.Errorf("nameserver %s of the Pod's dnsConfig has no local stand-in (known: %v)", ns, r.Servers)
			}
			resp, err := exchange(ctx, addr, fqdn, timeout)
			if err != nil {
				outcome = err.Error()
				continue
			}
			if resp.Rcode != dns.RcodeSuccess {
				outcome = dns.RcodeToString[resp.Rcode]
				if resp.Rcode == dns.RcodeNameError {
					break // authoritative: the name does not exist
				}
				continue
			}
			var ips []string
			for _, rr := range resp.Answer {
				if a, ok := rr.(*dns.A); ok {
					ips = append(ips, a.A.String())
				}
			}
			if len(ips) == 0 {
				outcome = "no A record"
				break
			}
			slices.Sort(ips)
			return fqdn, ips, nil
		}
		tried = append(tried, fqdn+": "+outcome)
	}
	return "", nil, fmt.Errorf("%w: %s (tried %s)", ErrNameNotFound, name, strings.Join(tried, "; "))
}

// exchange asks addr for the A records of fqdn over UDP, and again over TCP when the UDP
// answer is truncated.
func exchange(ctx context.Context, addr, fqdn string, timeout time.Duration) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(fqdn, dns.TypeA)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := &dns.Client{Net: "udp", Timeout: timeout}
	resp, _, err := c.ExchangeContext(ctx, m, addr)
	if err == nil && resp.Truncated {
		c.Net = "tcp"
		resp, _, err = c.ExchangeContext(ctx, m, addr)
	}
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("timeout asking %s", addr)
		}
		return nil, fmt.Errorf("asking %s: %w", addr, err)
	}
	return resp, nil
}
