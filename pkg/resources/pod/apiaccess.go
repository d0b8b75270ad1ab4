package pod

import (
	"fmt"
	"net"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// How a tenant Pod running in the super cluster finds its own apiserver and its own Services.
//
// A kubelet gives every container the KUBERNETES_SERVICE_* / KUBERNETES_PORT* variables of its
// cluster's "kubernetes" Service (pkg/kubelet/envvars; always, even with enableServiceLinks
// false), and the cluster DNS resolves kubernetes.default to the same apiserver. In the super
// cluster both would name the SUPER apiserver. The syncer therefore:
//   - sets those variables explicitly on every container to the tenant apiserver's address
//     (explicit container env wins over the kubelet's service variables), unless the tenant
//     Pod sets them itself;
//   - adds host aliases kubernetes, kubernetes.default, kubernetes.default.svc and
//     kubernetes.default.svc.<cluster domain> for the tenant apiserver when its address is an
//     IP (a hostname cannot be aliased; DNS then decides);
//   - points the Pod's DNS at the tenant's DNS Service (kube-system/kube-dns) when the tenant
//     has one and the Pod uses the cluster DNS (dnsPolicy ClusterFirst without hostNetwork,
//     or ClusterFirstWithHostNet): dnsPolicy None with the super
//     ClusterIP of the tenant DNS Service's super copy and the tenant's search path, as the
//     kubelet would write it (pkg/kubelet/network/dns). The other service variables (of the
//     Services in the Pod's namespace) are right as the kubelet writes them: the super
//     namespace holds exactly the copies of that tenant namespace's Services.

// apiServerEnvNames are the variables the kubelet derives from the "kubernetes" Service.
var apiServerEnvNames = []string{
	"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "KUBERNETES_SERVICE_PORT_HTTPS",
	"KUBERNETES_PORT", "KUBERNETES_PORT_443_TCP", "KUBERNETES_PORT_443_TCP_PROTO",
	"KUBERNETES_PORT_443_TCP_PORT", "KUBERNETES_PORT_443_TCP_ADDR",
}

// apiServerEnv returns the KUBERNETES_* variables for a tenant apiserver at host:port, in the
// kubelet's format (the Service port name "https", port 443 in the variable names as the
// kubelet writes them for the default "kubernetes" Service).
func apiServerEnv(host string, port int32) []corev1.EnvVar {
	p := strconv.Itoa(int(port))
	hp := net.JoinHostPort(host, p)
	vals := []string{host, p, p, "tcp://" + hp, "tcp://" + hp, "tcp", p, host}
	out := make([]corev1.EnvVar, len(apiServerEnvNames))
	for i, n := range apiServerEnvNames {
		out[i] = corev1.EnvVar{Name: n, Value: vals[i]}
	}
	return out
}

// setAPIServerAccess puts the tenant apiserver's KUBERNETES_* variables on every container of
// spec that does not set them, and the kubernetes host aliases when host is an IP.
func setAPIServerAccess(spec *corev1.PodSpec, host string, port int32, clusterDomain string) {
	if host == "" {
		return
	}
	env := apiServerEnv(host, port)
	add := func(cs []corev1.Container) {
		for i := range cs {
			for _, e := range env {
				if !slices.ContainsFunc(cs[i].Env, func(x corev1.EnvVar) bool { return x.Name == e.Name }) {
					cs[i].Env = append(cs[i].Env, e)
				}
			}
		}
	}
	add(spec.InitContainers)
	add(spec.Containers)
	if clusterDomain == "" {
		clusterDomain = "cluster.local"
	}
	if net.ParseIP(host) == nil || spec.HostNetwork {
		return
	}
	spec.HostAliases = append(spec.HostAliases, corev1.HostAlias{IP: host, Hostnames: []string{
		"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc." + clusterDomain,
	}})
}

// TenantDNSNamespace and TenantDNSService name a tenant's cluster DNS Service.
const (
	TenantDNSNamespace = "kube-system"
	TenantDNSService   = "kube-dns"
)

// usesClusterDNS reports whether the kubelet would give a Pod with spec the cluster's DNS
// (pkg/kubelet/network/dns getPodDNSType): dnsPolicy ClusterFirstWithHostNet, or ClusterFirst
// (the API default, also when empty) without hostNetwork. ClusterFirst with hostNetwork, Default
// and None do not use it.
func usesClusterDNS(spec *corev1.PodSpec) bool {
	switch spec.DNSPolicy {
	case corev1.DNSClusterFirstWithHostNet:
		return true
	case corev1.DNSClusterFirst, "":
		return !spec.HostNetwork
	}
	return false
}

// setTenantDNS points a Pod of tenant namespace ns that uses the cluster DNS (usesClusterDNS)
// at the tenant's DNS Service, when the tenant has one: dnsPolicy None and the dnsConfig the
// kubelet would write for the tenant's cluster DNS (pkg/kubelet/network/dns): nameserver the
// super ClusterIP of the DNS Service's super copy, searches <ns>.svc.<domain> svc.<domain>
// <domain>, ndots 5, then the Pod's own dnsConfig merged the kubelet's way (nameservers and
// searches appended without repeats, options by name, the Pod's winning; at most 3
// nameservers). It returns an error (retried) when the tenant DNS Service exists but its super
// copy has no ClusterIP yet, so the Pod never starts with the wrong DNS.
func setTenantDNS(env *resources.Env, c *tenant.Cluster, spec *corev1.PodSpec, ns string) error {
	if !env.TenantDNS || !usesClusterDNS(spec) {
		return nil // Default, None and ClusterFirst with hostNetwork keep their meaning in the super cluster
	}
	if _, err := c.Informers.Core().V1().Services().Lister().Services(TenantDNSNamespace).Get(TenantDNSService); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // no tenant DNS: the super cluster's DNS serves the Pod
		}
		return err
	}
	superNS := resources.SuperNamespace(c, TenantDNSNamespace)
	svc, err := env.SuperInformers.Core().V1().Services().Lister().Services(superNS).Get(TenantDNSService)
	if err != nil || svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return fmt.Errorf("tenant DNS Service %s/%s has no super ClusterIP yet; the Pod waits for it", TenantDNSNamespace, TenantDNSService)
	}
	domain := env.ClusterDomain
	if domain == "" {
		domain = "cluster.local"
	}
	cfg := &corev1.PodDNSConfig{
		Nameservers: []string{svc.Spec.ClusterIP},
		Searches:    []string{ns + ".svc." + domain, "svc." + domain, domain},
		Options:     []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("5")}},
	}
	if u := spec.DNSConfig; u != nil { // the user's additions are merged as the kubelet does
		cfg.Nameservers = appendMissing(cfg.Nameservers, u.Nameservers...)
		cfg.Searches = appendMissing(cfg.Searches, u.Searches...)
		for _, o := range u.Options {
			cfg.Options = slices.DeleteFunc(cfg.Options, func(x corev1.PodDNSConfigOption) bool { return x.Name == o.Name })
			cfg.Options = append(cfg.Options, o)
		}
	}
	if len(cfg.Nameservers) > 3 { // the API's limit (MaxDNSNameservers)
		cfg.Nameservers = cfg.Nameservers[:3]
	}
	spec.DNSPolicy = corev1.DNSNone
	spec.DNSConfig = cfg
	return nil
}

// appendMissing appends to list the items it does not hold yet, in order.
func appendMissing(list []string, items ...string) []string {
	for _, it := range items {
		if !slices.Contains(list, it) {
			list = append(list, it)
		}
	}
	return list
}

func ptr(s string) *string { return &s }
