package isolation

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// selectorless returns a selector-less Service name with one TCP port.
func selectorless(name string, port int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "p", Port: port, Protocol: corev1.ProtocolTCP}}},
	}
}

// superAddresses returns the addresses of A's super Endpoints and EndpointSlices of Service
// name, each with where it was found.
func (s *suite) superAddresses(ctx context.Context, name string) (map[string]string, error) {
	out := map[string]string{}
	ep, err := s.super.CoreV1().Endpoints(s.aSuperNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	if err == nil {
		for _, ss := range ep.Subsets {
			for _, a := range append(ss.Addresses, ss.NotReadyAddresses...) {
				out[a.IP] = "super Endpoints " + ep.Namespace + "/" + ep.Name
			}
		}
	}
	sl, err := s.super.DiscoveryV1().EndpointSlices(s.aSuperNS).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
	if err != nil {
		return nil, err
	}
	for _, sli := range sl.Items {
		for _, e := range sli.Endpoints {
			for _, a := range e.Addresses {
				out[a] = "super EndpointSlice " + sli.Namespace + "/" + sli.Name
			}
		}
	}
	return out, nil
}

// addressEscape returns an escaped func: A's super endpoints of Service name hold ip.
func (s *suite) addressEscape(name, ip, what string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		addrs, err := s.superAddresses(ctx, name)
		if err != nil {
			return nil
		}
		if where, ok := addrs[ip]; ok {
			return fmt.Errorf("%s of Service %s points at %s (%s)", where, name, ip, what)
		}
		return nil
	}
}

// attackEndpointsOtherPod: Endpoints of a selector-less Service naming tenant B's Pod IP:
// rule endpointAddress (default: only A's own Pod IPs).
func (s *suite) attackEndpointsOtherPod(t *testing.T) {
	const name = "steal-b"
	s.run(t, attack{
		kind: "Endpoints", ns: aNS, names: []string{name}, rules: []string{"endpointAddress"},
		create: func(ctx context.Context) error {
			if _, err := s.a.Client.CoreV1().Services(aNS).Create(ctx, selectorless(name, 80), metav1.CreateOptions{}); err != nil {
				return err
			}
			_, err := s.a.Client.CoreV1().Endpoints(aNS).Create(ctx, &corev1.Endpoints{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Subsets: []corev1.EndpointSubset{{
					Addresses: []corev1.EndpointAddress{{IP: s.bPodIP}},
					Ports:     []corev1.EndpointPort{{Name: "p", Port: 80, Protocol: corev1.ProtocolTCP}},
				}},
			}, metav1.CreateOptions{})
			return err
		},
		escaped: s.addressEscape(name, s.bPodIP, "tenant B's Pod"),
	})
}

// endpointSlice returns an EndpointSlice of Service svc with one address and port.
func endpointSlice(svc, addr string, port int32) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: svc + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{addr}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("p"), Port: ptr(port), Protocol: ptr(corev1.ProtocolTCP)}},
	}
}

// attackEndpointSliceNode: an EndpointSlice pointing at a super Node's kubelet port.
func (s *suite) attackEndpointSliceNode(t *testing.T) {
	const name = "kubelet"
	nodeIP := s.nodeIP(t, generalNode)
	s.run(t, attack{
		kind: "EndpointSlice", ns: aNS, names: []string{name + "-1"}, rules: []string{"endpointAddress"},
		create: func(ctx context.Context) error {
			if _, err := s.a.Client.CoreV1().Services(aNS).Create(ctx, selectorless(name, 10250), metav1.CreateOptions{}); err != nil {
				return err
			}
			_, err := s.a.Client.DiscoveryV1().EndpointSlices(aNS).Create(ctx, endpointSlice(name, nodeIP, 10250), metav1.CreateOptions{})
			return err
		},
		escaped: s.addressEscape(name, nodeIP, "super Node "+generalNode+"'s kubelet"),
	})
}

// attackEndpointSliceSuperAPIServer: an EndpointSlice pointing at the super cluster's
// apiserver Service IP (loopback and link-local addresses are refused by A's own apiserver).
func (s *suite) attackEndpointSliceSuperAPIServer(t *testing.T) {
	const name = "super-api"
	svc, err := s.super.CoreV1().Services("default").Get(context.Background(), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ip := svc.Spec.ClusterIP
	s.run(t, attack{
		kind: "EndpointSlice", ns: aNS, names: []string{name + "-1"}, rules: []string{"endpointAddress"},
		create: func(ctx context.Context) error {
			if _, err := s.a.Client.CoreV1().Services(aNS).Create(ctx, selectorless(name, 443), metav1.CreateOptions{}); err != nil {
				return err
			}
			_, err := s.a.Client.DiscoveryV1().EndpointSlices(aNS).Create(ctx, endpointSlice(name, ip, 443), metav1.CreateOptions{})
			return err
		},
		escaped: s.addressEscape(name, ip, "the super cluster's apiserver Service"),
	})
}

// nodeIP returns a super Node's InternalIP.
func (s *suite) nodeIP(t *testing.T, node string) string {
	t.Helper()
	n, err := s.super.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	t.Fatalf("Node %s has no InternalIP", node)
	return ""
}

// ingressAttack runs an Ingress attack: A creates a backend Service and ing.
func (s *suite) ingressAttack(t *testing.T, ing *networkingv1.Ingress, rules []string, check func(*networkingv1.Ingress) error) {
	t.Helper()
	s.run(t, attack{
		kind: "Ingress", ns: aNS, names: []string{ing.Name}, rules: rules,
		create: func(ctx context.Context) error {
			svc := selectorless(ing.Name, 80)
			svc.Spec.Selector = map[string]string{"app": ing.Name}
			if _, err := s.a.Client.CoreV1().Services(aNS).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
				return err
			}
			_, err := s.a.Client.NetworkingV1().Ingresses(aNS).Create(ctx, ing, metav1.CreateOptions{})
			return err
		},
		escaped: func(ctx context.Context) error {
			si, err := s.super.NetworkingV1().Ingresses(s.aSuperNS).Get(ctx, ing.Name, metav1.GetOptions{})
			if err != nil {
				return nil
			}
			if err := check(si); err != nil {
				return fmt.Errorf("super Ingress %s/%s: %w", si.Namespace, si.Name, err)
			}
			return nil
		},
	})
}

// ingressClassForA is the IngressClass A's Ingress policy allows (withIngressPolicy).
const ingressClassForA = "public"

// withIngressPolicy gives tenant A a TenantPolicy that allows Ingresses of class
// ingressClassForA for hosts under a.example.com (the built-in default refuses every Ingress
// for its class, which would hide the host and snippet rules), runs f, and puts A back on the
// built-in defaults. An allowed Ingress "allowed" of A proves each policy is in force.
func (s *suite) withIngressPolicy(t *testing.T, f func()) {
	t.Helper()
	ctx := context.Background()
	tp := &tenancyv1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a-ingress"},
		Spec: tenancyv1alpha1.TenantPolicySpec{Network: &tenancyv1alpha1.NetworkPolicy{
			AllowedIngressClasses: []string{ingressClassForA}, AllowedIngressHosts: []string{"*.a.example.com"}}}}
	if err := s.c.Create(ctx, tp); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	s.setPolicyName(t, s.a.Name, tp.Name)
	class := ingressClassForA
	if _, err := s.a.Client.NetworkingV1().Ingresses(aNS).Create(ctx, ingress("allowed", "www.a.example.com", &class), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	itest.Eventually(t, maxWait, "A's policy in force: its allowed Ingress is synced", func(ctx context.Context) error {
		_, err := s.super.NetworkingV1().Ingresses(s.aSuperNS).Get(ctx, "allowed", metav1.GetOptions{})
		return err
	})
	defer func() {
		s.setPolicyName(t, s.a.Name, "")
		itest.Eventually(t, maxWait, "A back on the built-in policy: its allowed Ingress is refused again", func(ctx context.Context) error {
			if _, err := s.super.NetworkingV1().Ingresses(s.aSuperNS).Get(ctx, "allowed", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("super Ingress still there (err %v)", err)
			}
			return nil
		})
		_ = s.c.Delete(ctx, tp)
	}()
	f()
}

// attackIngressHost: an Ingress (of a class A may use) claiming tenant B's host on the shared
// controller: rule ingressHost.
func (s *suite) attackIngressHost(t *testing.T) {
	class := ingressClassForA
	s.withIngressPolicy(t, func() {
		s.ingressAttack(t, ingress("hijack", bHost, &class), []string{"ingressHost"}, func(si *networkingv1.Ingress) error {
			for _, r := range si.Spec.Rules {
				if r.Host == bHost {
					return fmt.Errorf("claims tenant B's host %s", bHost)
				}
			}
			return nil
		})
	})
}

// attackIngressClass: an Ingress of a class the policy does not allow (the provider's
// internal controller): rule ingressClass.
func (s *suite) attackIngressClass(t *testing.T) {
	class := "internal-admin"
	s.ingressAttack(t, ingress("internal", "a.example.com", &class), []string{"ingressClass"}, func(si *networkingv1.Ingress) error {
		if si.Spec.IngressClassName != nil && *si.Spec.IngressClassName == class {
			return fmt.Errorf("uses ingress class %s", class)
		}
		return nil
	})
}

// snippetAnnotation is ingress-nginx's configuration snippet: raw controller configuration.
const snippetAnnotation = "nginx.ingress.kubernetes.io/server-snippet"

// attackIngressSnippet: an Ingress (class and host A may use) with a controller snippet
// annotation: rule ingressSnippet (or metadataKey when the key is filtered as a controller
// domain).
func (s *suite) attackIngressSnippet(t *testing.T) {
	class := ingressClassForA
	ing := ingress("snippet", "snippet.a.example.com", &class)
	ing.Annotations = map[string]string{snippetAnnotation: "location /b { proxy_pass http://" + s.bPodIP + "; }"}
	s.withIngressPolicy(t, func() {
		s.ingressAttack(t, ing, []string{"ingressSnippet", "metadataKey"}, func(si *networkingv1.Ingress) error {
			if v, ok := si.Annotations[snippetAnnotation]; ok {
				return fmt.Errorf("carries %s=%q", snippetAnnotation, v)
			}
			return nil
		})
	})
}

// serviceAttack runs a Service attack: A creates svc; check is called on its super copy.
func (s *suite) serviceAttack(t *testing.T, svc *corev1.Service, rules []string, check func(*corev1.Service) error) {
	t.Helper()
	s.run(t, attack{
		kind: "Service", ns: aNS, names: []string{svc.Name}, rules: rules,
		create: func(ctx context.Context) error {
			_, err := s.a.Client.CoreV1().Services(aNS).Create(ctx, svc, metav1.CreateOptions{})
			return err
		},
		escaped: s.serviceEscape(svc.Name, check),
	})
}

func (s *suite) serviceEscape(name string, check func(*corev1.Service) error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		ss, err := s.super.CoreV1().Services(s.aSuperNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		if err := check(ss); err != nil {
			return fmt.Errorf("super Service %s/%s: %w", ss.Namespace, ss.Name, err)
		}
		return nil
	}
}

// attackServiceType: Service types NodePort, LoadBalancer and ExternalName are refused by
// default: rule serviceType. The ExternalName points into tenant B's super namespace.
func (s *suite) attackServiceType(typ corev1.ServiceType) func(t *testing.T) {
	return func(t *testing.T) {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "type-" + map[corev1.ServiceType]string{
			corev1.ServiceTypeNodePort: "nodeport", corev1.ServiceTypeLoadBalancer: "loadbalancer", corev1.ServiceTypeExternalName: "externalname"}[typ]},
			Spec: corev1.ServiceSpec{Type: typ, Selector: map[string]string{"app": "x"}, Ports: []corev1.ServicePort{{Port: 80}}}}
		if typ == corev1.ServiceTypeExternalName {
			svc.Spec = corev1.ServiceSpec{Type: typ, ExternalName: bService + "." + s.bSuperNS + ".svc.cluster.local"}
		}
		s.serviceAttack(t, svc, []string{"serviceType"}, func(ss *corev1.Service) error {
			if ss.Spec.Type == typ {
				return fmt.Errorf("has type %s (externalName %q)", typ, ss.Spec.ExternalName)
			}
			return nil
		})
	}
}

// attackExternalTrafficPolicy: externalTrafficPolicy Local (on a NodePort Service, which may
// be refused first for its type): rule externalTrafficPolicy or serviceType.
func (s *suite) attackExternalTrafficPolicy(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "etp-local"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeNodePort, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
		Selector: map[string]string{"app": "x"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	s.serviceAttack(t, svc, []string{"externalTrafficPolicy", "serviceType"}, func(ss *corev1.Service) error {
		if ss.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal || ss.Spec.Type == corev1.ServiceTypeNodePort {
			return fmt.Errorf("type %s externalTrafficPolicy %s", ss.Spec.Type, ss.Spec.ExternalTrafficPolicy)
		}
		return nil
	})
}

// attackLoadBalancerIP: a LoadBalancer Service asking for a given IP (a Node's address):
// rule loadBalancerIP or serviceType.
func (s *suite) attackLoadBalancerIP(t *testing.T) {
	ip := s.nodeIP(t, bNode)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "lb-ip"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeLoadBalancer, LoadBalancerIP: ip,
		Selector: map[string]string{"app": "x"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	s.serviceAttack(t, svc, []string{"loadBalancerIP", "serviceType"}, func(ss *corev1.Service) error {
		if ss.Spec.LoadBalancerIP != "" || ss.Spec.Type == corev1.ServiceTypeLoadBalancer {
			return fmt.Errorf("type %s loadBalancerIP %q", ss.Spec.Type, ss.Spec.LoadBalancerIP)
		}
		return nil
	})
}

// attackLoadBalancerClass: a LoadBalancer Service of the provider's internal class: rule
// loadBalancerClass or serviceType.
func (s *suite) attackLoadBalancerClass(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "lb-class"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: ptr("example.com/internal"),
		Selector: map[string]string{"app": "x"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	s.serviceAttack(t, svc, []string{"loadBalancerClass", "serviceType"}, func(ss *corev1.Service) error {
		if ss.Spec.LoadBalancerClass != nil || ss.Spec.Type == corev1.ServiceTypeLoadBalancer {
			return fmt.Errorf("type %s loadBalancerClass %v", ss.Spec.Type, ptrString(ss.Spec.LoadBalancerClass))
		}
		return nil
	})
}

// forbiddenKeys reports the keys of labels or annotations among keys.
func forbiddenKeys(what string, m map[string]string, keys []string) error {
	var found []string
	for k, v := range m {
		if slices.Contains(keys, k) {
			found = append(found, k+"="+v)
		}
	}
	if len(found) > 0 {
		slices.Sort(found)
		return fmt.Errorf("%s carry controller-domain keys %v", what, found)
	}
	return nil
}

// attackServiceMetadataKeys: cloud load-balancer and MetalLB annotations on a plain
// ClusterIP Service are not copied: rule metadataKey (the Service itself is synced).
func (s *suite) attackServiceMetadataKeys(t *testing.T) {
	keys := []string{"metallb.universe.tf/address-pool", "service.beta.kubernetes.io/aws-load-balancer-internal"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "lb-annotations", Annotations: map[string]string{keys[0]: "tenant-b-pool", keys[1]: "true"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "x"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	s.serviceAttack(t, svc, []string{"metadataKey"}, func(ss *corev1.Service) error {
		return forbiddenKeys("annotations", ss.Annotations, keys)
	})
}

// attackPodMetadataKeys: Istio injection and Kata hypervisor keys on a Pod are not copied:
// rule metadataKey.
func (s *suite) attackPodMetadataKeys(t *testing.T) {
	keys := []string{"sidecar.istio.io/inject", "io.katacontainers.config.hypervisor.kernel_params", "io.katacontainers.config.hypervisor.enable_debug"}
	p := basePod("istio-kata")
	p.Labels[keys[0]] = "true"
	p.Annotations = map[string]string{keys[0]: "true", keys[1]: "init=/bin/sh", keys[2]: "true"}
	s.podAttack(t, p, []string{"metadataKey"}, func(sp *corev1.Pod) error {
		if err := forbiddenKeys("labels", sp.Labels, keys); err != nil {
			return err
		}
		return forbiddenKeys("annotations", sp.Annotations, keys)
	})
}

// attackServiceAccountMetadataKeys: workload-identity keys on a ServiceAccount (GKE, EKS,
// Azure) would give A's Pods a cloud identity of the provider's: rule metadataKey.
func (s *suite) attackServiceAccountMetadataKeys(t *testing.T) {
	keys := []string{"iam.gke.io/gcp-service-account", "eks.amazonaws.com/role-arn", "azure.workload.identity/use", "azure.workload.identity/client-id"}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "cloud-identity",
		Labels: map[string]string{keys[2]: "true"},
		Annotations: map[string]string{keys[0]: "provider-admin@project.iam.gserviceaccount.com",
			keys[1]: "arn:aws:iam::111122223333:role/provider-admin", keys[3]: "00000000-0000-0000-0000-000000000000"}}}
	s.run(t, attack{
		kind: "ServiceAccount", ns: aNS, names: []string{sa.Name}, rules: []string{"metadataKey"},
		create: func(ctx context.Context) error {
			_, err := s.a.Client.CoreV1().ServiceAccounts(aNS).Create(ctx, sa, metav1.CreateOptions{})
			return err
		},
		escaped: func(ctx context.Context) error {
			ss, err := s.super.CoreV1().ServiceAccounts(s.aSuperNS).Get(ctx, sa.Name, metav1.GetOptions{})
			if err != nil {
				return nil
			}
			if err := forbiddenKeys("labels", ss.Labels, keys); err != nil {
				return fmt.Errorf("super ServiceAccount %s/%s: %w", ss.Namespace, ss.Name, err)
			}
			if err := forbiddenKeys("annotations", ss.Annotations, keys); err != nil {
				return fmt.Errorf("super ServiceAccount %s/%s: %w", ss.Namespace, ss.Name, err)
			}
			return nil
		},
	})
}
