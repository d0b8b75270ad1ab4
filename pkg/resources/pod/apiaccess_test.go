package pod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func TestSetAPIServerAccess(t *testing.T) {
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init"}},
		Containers: []corev1.Container{
			{Name: "a", Env: []corev1.EnvVar{{Name: "OTHER", Value: "x"}}},
			{Name: "b", Env: []corev1.EnvVar{{Name: "KUBERNETES_SERVICE_HOST", Value: "mine"}}},
		},
	}
	setAPIServerAccess(spec, "10.1.2.3", 6443, "")
	env := func(c corev1.Container) map[string]string {
		m := map[string]string{}
		for _, e := range c.Env {
			m[e.Name] = e.Value
		}
		return m
	}
	a := env(spec.Containers[0])
	for k, want := range map[string]string{
		"OTHER": "x", "KUBERNETES_SERVICE_HOST": "10.1.2.3", "KUBERNETES_SERVICE_PORT": "6443",
		"KUBERNETES_PORT": "tcp://10.1.2.3:6443", "KUBERNETES_PORT_443_TCP_ADDR": "10.1.2.3",
	} {
		if a[k] != want {
			t.Errorf("container a: %s = %q, want %q", k, a[k], want)
		}
	}
	if got := env(spec.Containers[1])["KUBERNETES_SERVICE_HOST"]; got != "mine" {
		t.Errorf("a container's own KUBERNETES_SERVICE_HOST overwritten: %q", got)
	}
	if got := env(spec.InitContainers[0])["KUBERNETES_SERVICE_PORT"]; got != "6443" {
		t.Errorf("init container KUBERNETES_SERVICE_PORT = %q", got)
	}
	want := []corev1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}}}
	if d := cmp.Diff(want, spec.HostAliases); d != "" {
		t.Errorf("host aliases (-want +got):\n%s", d)
	}

	byName := &corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}
	setAPIServerAccess(byName, "tenant-a.example.com", 443, "corp.local")
	if len(byName.HostAliases) != 0 {
		t.Errorf("a host name cannot be aliased: %v", byName.HostAliases)
	}
	if env(byName.Containers[0])["KUBERNETES_SERVICE_HOST"] != "tenant-a.example.com" {
		t.Errorf("env = %v", byName.Containers[0].Env)
	}
}

func TestSetTenantDNS(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "uid-1", Informers: informers.NewSharedInformerFactory(fake.NewClientset(), 0)}
	env := &resources.Env{TenantDNS: true, ClusterDomain: "cluster.local",
		SuperInformers: informers.NewSharedInformerFactory(fake.NewClientset(), 0)}
	tenantSvcs := c.Informers.Core().V1().Services().Informer().GetIndexer()
	superSvcs := env.SuperInformers.Core().V1().Services().Informer().GetIndexer()

	// No tenant DNS Service: the Pod keeps the super cluster's DNS.
	spec := &corev1.PodSpec{}
	if err := setTenantDNS(env, c, spec, "shop"); err != nil || spec.DNSPolicy != "" || spec.DNSConfig != nil {
		t.Fatalf("without tenant DNS: err %v, policy %q, config %v", err, spec.DNSPolicy, spec.DNSConfig)
	}
	// A tenant DNS Service whose super copy is not there yet: wait (error), change nothing.
	_ = tenantSvcs.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: TenantDNSNamespace, Name: TenantDNSService}})
	if err := setTenantDNS(env, c, spec, "shop"); err == nil || spec.DNSConfig != nil {
		t.Fatalf("super copy missing: err %v, config %v", err, spec.DNSConfig)
	}
	_ = superSvcs.Add(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: resources.SuperNamespace(c, TenantDNSNamespace), Name: TenantDNSService},
		Spec:       corev1.ServiceSpec{ClusterIP: "10.96.0.53"},
	})
	spec = &corev1.PodSpec{DNSConfig: &corev1.PodDNSConfig{Searches: []string{"corp"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("2")}}}}
	if err := setTenantDNS(env, c, spec, "shop"); err != nil {
		t.Fatal(err)
	}
	want := &corev1.PodDNSConfig{
		Nameservers: []string{"10.96.0.53"},
		Searches:    []string{"shop.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp"},
		Options:     []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("2")}},
	}
	if spec.DNSPolicy != corev1.DNSNone {
		t.Errorf("dnsPolicy = %q", spec.DNSPolicy)
	}
	if d := cmp.Diff(want, spec.DNSConfig); d != "" {
		t.Errorf("dnsConfig (-want +got):\n%s", d)
	}
	// The kubelet's duplicates rule: a nameserver or search the Pod repeats appears once.
	spec = &corev1.PodSpec{DNSConfig: &corev1.PodDNSConfig{Nameservers: []string{"10.96.0.53", "1.1.1.1"}, Searches: []string{"cluster.local", "corp"}}}
	if err := setTenantDNS(env, c, spec, "shop"); err != nil {
		t.Fatal(err)
	}
	want = &corev1.PodDNSConfig{
		Nameservers: []string{"10.96.0.53", "1.1.1.1"},
		Searches:    []string{"shop.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp"},
		Options:     []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("5")}},
	}
	if d := cmp.Diff(want, spec.DNSConfig); d != "" {
		t.Errorf("dnsConfig with repeated entries (-want +got):\n%s", d)
	}
	// ClusterFirstWithHostNet means cluster DNS with or without hostNetwork; ClusterFirst with
	// hostNetwork means the node's resolver (the kubelet's rule).
	for _, hostNet := range []bool{false, true} {
		s := &corev1.PodSpec{DNSPolicy: corev1.DNSClusterFirstWithHostNet, HostNetwork: hostNet}
		if err := setTenantDNS(env, c, s, "shop"); err != nil || s.DNSPolicy != corev1.DNSNone || s.DNSConfig == nil || s.DNSConfig.Nameservers[0] != "10.96.0.53" {
			t.Errorf("ClusterFirstWithHostNet (hostNetwork %v) not pointed at the tenant DNS: %q %v %v", hostNet, s.DNSPolicy, s.DNSConfig, err)
		}
	}
	// Other policies keep their meaning; the flag turns it all off.
	for _, s := range []*corev1.PodSpec{{DNSPolicy: corev1.DNSDefault}, {DNSPolicy: corev1.DNSNone}, {HostNetwork: true}, {DNSPolicy: corev1.DNSClusterFirst, HostNetwork: true}} {
		p := s.DNSPolicy
		if err := setTenantDNS(env, c, s, "shop"); err != nil || s.DNSPolicy != p || s.DNSConfig != nil {
			t.Errorf("policy %q (hostNetwork %v) changed: %q %v %v", p, s.HostNetwork, s.DNSPolicy, s.DNSConfig, err)
		}
	}
	env.TenantDNS = false
	s := &corev1.PodSpec{}
	if err := setTenantDNS(env, c, s, "shop"); err != nil || s.DNSConfig != nil {
		t.Errorf("--tenant-dns=false: %v %v", s.DNSConfig, err)
	}
}
