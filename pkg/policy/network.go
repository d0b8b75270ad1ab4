package policy

import (
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// EndpointIPProblem returns why address ip may not be an endpoint of a tenant Service in the
// super cluster under p, or "" when it may. ownPod reports whether an address is an IP of one
// of the tenant's own running super Pods. The rules, in order:
//
//   - ip must be an IP address (an FQDN names no address to check);
//   - unspecified, loopback, link-local (169.254.0.0/16 with cloud metadata services,
//     fe80::/10) and multicast addresses are never allowed: they mean the node the proxy runs
//     on, whatever the policy says;
//   - an address inside one of p.AllowedEndpointCIDRs (entries that do not parse are ignored)
//     or one ownPod reports is allowed; any other address (another tenant's Pod, a Node's
//     kubelet or etcd, the apiserver, an address outside the cluster) is not.
//
// IPv4-mapped IPv6 addresses are judged as the IPv4 address they map.
func EndpointIPProblem(p *tenancyv1alpha1.NetworkPolicy, ip string, ownPod func(netip.Addr) bool) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip + " is not an IP address"
	}
	a = a.Unmap()
	switch {
	case a.IsUnspecified(), a.IsLoopback(), a.IsLinkLocalUnicast(), a.IsMulticast():
		return ip + " is a loopback, link-local, multicast or unspecified address"
	}
	for _, c := range p.AllowedEndpointCIDRs {
		if pfx, err := netip.ParsePrefix(c); err == nil && pfx.Contains(a) {
			return ""
		}
	}
	if ownPod != nil && ownPod(a) {
		return ""
	}
	return ip + " is neither an IP of this tenant's Pods nor in network.allowedEndpointCIDRs"
}

// TargetRefProblem returns why an endpoint's targetRef may not be copied for an Endpoints or
// EndpointSlice in tenant namespace ns, or "" when it may: a targetRef naming another
// namespace would make the super copy point at objects of another super namespace.
func TargetRefProblem(ns string, ref *corev1.ObjectReference) string {
	if ref == nil || ref.Namespace == "" || ref.Namespace == ns {
		return ""
	}
	return "targetRef " + ref.Kind + " " + ref.Namespace + "/" + ref.Name + " is in another namespace"
}

// EndpointDenial returns the endpointAddress refusal of tenant object namespace/name of kind
// (Endpoints, EndpointSlice) for problems (from EndpointIPProblem and TargetRefProblem), or nil
// when there are none. At most three problems are named.
func EndpointDenial(kind, namespace, name string, problems []string) *Denial {
	if len(problems) == 0 {
		return nil
	}
	shown := problems
	more := ""
	if len(shown) > 3 {
		shown, more = shown[:3], "; and more"
	}
	return Deny(RuleEndpointAddress, "%s %s/%s is not synced: %s%s; only this tenant's Pod IPs may be endpoints, a TenantPolicy's network.allowedEndpointCIDRs allows more",
		kind, namespace, name, strings.Join(shown, "; "), more)
}

// IngressClassAnnotation is the legacy annotation naming an Ingress's class, which ingress
// controllers still honour when spec.ingressClassName is unset.
const IngressClassAnnotation = "kubernetes.io/ingress.class"

// HostAllowed reports whether an Ingress may claim host name host under the allowed host
// patterns: "*" allows every host (and an Ingress rule without host, which claims them all);
// "*.example.com" allows every name one or more labels below example.com (not example.com
// itself) and wildcard hosts below it (*.example.com, *.a.example.com); any other pattern
// allows exactly that name. Names compare case-insensitively.
func HostAllowed(patterns []string, host string) bool {
	host = strings.ToLower(host)
	for _, p := range patterns {
		p = strings.ToLower(p)
		switch {
		case p == "*":
			return true
		case host == "":
			continue
		case strings.HasPrefix(p, "*."):
			suffix := p[1:] // ".example.com"
			if strings.HasPrefix(host, "*.") {
				if strings.HasSuffix(host[1:], suffix) {
					return true
				}
			} else if len(host) > len(suffix) && strings.HasSuffix(host, suffix) {
				return true
			}
		case p == host:
			return true
		}
	}
	return false
}

// CheckIngress returns the first rule of p that tenant Ingress ing breaks, or nil. dropped
// lists the annotation keys of ing that the metadata allowlist keeps out of its super copy
// (without the class annotation, which ingressClass judges). The rules, in order:
//
//   - ingressClass: spec.ingressClassName and the legacy kubernetes.io/ingress.class
//     annotation must each, when set, be in p.AllowedIngressClasses, and one of them must be
//     set (without a class the super cluster's default class serves the Ingress).
//   - ingressHost: every rules[].host and tls[].hosts entry must be allowed by HostAllowed; a
//     rule without host and spec.defaultBackend claim every host name ("*" allows them).
//   - ingressSnippet: a tls secretName with "/" (a namespace/name reference some controllers
//     accept, reaching another namespace's certificate) is refused, and so is an Ingress whose
//     dropped annotations include a controller snippet (a key whose name ends in "-snippet").
//   - metadataKey: any other dropped annotation refuses the Ingress as a whole, because
//     controller annotations decide who may reach the backends (authentication, source
//     ranges): the Ingress synced without them would serve more than the tenant asked.
func CheckIngress(p *tenancyv1alpha1.NetworkPolicy, ing *networkingv1.Ingress, dropped []string) *Denial {
	obj := ing.Namespace + "/" + ing.Name
	classes := []string{}
	if ing.Spec.IngressClassName != nil {
		classes = append(classes, *ing.Spec.IngressClassName)
	}
	if c := ing.Annotations[IngressClassAnnotation]; c != "" {
		classes = append(classes, c)
	}
	if len(classes) == 0 {
		return Deny(RuleIngressClass, "Ingress %s names no class (the super cluster's default class would serve it); allowed: %s; a TenantPolicy's network.allowedIngressClasses allows more",
			obj, namesOrNone(p.AllowedIngressClasses))
	}
	for _, c := range classes {
		if !slices.Contains(p.AllowedIngressClasses, c) {
			return Deny(RuleIngressClass, "Ingress %s uses class %s; allowed: %s; a TenantPolicy's network.allowedIngressClasses allows more",
				obj, c, namesOrNone(p.AllowedIngressClasses))
		}
	}
	hostDenial := func(what string) *Denial {
		return Deny(RuleIngressHost, "Ingress %s claims %s; allowed hosts: %s; a TenantPolicy's network.allowedIngressHosts allows more",
			obj, what, namesOrNone(p.AllowedIngressHosts))
	}
	if ing.Spec.DefaultBackend != nil && !HostAllowed(p.AllowedIngressHosts, "") {
		return hostDenial("every host name (spec.defaultBackend)")
	}
	for _, r := range ing.Spec.Rules {
		if !HostAllowed(p.AllowedIngressHosts, r.Host) {
			if r.Host == "" {
				return hostDenial("every host name (a rule without host)")
			}
			return hostDenial("host " + r.Host)
		}
	}
	for _, t := range ing.Spec.TLS {
		for _, h := range t.Hosts {
			if !HostAllowed(p.AllowedIngressHosts, h) {
				return hostDenial("TLS host " + h)
			}
		}
		if strings.Contains(t.SecretName, "/") {
			return Deny(RuleIngressSnippet, "Ingress %s names TLS Secret %s of another namespace; only Secrets of its own namespace may be named",
				obj, t.SecretName)
		}
	}
	for _, k := range dropped {
		name := k[strings.LastIndex(k, "/")+1:]
		if strings.HasSuffix(name, "-snippet") || name == "snippet" {
			return Deny(RuleIngressSnippet, "Ingress %s carries controller snippet annotation %s, which the annotation allowlist leaves out; the Ingress is not synced without it",
				obj, k)
		}
	}
	if len(dropped) > 0 {
		return Deny(RuleMetadataKey, "Ingress %s carries annotations %s, which the annotation allowlist leaves out; it is not synced without them (they may restrict who reaches its backends); a TenantPolicy's metadata.allowedAnnotationPrefixes allows more",
			obj, strings.Join(dropped, ", "))
	}
	return nil
}
