package pod

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
)

// confineAffinity rewrites, in place, the pod affinity and anti-affinity terms (required and
// preferred) of spec, a super Pod's spec from a Pod of tenant tenantName (UID tenantUID), so
// that each selects Pods of that tenant's super namespaces only, with the meaning the term has
// in the tenant's cluster:
//
//   - each name in namespaces (a tenant namespace) becomes its super namespace;
//   - a namespaceSelector (an empty one selects every namespace) gets the requirement
//     tenancy.vcsyncer.io/tenant-uid In (tenantUID), a label only the syncer writes on super
//     namespaces; values of kubernetes.io/metadata.name (the apiserver's name label) become
//     super namespace names; other keys select on the keys the tenant's namespace labels are
//     copied to on super namespaces (resources.NamespaceSelectorKey);
//   - a term with neither (the Pod's own namespace, already its super namespace) is kept.
//
// Without this a term could count the Pods of every namespace of the super cluster: a required
// anti-affinity term over all namespaces with a topology key every Node shares keeps every
// later matching Pod of every tenant, and of the super cluster itself, from being scheduled,
// and an affinity term can probe for, or co-locate with, another tenant's Pods.
func confineAffinity(spec *corev1.PodSpec, tenantName, tenantUID string) {
	a := spec.Affinity
	if a == nil {
		return
	}
	confine := func(t *corev1.PodAffinityTerm) {
		for i, ns := range t.Namespaces {
			t.Namespaces[i] = conversion.SuperNamespace(tenantName, tenantUID, ns)
		}
		if t.NamespaceSelector != nil {
			t.NamespaceSelector = confineNamespaceSelector(t.NamespaceSelector, tenantName, tenantUID)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			confine(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
		}
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			confine(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			confine(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
		}
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			confine(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
		}
	}
}

// confineNamespaceSelector returns sel (a tenant namespace selector) for super namespaces of
// the tenant only (see confineAffinity): resources.SuperNamespaceSelector's translation, with
// the requirement tenancy.vcsyncer.io/tenant-uid In (tenantUID). sel is not modified.
func confineNamespaceSelector(sel *metav1.LabelSelector, tenantName, tenantUID string) *metav1.LabelSelector {
	out := resources.SuperNamespaceSelector(tenantName, tenantUID, sel)
	out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{
		Key: conversion.LabelTenantUID, Operator: metav1.LabelSelectorOpIn, Values: []string{tenantUID},
	})
	return out
}
