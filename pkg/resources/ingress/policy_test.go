package ingress_test

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/ingress"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
)

func str(s string) *string { return &s }

func tenantIngress(mutate func(*networkingv1.Ingress)) *networkingv1.Ingress {
	backend := networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}
	prefix := networkingv1.PathTypePrefix
	in := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "ing-uid", ResourceVersion: "1"},
		Spec: networkingv1.IngressSpec{
			IngressClassName: str("nginx"),
			Rules: []networkingv1.IngressRule{{Host: "shop.example.com", IngressRuleValue: networkingv1.IngressRuleValue{
				HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: backend}}}}}},
		},
	}
	if mutate != nil {
		mutate(in)
	}
	return in
}

// A tenant Ingress is served by a controller shared by every tenant: it may use only the
// classes and claim only the host names its policy allows, may not carry controller
// configuration the annotation allowlist leaves out (snippets, auth), and may not name
// Secrets of other namespaces.
func TestDownwardRefusesIngressesThePolicyDoesNotAllow(t *testing.T) {
	pol := &tenancyv1alpha1.TenantPolicySpec{Network: &tenancyv1alpha1.NetworkPolicy{
		AllowedIngressClasses: []string{"nginx"}, AllowedIngressHosts: []string{"shop.example.com", "*.apps.example.com"}}}
	for name, tc := range map[string]struct {
		pol    *tenancyv1alpha1.TenantPolicySpec
		mutate func(*networkingv1.Ingress)
		rule   policy.Rule
	}{
		"allowed class and host": {pol: pol},
		"built-in policy":        {rule: policy.RuleIngressClass},
		"no class (the super cluster's default)": {pol: pol, mutate: func(i *networkingv1.Ingress) { i.Spec.IngressClassName = nil },
			rule: policy.RuleIngressClass},
		"another class": {pol: pol, mutate: func(i *networkingv1.Ingress) { i.Spec.IngressClassName = str("internal") }, rule: policy.RuleIngressClass},
		"legacy class annotation, allowed": {pol: pol, mutate: func(i *networkingv1.Ingress) {
			i.Spec.IngressClassName, i.Annotations = nil, map[string]string{"kubernetes.io/ingress.class": "nginx"}
		}},
		"legacy class annotation, another class": {pol: pol, mutate: func(i *networkingv1.Ingress) {
			i.Spec.IngressClassName, i.Annotations = nil, map[string]string{"kubernetes.io/ingress.class": "internal"}
		}, rule: policy.RuleIngressClass},
		"field allowed, annotation another class": {pol: pol, mutate: func(i *networkingv1.Ingress) {
			i.Annotations = map[string]string{"kubernetes.io/ingress.class": "internal"}
		}, rule: policy.RuleIngressClass},
		"host below a wildcard":                             {pol: pol, mutate: func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = "a.b.apps.example.com" }},
		"wildcard host claimed within the allowed wildcard": {pol: pol, mutate: func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = "*.apps.example.com" }},
		"the wildcard's own domain": {pol: pol, mutate: func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = "apps.example.com" },
			rule: policy.RuleIngressHost},
		"another tenant's host": {pol: pol, mutate: func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = "bank.example.com" },
			rule: policy.RuleIngressHost},
		"a wider wildcard": {pol: pol, mutate: func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = "*.example.com" },
			rule: policy.RuleIngressHost},
		"a rule without host (every host)": {pol: pol, mutate: func(i *networkingv1.Ingress) { i.Spec.Rules[0].Host = "" },
			rule: policy.RuleIngressHost},
		"a default backend (every host)": {pol: pol, mutate: func(i *networkingv1.Ingress) {
			i.Spec.DefaultBackend = i.Spec.Rules[0].HTTP.Paths[0].Backend.DeepCopy()
		}, rule: policy.RuleIngressHost},
		"a TLS host not allowed": {pol: pol, mutate: func(i *networkingv1.Ingress) {
			i.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"shop.example.com", "bank.example.com"}, SecretName: "tls"}}
		}, rule: policy.RuleIngressHost},
		"TLS allowed": {pol: pol, mutate: func(i *networkingv1.Ingress) {
			i.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"shop.example.com"}, SecretName: "tls"}}
		}},
		"a Secret of another namespace": {pol: pol, mutate: func(i *networkingv1.Ingress) {
			i.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"shop.example.com"}, SecretName: "ingress-nginx/default-cert"}}
		}, rule: policy.RuleIngressSnippet},
		"a configuration snippet": {pol: pol, mutate: func(i *networkingv1.Ingress) {
			i.Annotations = map[string]string{"nginx.ingress.kubernetes.io/configuration-snippet": "more_set_headers \"X: $(cat /var/run/secrets/kubernetes.io/serviceaccount/token)\";"}
		}, rule: policy.RuleIngressSnippet},
		"an auth annotation the allowlist leaves out": {pol: pol, mutate: func(i *networkingv1.Ingress) {
			i.Annotations = map[string]string{"nginx.ingress.kubernetes.io/auth-url": "http://auth.shop.svc"}
		}, rule: policy.RuleMetadataKey},
	} {
		t.Run(name, func(t *testing.T) {
			h := restest.New(t, "ing-"+strings.NewReplacer(" ", "-", "'", "", "(", "", ")", "", ",", "").Replace(strings.ToLower(name)), "shop")
			if tc.pol != nil {
				h.SetPolicy(tc.pol)
			}
			in := tenantIngress(tc.mutate)
			h.Tenant(h.C.Informers.Networking().V1().Ingresses().Informer(), in)
			r := ingress.Resource
			r.SuperInformer(h.Env)
			if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "web"); err != nil {
				t.Fatalf("Downward = %v", err)
			}
			got, err := h.SuperCS.NetworkingV1().Ingresses(resources.SuperNamespace(h.C, "shop")).Get(h.Ctx(), "web", metav1.GetOptions{})
			ev := h.Events()
			if tc.rule == "" {
				if err != nil || len(ev) != 0 {
					t.Fatalf("allowed Ingress: get %v, events %q", err, ev)
				}
				if cls := in.Annotations["kubernetes.io/ingress.class"]; cls != "" && got.Annotations["kubernetes.io/ingress.class"] != cls {
					t.Errorf("super copy lost its class annotation: %v", got.Annotations)
				}
				return
			}
			if !apierrors.IsNotFound(err) {
				t.Errorf("refused Ingress synced (err %v)", err)
			}
			if len(ev) != 1 || !strings.Contains(ev[0], "Warning PolicyDenied "+string(tc.rule)+": ") {
				t.Errorf("events %q, want one %s", ev, tc.rule)
			}
			if got := h.Denials(resources.KindIngress, tc.rule); got != 1 {
				t.Errorf("denials %v", got)
			}
		})
	}
}
