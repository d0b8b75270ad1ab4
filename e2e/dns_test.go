package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/localcluster"
)

// dnsName is one name a tenant Pod would resolve, with the answer it must get.
type dnsName struct {
	from string   // "<tenant ns>/<pod>" whose super Pod's dnsConfig is used
	name string   // as the application writes it
	want []string // sorted A records
	// superIP is the super copy's ClusterIP for a Service name ("" for Pod names).
	superIP string
	pod     bool // a <pod>.<svc>.<ns>.svc name
	// refused: a Service the tenant policy refuses (refusedServices) has no super copy and
	// must get no answer (issue 42 item 7).
	refused bool
}

// testDNS checks the tenant DNS of both tenants with the corpus applied: a CoreDNS per tenant
// (framework ControlPlane.StartCoreDNS, in place of the tenant's CoreDNS Pod) answers the names
// a super Pod resolves with the dnsConfig the syncer gave it (nameserver: the super ClusterIP of
// the tenant's kube-dns copy, mapped to that CoreDNS; the Pod's searches and ndots):
//   - every ClusterIP Service as <svc> from a Pod of its namespace, <svc>.<ns> and
//     <svc>.<ns>.svc.cluster.local from any Pod: the tenant Service's ClusterIP, which must be the super
//     copy's; a Service the tenant policy refuses (refusedServices) has no super copy and gets no
//     answer;
//   - every ready endpoint with a hostname of a headless Service (StatefulSet Pods) as
//     <hostname>.<svc>.<ns>.svc.cluster.local: the IP of the tenant's super Pod.
func (rw *realWorld) testDNS(t *testing.T) {
	ctx := t.Context()
	for _, tu := range rw.tenants {
		t.Run(tu.name, func(t *testing.T) {
			dnsServer, err := tu.cp.StartCoreDNS(ctx)
			if err != nil {
				t.Fatal(err)
			}
			v, err := rw.load(ctx, tu)
			if err != nil {
				t.Fatal(err)
			}
			superDNS, err := rw.super.Client.CoreV1().Services(v.superNS[localcluster.ClusterDNSNamespace]).Get(ctx, localcluster.ClusterDNSService, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("super copy of %s's kube-system/kube-dns: %v", tu.name, err)
			}
			servers := map[string]string{superDNS.Spec.ClusterIP: dnsServer.Addr}
			names, resolvers, err := rw.dnsNames(ctx, v, servers)
			if err != nil {
				t.Fatal(err)
			}
			if len(names) == 0 {
				t.Fatal("no name to resolve: no super Pod has the tenant DNS")
			}
			var problems, unaligned []string
			deadline := time.Now().Add(time.Minute) // EndpointSlices and CoreDNS's caches settle
			for {
				problems, unaligned = nil, nil
				for _, n := range names {
					fqdn, ips, err := resolvers[n.from].LookupA(ctx, n.name)
					switch {
					case n.refused && errors.Is(err, localcluster.ErrNameNotFound):
					case n.refused && err == nil:
						problems = append(problems, fmt.Sprintf("%s from %s (as %s) = %v, want no answer: the tenant policy refuses the Service", n.name, n.from, fqdn, ips))
					case err != nil:
						problems = append(problems, fmt.Sprintf("%s from %s: %v", n.name, n.from, err))
					case !slices.Equal(ips, n.want):
						problems = append(problems, fmt.Sprintf("%s from %s (as %s) = %v, want %v", n.name, n.from, fqdn, ips, n.want))
					case n.superIP != "" && !slices.Equal(ips, []string{n.superIP}):
						unaligned = append(unaligned, fmt.Sprintf("%s = %v, super copy %s", n.name, ips, n.superIP))
					}
				}
				if len(problems) == 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(pollInterval)
			}
			for _, p := range problems {
				t.Error(p)
			}
			podNames := 0
			for _, n := range names {
				if n.pod {
					podNames++
				}
			}
			t.Logf("%s: %d names (%d of them <pod>.<svc>.<ns>.svc names) checked with super Pods' dnsConfig through CoreDNS at %s (nameserver %s); %d wrong",
				tu.name, len(names), podNames, dnsServer.Addr, superDNS.Spec.ClusterIP, len(problems))
			if len(unaligned) > 0 {
				t.Errorf("%d Service names answer a tenant ClusterIP that is not the super copy's, e.g. %s", len(unaligned), unaligned[0])
			}
		})
	}
}

// dnsNames lists the names to resolve in tenant view v and a resolver per Pod they are
// resolved from (the super Pods' dnsConfig with servers).
func (rw *realWorld) dnsNames(ctx context.Context, v *tenantView, servers map[string]string) ([]dnsName, map[string]*localcluster.PodResolver, error) {
	resolvers := map[string]*localcluster.PodResolver{}
	podIn := map[string]string{} // tenant ns → a Pod "<ns>/<name>" resolving with the tenant DNS
	var anyPod string
	podIPs := map[string]bool{}
	keys := make([]string, 0, len(v.superPod))
	for k := range v.superPod {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sp := v.superPod[k]
		if sp.Status.PodIP != "" && !sp.Spec.HostNetwork {
			podIPs[sp.Status.PodIP] = true
		}
		if sp.Spec.DNSPolicy != corev1.DNSNone || sp.Spec.DNSConfig == nil || len(sp.Spec.DNSConfig.Nameservers) == 0 ||
			servers[sp.Spec.DNSConfig.Nameservers[0]] == "" {
			continue
		}
		r, err := localcluster.NewPodResolver(sp.Spec.DNSConfig, servers)
		if err != nil {
			return nil, nil, fmt.Errorf("super Pod of %s: %w", k, err)
		}
		resolvers[k] = r
		ns, _, _ := strings.Cut(k, "/")
		if podIn[ns] == "" {
			podIn[ns] = k
		}
		if anyPod == "" {
			anyPod = k
		}
	}
	if anyPod == "" {
		return nil, resolvers, nil
	}
	var names []dnsName
	for _, s := range v.svcs {
		fqdn := s.Name + "." + s.Namespace + ".svc." + localcluster.ClusterDomain
		if s.Spec.ClusterIP != "" && s.Spec.ClusterIP != corev1.ClusterIPNone && s.Spec.Type != corev1.ServiceTypeExternalName {
			var superIP string
			if sc := v.superSvc[s.Namespace+"/"+s.Name]; sc != nil {
				superIP = sc.Spec.ClusterIP
			}
			want := []string{s.Spec.ClusterIP}
			_, refused := refusedServices[s.Namespace+"/"+s.Name]
			if refused {
				want = nil
			}
			if from := podIn[s.Namespace]; from != "" {
				names = append(names, dnsName{from: from, name: s.Name, want: want, superIP: superIP, refused: refused})
			}
			names = append(names, dnsName{from: anyPod, name: s.Name + "." + s.Namespace, want: want, superIP: superIP, refused: refused},
				dnsName{from: anyPod, name: fqdn, want: want, superIP: superIP, refused: refused})
			continue
		}
		if s.Spec.ClusterIP != corev1.ClusterIPNone || len(s.Spec.Selector) == 0 {
			continue
		}
		eps, err := v.tu.cp.Client.DiscoveryV1().EndpointSlices(s.Namespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + s.Name})
		if err != nil {
			return nil, nil, err
		}
		for _, es := range eps.Items {
			if es.AddressType != discoveryv1.AddressTypeIPv4 {
				continue
			}
			for _, ep := range es.Endpoints {
				if ep.Hostname == nil || len(ep.Addresses) == 0 || (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) {
					continue
				}
				if !podIPs[ep.Addresses[0]] {
					return nil, nil, fmt.Errorf("endpoint %s of headless Service %s/%s is %s, not a super Pod IP of the tenant", *ep.Hostname, s.Namespace, s.Name, ep.Addresses[0])
				}
				names = append(names, dnsName{from: anyPod, name: *ep.Hostname + "." + fqdn, want: []string{ep.Addresses[0]}, pod: true})
			}
		}
	}
	return names, resolvers, nil
}
