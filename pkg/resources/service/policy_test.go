package service_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/resources/service"
)

// tenantService returns tenant Service shop/web after mutate.
func tenantService(mutate func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: types.UID("uid-web"), ResourceVersion: "1"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
	if mutate != nil {
		mutate(s)
	}
	return s
}

func lbClass(s string) *string { return &s }

// A tenant Service asking the super cluster for shared node ports, a cloud load balancer, a
// DNS name of its choice, an address or a load-balancer implementation gets no super copy; the
// tenant is told once (Warning Event, counter), and the reconcile ends without a retry.
func TestDownwardRefusesServicesThePolicyDoesNotAllow(t *testing.T) {
	allowLB := &tenancyv1alpha1.TenantPolicySpec{Services: &tenancyv1alpha1.ServicePolicy{
		AllowedTypes: []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer}}}
	for name, tc := range map[string]struct {
		pol    *tenancyv1alpha1.TenantPolicySpec
		mutate func(*corev1.Service)
		rule   policy.Rule // "" = synced
	}{
		"ClusterIP":          {},
		"headless ClusterIP": {mutate: func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }},
		"type unset":         {mutate: func(s *corev1.Service) { s.Spec.Type = "" }},
		"NodePort":           {mutate: func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }, rule: policy.RuleServiceType},
		"LoadBalancer":       {mutate: func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeLoadBalancer }, rule: policy.RuleServiceType},
		"ExternalName": {mutate: func(s *corev1.Service) {
			s.Spec.Type, s.Spec.ExternalName, s.Spec.Selector = corev1.ServiceTypeExternalName, "kubernetes.default.svc.cluster.local", nil
		}, rule: policy.RuleServiceType},
		"LoadBalancer allowed": {pol: allowLB, mutate: func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeLoadBalancer }},
		"externalTrafficPolicy Local": {pol: allowLB, mutate: func(s *corev1.Service) {
			s.Spec.Type, s.Spec.ExternalTrafficPolicy = corev1.ServiceTypeLoadBalancer, corev1.ServiceExternalTrafficPolicyLocal
		}, rule: policy.RuleExternalTrafficPolicy},
		"loadBalancerIP": {pol: allowLB, mutate: func(s *corev1.Service) {
			s.Spec.Type, s.Spec.LoadBalancerIP = corev1.ServiceTypeLoadBalancer, "203.0.113.7"
		}, rule: policy.RuleLoadBalancerIP},
		"loadBalancerClass": {pol: allowLB, mutate: func(s *corev1.Service) {
			s.Spec.Type, s.Spec.LoadBalancerClass = corev1.ServiceTypeLoadBalancer, lbClass("example.com/internal")
		}, rule: policy.RuleLoadBalancerClass},
	} {
		t.Run(name, func(t *testing.T) {
			h := restest.New(t, "svc-"+strings.ReplaceAll(strings.ToLower(name), " ", "-"), "shop")
			if tc.pol != nil {
				h.SetPolicy(tc.pol)
			}
			svc := tenantService(tc.mutate)
			h.Tenant(h.C.Informers.Core().V1().Services().Informer(), svc)
			before := h.Denials(resources.KindService, tc.rule)
			r := service.Resource
			r.SuperInformer(h.Env)
			superNS := resources.SuperNamespace(h.C, "shop")
			for range 2 { // the second pass (a resync) reports nothing new
				if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "web"); err != nil {
					t.Fatalf("Downward = %v, want nil (no retry)", err)
				}
				if s, err := h.SuperCS.CoreV1().Services(superNS).Get(h.Ctx(), "web", metav1.GetOptions{}); err == nil {
					h.Super(r.SuperInformer(h.Env), s) // what a running informer would see
				}
			}
			_, err := h.SuperCS.CoreV1().Services(superNS).Get(h.Ctx(), "web", metav1.GetOptions{})
			events := h.Events()
			if tc.rule == "" {
				if err != nil {
					t.Fatalf("allowed Service not synced: %v (events %v)", err, events)
				}
				if len(events) != 0 {
					t.Errorf("events for an allowed Service: %v", events)
				}
				return
			}
			if !apierrors.IsNotFound(err) {
				t.Errorf("refused Service has a super copy (err %v)", err)
			}
			if len(events) != 1 || !strings.Contains(events[0], "Warning PolicyDenied "+string(tc.rule)+": ") {
				t.Errorf("events = %q, want one Warning PolicyDenied %s", events, tc.rule)
			}
			if got := h.Denials(resources.KindService, tc.rule) - before; got != 1 {
				t.Errorf("vcsyncer_policy_denials_total{rule=%s} = %v, want 1", tc.rule, got)
			}
		})
	}
}

// A Service synced under a policy that allowed it loses its super copy when the policy
// changes to refuse it: keeping it would leave the escape open for as long as the Service lives.
func TestDownwardDeletesTheSuperCopyOfAServiceAPolicyChangeRefuses(t *testing.T) {
	h := restest.New(t, "svc-policy-change", "shop")
	h.SetPolicy(&tenancyv1alpha1.TenantPolicySpec{Services: &tenancyv1alpha1.ServicePolicy{
		AllowedTypes: []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort}}})
	svc := tenantService(func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort })
	h.Tenant(h.C.Informers.Core().V1().Services().Informer(), svc)
	r := service.Resource
	superNS := resources.SuperNamespace(h.C, "shop")
	super := service.Desired(h.C, svc, superNS, nil)
	super.UID = "super-uid"
	h.Super(r.SuperInformer(h.Env), super)
	h.Super(h.Env.SuperInformers.Core().V1().Namespaces().Informer(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: superNS}})

	h.SetPolicy(nil)
	if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "web"); err != nil {
		t.Fatalf("Downward = %v", err)
	}
	if _, err := h.SuperCS.CoreV1().Services(superNS).Get(h.Ctx(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("super copy of a now refused NodePort Service kept (err %v)", err)
	}
	if ev := h.Events(); len(ev) != 1 || !strings.Contains(ev[0], string(policy.RuleServiceType)) {
		t.Errorf("events %q", ev)
	}
}

// A Service's cloud load-balancer annotations are not copied (reported once); the status the
// syncer copies up (a new resourceVersion, the same generation) does not repeat the report.
func TestDownwardReportsDroppedServiceAnnotationsOncePerGeneration(t *testing.T) {
	h := restest.New(t, "svc-meta", "shop")
	svc := tenantService(func(s *corev1.Service) {
		s.Generation = 1
		s.Annotations = map[string]string{"service.beta.kubernetes.io/aws-load-balancer-internal": "false", "note": "x"}
	})
	inf := h.C.Informers.Core().V1().Services().Informer()
	h.Tenant(inf, svc)
	r := service.Resource
	superNS := resources.SuperNamespace(h.C, "shop")
	for rv := range 3 {
		svc = svc.DeepCopy()
		svc.ResourceVersion = fmt.Sprint(rv + 1)
		h.Tenant(inf, svc)
		if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "web"); err != nil {
			t.Fatal(err)
		}
		s, err := h.SuperCS.CoreV1().Services(superNS).Get(h.Ctx(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Annotations["service.beta.kubernetes.io/aws-load-balancer-internal"]; ok || s.Annotations["note"] != "x" {
			t.Fatalf("super annotations %v", s.Annotations)
		}
		h.Super(r.SuperInformer(h.Env), s)
	}
	if ev := h.Events(); len(ev) != 1 || !strings.Contains(ev[0], "metadataKey: Service shop/web was synced without annotation service.beta.kubernetes.io/aws-load-balancer-internal") {
		t.Errorf("events %q", ev)
	}
}
