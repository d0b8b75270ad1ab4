package dns_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// TestTenantDNS: tenant-1 has kube-system/kube-dns (the framework creates it, as kubeadm does)
// and a CoreDNS for it; tenant-2 has no kube-dns Service. With the syncer's default options:
//   - every ClusterFirst super Pod of tenant-1 gets dnsPolicy None, nameserver = the super
//     ClusterIP of kube-dns's super copy, searches <ns>.svc.cluster.local svc.cluster.local
//     cluster.local, ndots 5;
//   - resolving with exactly that config (search order by miekg/dns NameList, the nameserver
//     mapped to the local CoreDNS) answers short names, <svc>.<ns>, FQDNs and the
//     <pod>.<svc>.<ns> names of StatefulSet Pods with the tenant Service's ClusterIP and the
//     super Pods' IPs; super-cluster namespaces and Services are invisible;
//   - dnsPolicy Default Pods and all Pods of tenant-2 keep the super cluster's DNS.
func TestTenantDNS(t *testing.T) {
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 2}, 2)
	ctx := context.Background()
	super := env.Super.Client
	t1, t2 := env.Tenants[0], env.Tenants[1]
	if err := t2.Client.CoreV1().Services(localcluster.ClusterDNSNamespace).Delete(ctx, localcluster.ClusterDNSService, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	dnsServer, err := t1.StartCoreDNS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := itest.StartSyncer(t, env.Super.RESTConfig, nil) // default options: --tenant-dns on

	// Super-cluster decoys: a namespace "shop" with Services "web" and "db" and a namespace
	// "payments" with Service "api". Tenant names must never resolve to them.
	for ns, names := range map[string][]string{"shop": {"web", "db"}, "payments": {"api"}} {
		itest.MustCreateNS(t, super, ns)
		for _, n := range names {
			itest.Created(t)(super.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: n},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}))
		}
	}

	for _, tc := range []*localcluster.ControlPlane{t1, t2} {
		for _, ns := range []string{"shop", "other"} {
			itest.MustCreateNS(t, tc.Client, ns)
			// A ClusterIP Service "web" in both namespaces (different IPs), its backend Pod.
			itest.Created(t)(tc.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
				Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}, metav1.CreateOptions{}))
			itest.Created(t)(tc.Client.CoreV1().Pods(ns).Create(ctx, pod("web-1", "web", ""), metav1.CreateOptions{}))
		}
		// A headless Service "db" and its StatefulSet (Pods db-0, db-1 with hostname and
		// subdomain db), and a Pod that keeps the node's resolver.
		itest.Created(t)(tc.Client.CoreV1().Services("shop").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db"},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "db"},
				Ports: []corev1.ServicePort{{Name: "sql", Port: 5432}}}}, metav1.CreateOptions{}))
		itest.Created(t)(tc.Client.AppsV1().StatefulSets("shop").Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2), ServiceName: "db", PodManagementPolicy: appsv1.ParallelPodManagement,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}},
					Spec: pod("", "db", "").Spec}}}, metav1.CreateOptions{}))
		itest.Created(t)(tc.Client.CoreV1().Pods("shop").Create(ctx, pod("host-dns", "tool", corev1.DNSDefault), metav1.CreateOptions{}))
	}
	for _, tc := range []*localcluster.ControlPlane{t1, t2} {
		if err := itest.AddTenant(ctx, c, itest.KubeconfigNS, tc, 1); err != nil {
			t.Fatal(err)
		}
	}
	itest.WaitRunning(t, c, t1.Name)
	itest.WaitRunning(t, c, t2.Name)
	uid1, uid2 := itest.TenantUID(t, c, t1.Name), itest.TenantUID(t, c, t2.Name)
	superNS := func(ns string) string { return conversion.SuperNamespace(t1.Name, uid1, ns) }

	// The super copy of tenant-1's kube-dns: its ClusterIP is the Pods' nameserver, which
	// the local CoreDNS stands in for.
	var superDNSIP string
	itest.Eventually(t, time.Minute, "super copy of tenant-1's kube-dns", func(ctx context.Context) error {
		s, err := super.CoreV1().Services(superNS(localcluster.ClusterDNSNamespace)).Get(ctx, localcluster.ClusterDNSService, metav1.GetOptions{})
		if err != nil {
			return err
		}
		superDNSIP = s.Spec.ClusterIP
		return nil
	})
	servers := map[string]string{superDNSIP: dnsServer.Addr}
	t.Logf("tenant-1 DNS: nameserver %s answered by CoreDNS at %s (%s)", superDNSIP, dnsServer.Addr,
		dnsServer.DigCommand("web.shop.svc.cluster.local"))

	// Every tenant-1 Pod running in the super cluster, with its super IP.
	superPod := map[string]*corev1.Pod{} // "<ns>/<name>" → super Pod
	for _, key := range []string{"shop/web-1", "other/web-1", "shop/db-0", "shop/db-1", "shop/host-dns"} {
		ns, name, _ := cut(key)
		itest.Eventually(t, 2*time.Minute, "super Pod "+key+" Running with an IP", func(ctx context.Context) error {
			p, err := super.CoreV1().Pods(superNS(ns)).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
				return fmt.Errorf("phase %q podIP %q", p.Status.Phase, p.Status.PodIP)
			}
			superPod[key] = p
			return nil
		})
	}

	t.Run("super Pods get the tenant DNS as the kubelet would write it", func(t *testing.T) {
		for key, p := range superPod {
			ns, _, _ := cut(key)
			if key == "shop/host-dns" {
				if p.Spec.DNSPolicy != corev1.DNSDefault || p.Spec.DNSConfig != nil {
					t.Errorf("%s (dnsPolicy Default): dnsPolicy %q dnsConfig %+v, want untouched", key, p.Spec.DNSPolicy, p.Spec.DNSConfig)
				}
				continue
			}
			want := &corev1.PodDNSConfig{Nameservers: []string{superDNSIP},
				Searches: []string{ns + ".svc.cluster.local", "svc.cluster.local", "cluster.local"},
				Options:  []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("5")}}}
			if p.Spec.DNSPolicy != corev1.DNSNone || !equalDNS(p.Spec.DNSConfig, want) {
				t.Errorf("%s: dnsPolicy %q dnsConfig %+v, want None %+v", key, p.Spec.DNSPolicy, p.Spec.DNSConfig, want)
			}
		}
		for _, key := range []string{"shop/db-0", "shop/db-1"} {
			_, name, _ := cut(key)
			if p := superPod[key]; p.Spec.Hostname != name || p.Spec.Subdomain != "db" {
				t.Errorf("%s: hostname %q subdomain %q, want %s, db", key, p.Spec.Hostname, p.Spec.Subdomain, name)
			}
		}
	})

	// What each name must resolve to, from a Pod in namespace "shop" and one in "other".
	ip := func(cs kubernetes.Interface, ns, name string) string {
		s, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s.Spec.ClusterIP
	}
	tenantIP := map[string]string{"shop": ip(t1.Client, "shop", "web"), "other": ip(t1.Client, "other", "web")}
	var superIP map[string]string
	itest.Eventually(t, time.Minute, "super copies of the web Services", func(ctx context.Context) error {
		superIP = map[string]string{}
		for _, ns := range []string{"shop", "other"} {
			s, err := super.CoreV1().Services(superNS(ns)).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			superIP[ns] = s.Spec.ClusterIP
		}
		return nil
	})
	db0, db1 := superPod["shop/db-0"].Status.PodIP, superPod["shop/db-1"].Status.PodIP
	type lookup struct {
		from, name string
		svcNS      string   // the Service's namespace when the answer is a ClusterIP
		podIPs     []string // the super Pod IPs when the answer is a headless Service's
	}
	lookups := []lookup{
		{from: "shop/web-1", name: "web", svcNS: "shop"},
		{from: "shop/web-1", name: "web.shop", svcNS: "shop"},
		{from: "shop/web-1", name: "web.other", svcNS: "other"},
		{from: "shop/web-1", name: "web.shop.svc", svcNS: "shop"},
		{from: "shop/web-1", name: "web.shop.svc.cluster.local", svcNS: "shop"},
		{from: "shop/web-1", name: "web.other.svc.cluster.local.", svcNS: "other"},
		{from: "other/web-1", name: "web", svcNS: "other"},
		{from: "other/web-1", name: "web.shop", svcNS: "shop"},
		{from: "shop/web-1", name: "db", podIPs: []string{db0, db1}},
		{from: "shop/web-1", name: "db-0.db", podIPs: []string{db0}},
		{from: "shop/db-1", name: "db-0.db.shop.svc.cluster.local", podIPs: []string{db0}},
		{from: "other/web-1", name: "db-1.db.shop", podIPs: []string{db1}},
		{from: "other/web-1", name: "db-1.db.shop.svc.cluster.local", podIPs: []string{db1}},
	}
	resolverOf := func(t *testing.T, from string) *localcluster.PodResolver {
		r, err := localcluster.NewPodResolver(superPod[from].Spec.DNSConfig, servers)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	answers := make([][]string, len(lookups))
	t.Run("tenant names resolve with the super Pod's dnsConfig", func(t *testing.T) {
		for i, l := range lookups {
			r := resolverOf(t, l.from)
			want := l.podIPs
			if l.svcNS != "" {
				want = []string{tenantIP[l.svcNS]}
			}
			slices.Sort(want)
			// EndpointSlices follow the Pods' readiness in the tenant: wait for them.
			itest.Eventually(t, time.Minute, fmt.Sprintf("%s from %s", l.name, l.from), func(ctx context.Context) error {
				fqdn, ips, err := r.LookupA(ctx, l.name)
				if err != nil {
					return err
				}
				if !slices.Equal(ips, want) {
					return fmt.Errorf("%s (as %s) = %v, want %v", l.name, fqdn, ips, want)
				}
				answers[i] = ips
				return nil
			})
		}
	})

	t.Run("StatefulSet Pod names answer the super Pod IPs", func(t *testing.T) {
		for i, l := range lookups {
			if l.podIPs != nil && !slices.Equal(answers[i], sorted(l.podIPs)) {
				t.Errorf("%s from %s = %v, want the super Pod IPs %v", l.name, l.from, answers[i], l.podIPs)
			}
		}
	})

	t.Run("Service names answer the super Service ClusterIP", func(t *testing.T) {
		for i, l := range lookups {
			if l.svcNS != "" && !slices.Equal(answers[i], []string{superIP[l.svcNS]}) {
				t.Errorf("%s from %s = %v, want the super Service ClusterIP %s", l.name, l.from, answers[i], superIP[l.svcNS])
			}
		}
	})

	t.Run("super-cluster namespaces and Services stay invisible", func(t *testing.T) {
		superShopWeb := ip(super, "shop", "web")
		r := resolverOf(t, "shop/web-1")
		for _, name := range []string{"api.payments", "api.payments.svc.cluster.local", "web.payments", "db-0.db.payments"} {
			if fqdn, ips, err := r.LookupA(ctx, name); !errors.Is(err, localcluster.ErrNameNotFound) {
				t.Errorf("%s resolved to %v (as %s, err %v), want not found: the super cluster's namespace payments is not the tenant's", name, ips, fqdn, err)
			}
		}
		for i, ips := range answers {
			if slices.Contains(ips, superShopWeb) {
				t.Errorf("%s from %s answered %v, which holds the super cluster's own shop/web ClusterIP %s", lookups[i].name, lookups[i].from, ips, superShopWeb)
			}
		}
	})

	t.Run("a tenant without kube-dns keeps the super cluster's DNS", func(t *testing.T) {
		for _, key := range []string{"shop/web-1", "shop/db-0"} {
			ns, name, _ := cut(key)
			itest.Eventually(t, 2*time.Minute, "tenant-2 super Pod "+key, func(ctx context.Context) error {
				p, err := super.CoreV1().Pods(conversion.SuperNamespace(t2.Name, uid2, ns)).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if p.Spec.DNSPolicy != corev1.DNSClusterFirst || p.Spec.DNSConfig != nil {
					return fmt.Errorf("dnsPolicy %q dnsConfig %+v, want ClusterFirst and none", p.Spec.DNSPolicy, p.Spec.DNSConfig)
				}
				return nil
			})
		}
	})
}

// pod returns a tenant Pod named name with label app=app and dnsPolicy policy (empty: the
// API default, ClusterFirst).
func pod(name, app string, policy corev1.DNSPolicy) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{DNSPolicy: policy, TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/" + app + ":1"}}},
	}
}

// cut splits "<ns>/<name>".
func cut(key string) (string, string, bool) { return strings.Cut(key, "/") }

// equalDNS compares two dnsConfigs field by field.
func equalDNS(a, b *corev1.PodDNSConfig) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.Nameservers, b.Nameservers) && slices.Equal(a.Searches, b.Searches) &&
		slices.EqualFunc(a.Options, b.Options, func(x, y corev1.PodDNSConfigOption) bool {
			return x.Name == y.Name && ptr.Deref(x.Value, "") == ptr.Deref(y.Value, "")
		})
}

// sorted returns a sorted copy of s.
func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
