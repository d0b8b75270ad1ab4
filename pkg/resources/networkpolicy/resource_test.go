package networkpolicy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func TestNamespaceSelector(t *testing.T) {
	c := &tenant.Cluster{Name: "t", UID: "uid-1"}
	sns := func(ns string) string { return resources.SuperNamespace(c, ns) }
	cases := map[string]struct {
		in   *metav1.LabelSelector
		want *metav1.LabelSelector
	}{
		"nil: own namespace": {in: nil, want: nil},
		"empty: all of the tenant's namespaces": {
			in:   &metav1.LabelSelector{},
			want: &metav1.LabelSelector{MatchLabels: map[string]string{conversion.LabelTenantUID: "uid-1"}},
		},
		"metadata.name matchLabels mapped": {
			in:   &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "other", "team": "a"}},
			want: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: sns("other"), "ns.tenancy.vcsyncer.io/team": "a", conversion.LabelTenantUID: "uid-1"}},
		},
		"metadata.name expressions mapped, other keys mapped to the super namespace label keys": {
			in: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
				{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"prod"}},
				{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpExists},
			}},
			want: &metav1.LabelSelector{
				MatchLabels: map[string]string{conversion.LabelTenantUID: "uid-1"},
				MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{sns("a"), sns("b")}},
					{Key: "ns.tenancy.vcsyncer.io/env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"prod"}},
					{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpExists},
				},
			},
		},
		"prefixed keys mapped": {
			in: &metav1.LabelSelector{MatchLabels: map[string]string{"example.com/team": "a"}},
			want: &metav1.LabelSelector{MatchLabels: map[string]string{
				"example.com.ns.tenancy.vcsyncer.io/team": "a", conversion.LabelTenantUID: "uid-1"}},
		},
		"a tenant naming another tenant's UID gets its own": {
			in:   &metav1.LabelSelector{MatchLabels: map[string]string{conversion.LabelTenantUID: "uid-2"}},
			want: &metav1.LabelSelector{MatchLabels: map[string]string{conversion.LabelUnmappedNamespaceKey: "uid-2", conversion.LabelTenantUID: "uid-1"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var orig *metav1.LabelSelector
			if tc.in != nil {
				orig = tc.in.DeepCopy()
			}
			got := NamespaceSelector(c, tc.in)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if d := cmp.Diff(orig, tc.in); d != "" {
				t.Errorf("input modified:\n%s", d)
			}
		})
	}
}

// TestNamespaceSelectorIsolation evaluates rewritten selectors against super namespaces of two
// tenants and of the super cluster itself.
func TestNamespaceSelectorIsolation(t *testing.T) {
	t1 := &tenant.Cluster{Name: "a", UID: "uid-a"}
	t2 := &tenant.Cluster{Name: "b", UID: "uid-b"}
	ns := func(c *tenant.Cluster, name string, extra map[string]string) (string, labels.Set) {
		n := resources.SuperNamespace(c, name)
		l := labels.Set{corev1.LabelMetadataName: n, conversion.LabelTenantUID: c.UID, conversion.LabelManagedBy: conversion.ManagedByValue}
		for k, v := range resources.NamespaceLabels(policy.Default(), extra) {
			l[k] = v
		}
		return n, l
	}
	all := map[string]labels.Set{"kube-system": {corev1.LabelMetadataName: "kube-system", "name": "kube-system"}, "default": {corev1.LabelMetadataName: "default", "team": "x"}}
	for _, c := range []*tenant.Cluster{t1, t2} {
		for _, n := range []string{"default", "kube-system", "apps"} {
			extra := map[string]string{"team": "x"}
			if n == "kube-system" {
				extra["name"] = "kube-system"
			}
			name, l := ns(c, n, extra)
			all[name] = l
		}
	}
	cases := map[string]struct {
		in   *metav1.LabelSelector
		want []string
	}{
		"{}":                           {in: &metav1.LabelSelector{}, want: []string{"default", "kube-system", "apps"}},
		"team=x":                       {in: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}}, want: []string{"default", "kube-system", "apps"}},
		"plain label name=kube-system": {in: &metav1.LabelSelector{MatchLabels: map[string]string{"name": "kube-system"}}, want: []string{"kube-system"}},
		"team DoesNotExist": {in: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "team", Operator: metav1.LabelSelectorOpDoesNotExist}}}, want: nil},
		"unmappable key DoesNotExist": {in: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: strings.Repeat("p", 240) + "/x", Operator: metav1.LabelSelectorOpDoesNotExist}}}, want: []string{"default", "kube-system", "apps"}},
		"metadata.name=kube-system": {in: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "kube-system"}}, want: []string{"kube-system"}},
		"name NotIn apps": {in: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"apps"}}}}, want: []string{"default", "kube-system"}},
		"tenant-uid of b": {in: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: conversion.LabelTenantUID, Operator: metav1.LabelSelectorOpIn, Values: []string{"uid-b"}}}}, want: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sel, err := metav1.LabelSelectorAsSelector(NamespaceSelector(t1, tc.in))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for n, l := range all {
				if sel.Matches(l) {
					got[n] = true
				}
			}
			want := map[string]bool{}
			for _, n := range tc.want {
				want[resources.SuperNamespace(t1, n)] = true
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("selected super namespaces (-want +got):\n%s", d)
			}
		})
	}
}

func TestDesired(t *testing.T) {
	c := &tenant.Cluster{Name: "t", UID: "u"}
	superNS := resources.SuperNamespace(c, "apps")
	in := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "np", Namespace: "apps", UID: "np-uid"},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{
				{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "client"}}},
				{NamespaceSelector: &metav1.LabelSelector{}, PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "mon"}}},
				{IPBlock: &networkingv1.IPBlock{CIDR: "192.0.2.0/24"}},
			}}},
			Egress:      []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{}}}}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		},
	}
	orig := in.DeepCopy()
	got := Desired(nil, c, in, superNS, nil)
	want := orig.Spec.DeepCopy()
	want.Ingress[0].From[1].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{conversion.LabelTenantUID: "u"}}
	want.Egress[0].To[0].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{conversion.LabelTenantUID: "u"}}
	if d := cmp.Diff(*want, got.Spec); d != "" {
		t.Errorf("spec (-want +got):\n%s", d)
	}
	if d := cmp.Diff(orig, in); d != "" {
		t.Errorf("tenant object modified:\n%s", d)
	}
	if !conversion.OwnedByTenant(got, "u") || got.Namespace != superNS {
		t.Errorf("meta %+v", got.ObjectMeta)
	}
	if !Equal(got, got.DeepCopy()) {
		t.Error("Equal(x, copy) = false")
	}
	if Equal(got, Desired(nil, c, orig, superNS, nil)) == false {
		t.Error("Desired is not deterministic")
	}
	other := got.DeepCopy()
	other.Spec.Egress = nil
	if Equal(got, other) {
		t.Error("Equal ignores the spec")
	}
}
