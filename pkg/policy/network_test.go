package policy

import (
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

func TestHostAllowed(t *testing.T) {
	patterns := []string{"shop.example.com", "*.apps.example.com"}
	for host, want := range map[string]bool{
		"shop.example.com": true, "SHOP.example.com": true, "a.apps.example.com": true, "a.b.apps.example.com": true,
		"*.apps.example.com": true, "*.x.apps.example.com": true,
		"apps.example.com": false, "example.com": false, "*.example.com": false, "bank.example.com": false,
		"xapps.example.com": false, "shop.example.com.evil.io": false, "": false, "*": false,
	} {
		if got := HostAllowed(patterns, host); got != want {
			t.Errorf("HostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
	if !HostAllowed([]string{"*"}, "") || !HostAllowed([]string{"*"}, "any.where") {
		t.Error(`"*" does not allow every host`)
	}
	if HostAllowed(nil, "shop.example.com") {
		t.Error("no patterns allow a host")
	}
}

func TestEndpointIPProblem(t *testing.T) {
	p := &tenancyv1alpha1.NetworkPolicy{AllowedEndpointCIDRs: []string{"192.0.2.0/24", "2001:db8::/32", "not-a-cidr", ""}}
	own := func(a netip.Addr) bool { return a == netip.MustParseAddr("10.244.1.5") }
	for ip, ok := range map[string]bool{
		"10.244.1.5": true, "::ffff:10.244.1.5": true, "192.0.2.44": true, "2001:db8::1": true,
		"10.244.2.7": false, "127.0.0.1": false, "::1": false, "169.254.169.254": false, "fe80::1": false,
		"0.0.0.0": false, "224.0.0.1": false, "::ffff:127.0.0.1": false, "db.example.com": false, "": false,
	} {
		got := EndpointIPProblem(p, ip, own)
		if (got == "") != ok {
			t.Errorf("EndpointIPProblem(%q) = %q, want allowed=%v", ip, got, ok)
		}
	}
	// Loopback and link-local stay refused even inside an allowed range.
	wide := &tenancyv1alpha1.NetworkPolicy{AllowedEndpointCIDRs: []string{"0.0.0.0/0"}}
	if EndpointIPProblem(wide, "127.0.0.1", nil) == "" || EndpointIPProblem(wide, "169.254.169.254", nil) == "" || EndpointIPProblem(wide, "8.8.8.8", nil) != "" {
		t.Error("0.0.0.0/0 handled wrongly")
	}
	if TargetRefProblem("shop", &corev1.ObjectReference{Namespace: "kube-system", Name: "x"}) == "" ||
		TargetRefProblem("shop", &corev1.ObjectReference{Namespace: "shop"}) != "" || TargetRefProblem("shop", nil) != "" {
		t.Error("TargetRefProblem")
	}
	d := EndpointDenial("Endpoints", "shop", "ext", []string{"a", "b", "c", "d"})
	if d.Rule != RuleEndpointAddress || !strings.Contains(d.Message, "and more") || strings.Contains(d.Message, "d;") {
		t.Errorf("EndpointDenial = %v", d.Error())
	}
}

func TestCheckIngress(t *testing.T) {
	p := &tenancyv1alpha1.NetworkPolicy{AllowedIngressClasses: []string{"nginx"}, AllowedIngressHosts: []string{"*.shop.example.com"}}
	class := "nginx"
	base := func() *networkingv1.Ingress {
		return &networkingv1.Ingress{Spec: networkingv1.IngressSpec{IngressClassName: &class,
			Rules: []networkingv1.IngressRule{{Host: "www.shop.example.com"}}}}
	}
	for name, tc := range map[string]struct {
		mutate  func(*networkingv1.Ingress)
		dropped []string
		want    Rule
	}{
		"allowed":          {},
		"no rules at all":  {mutate: func(i *networkingv1.Ingress) { i.Spec.Rules = nil }},
		"no class":         {mutate: func(i *networkingv1.Ingress) { i.Spec.IngressClassName = nil }, want: RuleIngressClass},
		"annotation class": {mutate: func(i *networkingv1.Ingress) { i.Annotations = map[string]string{IngressClassAnnotation: "haproxy"} }, want: RuleIngressClass},
		"host":             {mutate: func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = "shop.example.com" }, want: RuleIngressHost},
		"tls host": {mutate: func(i *networkingv1.Ingress) {
			i.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"evil.example.com"}}}
		}, want: RuleIngressHost},
		"tls secret elsewhere": {mutate: func(i *networkingv1.Ingress) {
			i.Spec.TLS = []networkingv1.IngressTLS{{SecretName: "kube-system/cert"}}
		}, want: RuleIngressSnippet},
		"server snippet dropped": {dropped: []string{"a.io/x", "nginx.ingress.kubernetes.io/server-snippet"}, want: RuleIngressSnippet},
		"haproxy snippet":        {dropped: []string{"haproxy.org/backend-config-snippet"}, want: RuleIngressSnippet},
		"other dropped":          {dropped: []string{"nginx.ingress.kubernetes.io/whitelist-source-range"}, want: RuleMetadataKey},
	} {
		t.Run(name, func(t *testing.T) {
			in := base()
			if tc.mutate != nil {
				tc.mutate(in)
			}
			d := CheckIngress(p, in, tc.dropped)
			switch {
			case tc.want == "" && d != nil:
				t.Errorf("refused: %v", d.Error())
			case tc.want != "" && (d == nil || d.Rule != tc.want):
				t.Errorf("CheckIngress = %v, want %s", d, tc.want)
			}
		})
	}
}
