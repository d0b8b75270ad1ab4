package endpoints_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/endpoints"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
)

// superPod returns a super Pod of the tenant with UID tenantUID in superNS, with IPs.
func superPod(tenantUID, superNS, name string, phase corev1.PodPhase, ips ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: superNS, UID: types.UID("s-" + name),
		Labels: map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue, conversion.LabelTenantUID: tenantUID}},
		Status: corev1.PodStatus{Phase: phase}}
	for _, ip := range ips {
		p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: ip})
	}
	if len(ips) > 0 {
		p.Status.PodIP = ips[0]
	}
	return p
}

// world is a super cluster with one Pod of tenant h (10.244.1.5 in its namespace shop, and a
// finished one at 10.244.1.9), one of another tenant (10.244.2.7), and a Node at 172.18.0.2.
func world(t *testing.T, name string) *restest.Harness {
	h := restest.New(t, name, "shop")
	pods := h.Env.SuperInformers.Core().V1().Pods().Informer()
	(endpoints.Resource).SuperInformer(h.Env)
	superNS := resources.SuperNamespace(h.C, "shop")
	h.Super(pods, superPod(h.C.UID, superNS, "db-0", corev1.PodRunning, "10.244.1.5", "fd00::1:5"))
	h.Super(pods, superPod(h.C.UID, superNS, "job-1", corev1.PodSucceeded, "10.244.1.9"))
	h.Super(pods, superPod("uid-other", "other-abcdef-shop", "secret-db-0", corev1.PodRunning, "10.244.2.7"))
	h.Super(h.Env.SuperNodes.Core().V1().Nodes().Informer(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "172.18.0.2"}}}})
	h.Tenant(h.C.Informers.Core().V1().Services().Informer(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "shop", UID: "svc-uid"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 5432}}}})
	return h
}

func tenantEndpoints(rv string, addrs ...corev1.EndpointAddress) *corev1.Endpoints {
	return &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "shop", UID: "ep-uid", ResourceVersion: rv},
		Subsets: []corev1.EndpointSubset{{Addresses: addrs, Ports: []corev1.EndpointPort{{Port: 5432}}}}}
}

func ip(s string) corev1.EndpointAddress { return corev1.EndpointAddress{IP: s} }

// Endpoints of a selector-less tenant Service may name only the tenant's own running Pods and
// the policy's CIDRs: another tenant's Pod, a Node (kubelet, etcd), loopback, link-local
// (cloud metadata) and anything else is refused as a whole (CVE-2021-25740).
func TestDownwardRefusesEndpointsNamingAddressesNotTheTenants(t *testing.T) {
	allowDocNet := &tenancyv1alpha1.TenantPolicySpec{Network: &tenancyv1alpha1.NetworkPolicy{AllowedEndpointCIDRs: []string{"192.0.2.0/24"}}}
	for name, tc := range map[string]struct {
		pol     *tenancyv1alpha1.TenantPolicySpec
		addrs   []corev1.EndpointAddress
		refused bool
	}{
		"own Pod":                     {addrs: []corev1.EndpointAddress{ip("10.244.1.5")}},
		"own Pod, IPv6":               {addrs: []corev1.EndpointAddress{ip("fd00::1:5")}},
		"own Pod with targetRef":      {addrs: []corev1.EndpointAddress{{IP: "10.244.1.5", Hostname: "db-0", TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "db-0"}}}},
		"another tenant's Pod":        {addrs: []corev1.EndpointAddress{ip("10.244.2.7")}, refused: true},
		"own and another tenant's":    {addrs: []corev1.EndpointAddress{ip("10.244.1.5"), ip("10.244.2.7")}, refused: true},
		"a Node (kubelet, etcd)":      {addrs: []corev1.EndpointAddress{ip("172.18.0.2")}, refused: true},
		"loopback":                    {addrs: []corev1.EndpointAddress{ip("127.0.0.1")}, refused: true},
		"cloud metadata (link-local)": {addrs: []corev1.EndpointAddress{ip("169.254.169.254")}, refused: true},
		"the apiserver's ClusterIP":   {addrs: []corev1.EndpointAddress{ip("10.96.0.1")}, refused: true},
		"a finished own Pod":          {addrs: []corev1.EndpointAddress{ip("10.244.1.9")}, refused: true},
		"policy CIDR":                 {pol: allowDocNet, addrs: []corev1.EndpointAddress{ip("192.0.2.10")}},
		"outside the policy CIDR":     {pol: allowDocNet, addrs: []corev1.EndpointAddress{ip("198.51.100.1")}, refused: true},
		"targetRef in another namespace": {addrs: []corev1.EndpointAddress{{IP: "10.244.1.5",
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "kube-system", Name: "db-0"}}}, refused: true},
	} {
		t.Run(name, func(t *testing.T) {
			h := world(t, "ep-"+strings.NewReplacer(" ", "-", ",", "", "'", "", "(", "", ")", "").Replace(strings.ToLower(name)))
			if tc.pol != nil {
				h.SetPolicy(tc.pol)
			}
			before := h.Denials(resources.KindEndpoints, policy.RuleEndpointAddress)
			h.Tenant(h.C.Informers.Core().V1().Endpoints().Informer(), tenantEndpoints("1", tc.addrs...))
			if err := (endpoints.Resource).Downward(h.Ctx(), h.Env, h.C, "shop", "ext"); err != nil {
				t.Fatalf("Downward = %v, want nil", err)
			}
			_, err := h.SuperCS.CoreV1().Endpoints(resources.SuperNamespace(h.C, "shop")).Get(h.Ctx(), "ext", metav1.GetOptions{})
			ev := h.Events()
			if !tc.refused {
				if err != nil || len(ev) != 0 {
					t.Fatalf("allowed Endpoints: get %v, events %q", err, ev)
				}
				return
			}
			if !apierrors.IsNotFound(err) {
				t.Errorf("refused Endpoints synced (err %v)", err)
			}
			if len(ev) != 1 || !strings.Contains(ev[0], "Warning PolicyDenied endpointAddress: ") {
				t.Errorf("events %q", ev)
			}
			if got := h.Denials(resources.KindEndpoints, policy.RuleEndpointAddress) - before; got != 1 {
				t.Errorf("denials %v", got)
			}
		})
	}
}

// An Endpoints naming a Pod IP the super cluster has not assigned yet is refused, and synced as
// soon as the tenant's Pod shows that IP (the tenant Pod's status change maps to the Endpoints);
// an Endpoints whose Pod is gone loses its super copy when the tenant Pod goes, so an IP the
// super cluster gives to another tenant's Pod later is not reached through it.
func TestEndpointsFollowTheTenantsPodIPs(t *testing.T) {
	h := world(t, "ep-pending")
	r := endpoints.Resource
	superNS := resources.SuperNamespace(h.C, "shop")
	h.Tenant(h.C.Informers.Core().V1().Endpoints().Informer(), tenantEndpoints("1", ip("10.244.1.20")))
	if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "ext"); err != nil {
		t.Fatal(err)
	}
	if len(h.Events()) != 1 {
		t.Fatal("unknown Pod IP not refused")
	}
	tenantPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-1", Namespace: "shop", UID: "t-db-1"}}
	if reqs := r.Dependents(h.C, tenantPod); len(reqs) != 0 {
		t.Errorf("a Pod without IPs maps to %v", reqs)
	}
	// The super Pod gets the IP; the syncer copies it to the tenant Pod.
	h.Super(h.Env.SuperInformers.Core().V1().Pods().Informer(), superPod(h.C.UID, superNS, "db-1", corev1.PodRunning, "10.244.1.20"))
	tenantPod.Status.PodIPs = []corev1.PodIP{{IP: "10.244.1.20"}}
	want := resources.Request{Tenant: h.C.Name, Kind: resources.KindEndpoints, Namespace: "shop", Name: "ext"}
	if reqs := r.Dependents(h.C, tenantPod); len(reqs) != 1 || reqs[0] != want {
		t.Fatalf("Dependents of the Pod = %v, want [%v]", reqs, want)
	}
	if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "ext"); err != nil {
		t.Fatal(err)
	}
	s, err := h.SuperCS.CoreV1().Endpoints(superNS).Get(h.Ctx(), "ext", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("not synced once the Pod has the IP: %v", err)
	}
	h.Super(r.SuperInformer(h.Env), s)

	// The Pod goes (the super Pod first, then the tenant Pod).
	if err := h.Env.SuperInformers.Core().V1().Pods().Informer().GetIndexer().Delete(superPod(h.C.UID, superNS, "db-1", corev1.PodRunning)); err != nil {
		t.Fatal(err)
	}
	if reqs := r.Dependents(h.C, tenantPod); len(reqs) != 1 || reqs[0] != want {
		t.Fatalf("Dependents of the deleted Pod = %v, want [%v]", reqs, want)
	}
	if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "ext"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SuperCS.CoreV1().Endpoints(superNS).Get(h.Ctx(), "ext", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("super Endpoints still name an IP no Pod of the tenant has (err %v)", err)
	}
}

// A super copy whose Pod is gone while the tenant Pod stays in the tenant's apiserver (its
// webhook refuses the syncer's writes, so no tenant event comes): the super Pod's old IPs map
// to the Endpoints (PodIPDependents), and a remediation scan finds the copy refused_in_super.
func TestStaleAddressFoundFromTheSuperSide(t *testing.T) {
	h := world(t, "ep-stale")
	r := endpoints.Resource
	superNS := resources.SuperNamespace(h.C, "shop")
	pods := h.Env.SuperInformers.Core().V1().Pods().Informer()
	h.Super(pods, superPod(h.C.UID, superNS, "db-1", corev1.PodRunning, "10.244.1.21"))
	te := tenantEndpoints("1", ip("10.244.1.21"))
	h.Tenant(h.C.Informers.Core().V1().Endpoints().Informer(), te)
	if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "ext"); err != nil {
		t.Fatal(err)
	}
	s, err := h.SuperCS.CoreV1().Endpoints(superNS).Get(h.Ctx(), "ext", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("not synced: %v", err)
	}
	h.Super(r.SuperInformer(h.Env), s)
	if m := r.Check(h.Env, h.C, te, s); m != resources.InSync {
		t.Fatalf("Check of a synced copy = %q, want in sync", m)
	}
	want := resources.Request{Tenant: h.C.Name, Kind: resources.KindEndpoints, Namespace: "shop", Name: "ext"}
	if reqs := r.PodIPDependents(h.C, []string{"::ffff:10.244.1.21"}); len(reqs) != 1 || reqs[0] != want {
		t.Errorf("PodIPDependents(old IP) = %v, want [%v]", reqs, want)
	}
	if reqs := r.PodIPDependents(h.C, []string{"10.244.1.99", "not-an-ip"}); len(reqs) != 0 {
		t.Errorf("PodIPDependents(other IP) = %v, want none", reqs)
	}
	if err := pods.GetIndexer().Delete(superPod(h.C.UID, superNS, "db-1", corev1.PodRunning)); err != nil {
		t.Fatal(err)
	}
	if m := r.Check(h.Env, h.C, te, s); m != resources.MismatchRefusedInSuper {
		t.Errorf("Check after the Pod is gone = %q, want %q", m, resources.MismatchRefusedInSuper)
	}
	if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "ext"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SuperCS.CoreV1().Endpoints(superNS).Get(h.Ctx(), "ext", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("super Endpoints still name an IP no Pod of the tenant has (err %v)", err)
	}
	// Another tenant's Pod now holds the IP: still refused.
	h.Super(pods, superPod("uid-other", "other-abcdef-shop", "reuse", corev1.PodRunning, "10.244.1.21"))
	if m := r.Check(h.Env, h.C, te, s); m != resources.MismatchRefusedInSuper {
		t.Errorf("Check with the IP reused by another tenant = %q, want %q", m, resources.MismatchRefusedInSuper)
	}
}
