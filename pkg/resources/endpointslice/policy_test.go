package endpointslice_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/endpointslice"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
)

func tenantSlice(typ discoveryv1.AddressType, addrs ...string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "ext-1", Namespace: "shop", UID: "es-uid", ResourceVersion: "1",
			Labels: map[string]string{discoveryv1.LabelServiceName: "ext", discoveryv1.LabelManagedBy: "endpointslicemirroring-controller.k8s.io"}},
		AddressType: typ,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: addrs}},
	}
}

// EndpointSlices of selector-less Services follow the rules of Endpoints: only the tenant's
// own Pod IPs (and the policy's CIDRs); FQDN slices, which name no address at all, are refused.
func TestDownwardRefusesSlicesNamingAddressesNotTheTenants(t *testing.T) {
	for name, tc := range map[string]struct {
		slice   *discoveryv1.EndpointSlice
		refused bool
	}{
		"own Pod":              {slice: tenantSlice(discoveryv1.AddressTypeIPv4, "10.244.1.5")},
		"another tenant's Pod": {slice: tenantSlice(discoveryv1.AddressTypeIPv4, "10.244.2.7"), refused: true},
		"a Node":               {slice: tenantSlice(discoveryv1.AddressTypeIPv4, "172.18.0.2"), refused: true},
		"link-local":           {slice: tenantSlice(discoveryv1.AddressTypeIPv4, "169.254.169.254"), refused: true},
		"FQDN":                 {slice: tenantSlice(discoveryv1.AddressTypeFQDN, "kubernetes.default.svc.cluster.local"), refused: true},
		"targetRef elsewhere": {slice: func() *discoveryv1.EndpointSlice {
			s := tenantSlice(discoveryv1.AddressTypeIPv4, "10.244.1.5")
			s.Endpoints[0].TargetRef = &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "x"}
			return s
		}(), refused: true},
	} {
		t.Run(name, func(t *testing.T) {
			h := restest.New(t, "es-"+strings.NewReplacer(" ", "-", "'", "").Replace(strings.ToLower(name)), "shop")
			r := endpointslice.Resource
			r.SuperInformer(h.Env)
			superNS := resources.SuperNamespace(h.C, "shop")
			pods := h.Env.SuperInformers.Core().V1().Pods().Informer()
			for _, p := range []struct{ uid, ns, name, ip string }{{h.C.UID, superNS, "db-0", "10.244.1.5"}, {"uid-other", "o-abcdef-shop", "db-0", "10.244.2.7"}} {
				h.Super(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: p.ns, UID: types.UID(p.ns + p.name),
					Labels: map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue, conversion.LabelTenantUID: p.uid}},
					Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: p.ip, PodIPs: []corev1.PodIP{{IP: p.ip}}}})
			}
			h.Super(h.Env.SuperNodes.Core().V1().Nodes().Informer(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
				Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "172.18.0.2"}}}})
			h.Tenant(h.C.Informers.Core().V1().Services().Informer(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "shop"}})
			h.Tenant(h.C.Informers.Discovery().V1().EndpointSlices().Informer(), tc.slice)
			before := h.Denials(resources.KindEndpointSlice, policy.RuleEndpointAddress)
			if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "ext-1"); err != nil {
				t.Fatalf("Downward = %v", err)
			}
			_, err := h.SuperCS.DiscoveryV1().EndpointSlices(superNS).Get(h.Ctx(), "ext-1", metav1.GetOptions{})
			ev := h.Events()
			if !tc.refused {
				if err != nil || len(ev) != 0 {
					t.Fatalf("allowed slice: get %v, events %q", err, ev)
				}
				return
			}
			if !apierrors.IsNotFound(err) || len(ev) != 1 || !strings.Contains(ev[0], "PolicyDenied endpointAddress: ") {
				t.Errorf("refused slice: get %v, events %q", err, ev)
			}
			if got := h.Denials(resources.KindEndpointSlice, policy.RuleEndpointAddress) - before; got != 1 {
				t.Errorf("denials %v", got)
			}
			tenantPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: "shop"},
				Status: corev1.PodStatus{PodIPs: []corev1.PodIP{{IP: tc.slice.Endpoints[0].Addresses[0]}}}}
			if name == "another tenant's Pod" {
				if reqs := r.Dependents(h.C, tenantPod); len(reqs) != 1 || reqs[0].Name != "ext-1" {
					t.Errorf("a tenant Pod getting the refused IP maps to %v", reqs)
				}
			}
		})
	}
}
