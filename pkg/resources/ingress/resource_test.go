package ingress

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func TestDesired(t *testing.T) {
	c := &tenant.Cluster{Name: "t", UID: "u"}
	// Controller annotations reach the super copy when the metadata allowlist names them.
	c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Metadata: &tenancyv1alpha1.MetadataPolicy{
		AllowedAnnotationPrefixes: []string{"nginx.ingress.kubernetes.io/rewrite-target"}}}))
	superNS := resources.SuperNamespace(c, "apps")
	class := "nginx"
	prefix := networkingv1.PathTypePrefix
	in := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps", UID: "i-uid", Annotations: map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/"}},
		Spec: networkingv1.IngressSpec{
			IngressClassName: &class,
			TLS:              []networkingv1.IngressTLS{{Hosts: []string{"web.example"}, SecretName: "web-tls"}},
			Rules: []networkingv1.IngressRule{{Host: "web.example", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}},
		},
		Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "10.0.0.1"}}}},
	}
	cases := map[string]struct {
		existing    *networkingv1.Ingress
		wantAnnKept string
	}{
		"create": {},
		"update keeps super annotations": {
			existing:    &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"lb.example/id": "42"}}},
			wantAnnKept: "lb.example/id",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var existing metav1.Object
			if tc.existing != nil {
				existing = tc.existing
			}
			got := Desired(nil, c, in, superNS, existing)
			if d := cmp.Diff(in.Spec, got.Spec); d != "" {
				t.Errorf("spec changed (-tenant +super):\n%s", d)
			}
			if len(got.Status.LoadBalancer.Ingress) != 0 {
				t.Error("tenant status copied down")
			}
			if !conversion.OwnedByTenant(got, "u") || got.Namespace != superNS || got.Annotations["nginx.ingress.kubernetes.io/rewrite-target"] != "/" {
				t.Errorf("meta %+v", got.ObjectMeta)
			}
			if tc.wantAnnKept != "" && got.Annotations[tc.wantAnnKept] == "" {
				t.Errorf("super annotation %s dropped", tc.wantAnnKept)
			}
			if !Equal(got, got.DeepCopy()) {
				t.Error("Equal(x, copy) = false")
			}
			other := got.DeepCopy()
			other.Spec.IngressClassName = nil
			if Equal(got, other) {
				t.Error("Equal ignores ingressClassName")
			}
		})
	}
}
