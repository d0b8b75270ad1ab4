package pod

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Every pod affinity and anti-affinity term of a super Pod selects Pods of the tenant's own
// super namespaces only: namespace names are mapped, every namespace selector (the empty one
// too) is ANDed with the tenant's UID label, kubernetes.io/metadata.name values and label keys
// are mapped (the keys to where the tenant's namespace labels are on super namespaces),
// and a term without either keeps meaning the Pod's own (super) namespace.
func TestConfineAffinity(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "tenant-uid"}
	super := func(ns string) string { return conversion.SuperNamespace("t1", "tenant-uid", ns) }
	mine := metav1.LabelSelectorRequirement{Key: conversion.LabelTenantUID, Operator: metav1.LabelSelectorOpIn, Values: []string{"tenant-uid"}}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	p := tenantPod()
	p.Spec.Affinity = &corev1.Affinity{
		PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
				{LabelSelector: sel, NamespaceSelector: &metav1.LabelSelector{}, TopologyKey: corev1.LabelOSStable},
				{LabelSelector: sel, TopologyKey: corev1.LabelHostname},
			},
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: sel, Namespaces: []string{"shop", "other-tenants-ns"}, TopologyKey: corev1.LabelHostname}}},
		},
		PodAffinity: &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{LabelSelector: sel, TopologyKey: corev1.LabelHostname,
				NamespaceSelector: &metav1.LabelSelector{
					MatchLabels:      map[string]string{corev1.LabelMetadataName: "shop", "team": "a"},
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"}}},
				}}},
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: sel, TopologyKey: corev1.LabelHostname, NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{conversion.LabelTenantUID: "other-uid"}}}}},
		},
	}
	orig := p.DeepCopy()
	got := Desired(c, p, super("shop"), nil).Spec.Affinity
	want := &corev1.Affinity{
		PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
				{LabelSelector: sel, NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{mine}}, TopologyKey: corev1.LabelOSStable},
				{LabelSelector: sel, TopologyKey: corev1.LabelHostname},
			},
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: sel, Namespaces: []string{super("shop"), super("other-tenants-ns")}, TopologyKey: corev1.LabelHostname}}},
		},
		PodAffinity: &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{LabelSelector: sel, TopologyKey: corev1.LabelHostname,
				NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{corev1.LabelMetadataName: super("shop"), resources.NamespaceSelectorKey("team"): "a"},
					MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{super("kube-system")}}, mine},
				}}},
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: sel, TopologyKey: corev1.LabelHostname, NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{conversion.LabelUnmappedNamespaceKey: "other-uid"}, MatchExpressions: []metav1.LabelSelectorRequirement{mine}}}}},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("super Pod affinity (-want +got):\n%s", d)
	}
	if d := cmp.Diff(orig, p); d != "" {
		t.Errorf("tenant Pod modified (-before +after):\n%s", d)
	}

	// The confined selectors select this tenant's super namespaces, never another tenant's nor
	// the super cluster's own.
	team := resources.NamespaceSelectorKey("team") // where the tenant label team=a is on a super namespace
	own := labels.Set{conversion.LabelTenantUID: "tenant-uid", corev1.LabelMetadataName: super("shop"), team: "a"}
	other := labels.Set{conversion.LabelTenantUID: "other-uid", corev1.LabelMetadataName: conversion.SuperNamespace("t2", "other-uid", "shop"), team: "a"}
	system := labels.Set{corev1.LabelMetadataName: "default"}
	for _, term := range []corev1.PodAffinityTerm{got.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0], got.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]} {
		s, err := metav1.LabelSelectorAsSelector(term.NamespaceSelector)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Matches(own) || s.Matches(other) || s.Matches(system) {
			t.Errorf("selector %s: own %v, other tenant's %v, default %v; want true, false, false", s, s.Matches(own), s.Matches(other), s.Matches(system))
		}
	}
}

// The ephemeral containers of a tenant Pod are reported once per set of names: a Warning Event
// and one count, again only when a container is added.
func TestReportEphemeralContainers(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	c := &tenant.Cluster{Name: "ephemeral-report-tenant", UID: "tenant-uid", Recorder: rec}
	c.SetPolicy(policy.Default())
	count := func() float64 {
		return metrics.PolicyDenials(c.Name, string(resources.KindPod), string(policy.RuleEphemeralContainer))
	}
	before := count()
	p := tenantPod()
	p.ResourceVersion = "1"
	p.Spec.EphemeralContainers = nil
	reportEphemeralContainers(c, p) // none: nothing
	p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger-1"}}}
	for rv := range []string{"2", "3", "4"} { // status updates do not report again
		p.ResourceVersion = string(rune('2' + rv))
		reportEphemeralContainers(c, p)
	}
	if got := count() - before; got != 1 || len(rec.Events) != 1 {
		t.Fatalf("after one ephemeral container: %v counts, %d Events; want 1 and 1", got, len(rec.Events))
	}
	p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger-2"}})
	reportEphemeralContainers(c, p)
	reportEphemeralContainers(c, p)
	if got := count() - before; got != 2 || len(rec.Events) != 2 {
		t.Fatalf("after a second ephemeral container: %v counts, %d Events; want 2 and 2", got, len(rec.Events))
	}
	ev := <-rec.Events
	if want := "Warning " + policy.ReasonPolicyDenied; len(ev) < len(want) || ev[:len(want)] != want {
		t.Errorf("Event %q, want a %s", ev, want)
	}
}

// Deleting a tenant Pod with a grace period above the policy's bound deletes the super Pod with
// the bound, and says so once.
func TestDeleteGracePeriodClamped(t *testing.T) {
	ctx := context.Background()
	years := int64(10 * 365 * 24 * 3600)
	now := metav1.Now()
	tp := attackPod()
	tp.DeletionTimestamp, tp.DeletionGracePeriodSeconds = &now, &years
	tcs := fake.NewClientset()
	scs := fake.NewClientset()
	var grace []*int64
	scs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		grace = append(grace, a.(k8stesting.DeleteActionImpl).DeleteOptions.GracePeriodSeconds)
		return true, nil, nil
	})
	rec := record.NewFakeRecorder(10)
	c := &tenant.Cluster{Name: "delete-grace-tenant", UID: "tenant-uid", Client: tcs, Informers: informers.NewSharedInformerFactory(tcs, 0), Recorder: rec}
	c.SetPolicy(policy.Default())
	env := &resources.Env{Super: scs, SuperInformers: informers.NewSharedInformerFactory(scs, 0), SuperNodes: informers.NewSharedInformerFactory(scs, 0)}
	superNS := resources.SuperNamespace(c, "shop")
	sp := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: superNS, UID: "super-uid"}}
	conversion.Stamp(&sp.ObjectMeta, resources.Owner(c, tp))
	mustAdd(t, env.SuperInformers.Core().V1().Pods().Informer().GetIndexer(), sp)
	mustAdd(t, c.Informers.Core().V1().Pods().Informer().GetIndexer(), tp)
	before := metrics.PolicyDenials(c.Name, string(resources.KindPod), string(policy.RuleTerminationGracePeriod))

	for range 2 { // a second pass (the informer's echo) reports nothing more
		if err := reconcileDownward(ctx, env, c, "shop", "web"); err != nil {
			t.Fatal(err)
		}
	}
	if len(grace) != 2 || grace[0] == nil || *grace[0] != 3600 {
		t.Fatalf("super Pod deleted with grace periods %v, want 3600", grace)
	}
	if got := metrics.PolicyDenials(c.Name, string(resources.KindPod), string(policy.RuleTerminationGracePeriod)) - before; got != 1 || len(rec.Events) != 1 {
		t.Errorf("%v counts, %d Events; want 1 and 1", got, len(rec.Events))
	}
}
