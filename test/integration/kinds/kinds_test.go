package kinds_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/resources/endpointslice"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
	"github.com/vcsyncer/syncer/pkg/resources/priorityclass"
	"github.com/vcsyncer/syncer/pkg/resources/runtimeclass"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// TestMoreKinds checks the kinds beyond the skeleton against real control planes: Endpoints and
// EndpointSlices of selector-less Services (in any order), the opt-in Ingress, NetworkPolicy
// and PodDisruptionBudget, public PriorityClasses and Events.
func TestMoreKinds(t *testing.T) {
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 1}, 2)
	c := itest.StartSyncer(t, env.Super.RESTConfig, func(o *options.Options) {
		o.OptInKinds = []string{"Ingress", "NetworkPolicy", "PodDisruptionBudget"} // Event is synced by default
	})
	// Endpoints naming an address outside the tenant's Pods and Ingresses are refused by the
	// built-in policy; this test checks their translation.
	itest.DefaultPolicy(t, c, tenancyv1alpha1.TenantPolicySpec{Network: &tenancyv1alpha1.NetworkPolicy{
		AllowedEndpointCIDRs: []string{"192.0.2.0/24"}, AllowedIngressClasses: []string{"nginx"}, AllowedIngressHosts: []string{"web.example"}}})
	super := env.Super.Client
	ctx := context.Background()
	t1, t2 := env.Tenants[0], env.Tenants[1]
	for _, tc := range []*localcluster.ControlPlane{t1, t2} {
		if err := itest.AddTenant(ctx, c, itest.KubeconfigNS, tc, 1); err != nil {
			t.Fatal(err)
		}
	}
	itest.WaitRunning(t, c, t1.Name)
	itest.WaitRunning(t, c, t2.Name)
	uid1, uid2 := itest.TenantUID(t, c, t1.Name), itest.TenantUID(t, c, t2.Name)
	itest.MustCreateNS(t, t1.Client, "apps")
	itest.MustCreateNS(t, t2.Client, "apps")
	ns1 := conversion.SuperNamespace(t1.Name, uid1, "apps")
	itest.Eventually(t, time.Minute, "super namespaces", func(ctx context.Context) error {
		for _, ns := range []string{ns1, conversion.SuperNamespace(t2.Name, uid2, "apps")} {
			if _, err := super.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		return nil
	})

	t.Run("Endpoints applied before their selector-less Service converge", func(t *testing.T) {
		itest.Created(t)(t1.Client.CoreV1().Endpoints("apps").Create(ctx, &corev1.Endpoints{
			ObjectMeta: metav1.ObjectMeta{Name: "ext-db"},
			Subsets: []corev1.EndpointSubset{{
				Addresses: []corev1.EndpointAddress{{IP: "192.0.2.10"}},
				Ports:     []corev1.EndpointPort{{Name: "pg", Port: 5432, Protocol: corev1.ProtocolTCP}},
			}},
		}, metav1.CreateOptions{}))
		itest.Consistently(t, 2*time.Second, "no super Endpoints without a Service", func(ctx context.Context) error {
			if ep, err := super.CoreV1().Endpoints(ns1).Get(ctx, "ext-db", metav1.GetOptions{}); err == nil {
				return itest.Errorf("super Endpoints synced before the Service: %+v", ep.ObjectMeta)
			}
			return nil
		})
		itest.Created(t)(t1.Client.CoreV1().Services("apps").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "ext-db"},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "pg", Port: 5432}}},
		}, metav1.CreateOptions{}))
		itest.Eventually(t, time.Minute, "super Endpoints ext-db", func(ctx context.Context) error {
			ep, err := super.CoreV1().Endpoints(ns1).Get(ctx, "ext-db", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !conversion.OwnedByTenant(ep, uid1) || ep.Labels[discoveryv1.LabelSkipMirror] != "true" {
				return itest.Errorf("not owned or not skip-mirror: %v", ep.Labels)
			}
			if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 1 || ep.Subsets[0].Addresses[0].IP != "192.0.2.10" {
				return itest.Errorf("subsets %+v", ep.Subsets)
			}
			return nil
		})
		// The tenant's mirroring controller makes a slice from the Endpoints; it is synced, and
		// the super cluster does not mirror the super Endpoints a second time.
		itest.Eventually(t, time.Minute, "super EndpointSlice of ext-db", func(ctx context.Context) error {
			sl, err := super.DiscoveryV1().EndpointSlices(ns1).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=ext-db"})
			if err != nil {
				return err
			}
			if len(sl.Items) != 1 {
				return itest.Errorf("%d super slices for ext-db, want 1 (the tenant's, synced)", len(sl.Items))
			}
			s := sl.Items[0]
			if s.Labels[discoveryv1.LabelManagedBy] != endpointslice.ManagedBy || !conversion.OwnedByTenant(&s, uid1) {
				return itest.Errorf("slice %s labels %v", s.Name, s.Labels)
			}
			if len(s.Endpoints) != 1 || s.Endpoints[0].Addresses[0] != "192.0.2.10" {
				return itest.Errorf("slice endpoints %+v", s.Endpoints)
			}
			return nil
		})
	})

	t.Run("Endpoints of a Service with a selector are never synced", func(t *testing.T) {
		itest.Created(t)(t1.Client.CoreV1().Services("apps").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}},
		}, metav1.CreateOptions{}))
		itest.Eventually(t, time.Minute, "super Service web", func(ctx context.Context) error {
			_, err := super.CoreV1().Services(ns1).Get(ctx, "web", metav1.GetOptions{})
			return err
		})
		itest.Eventually(t, time.Minute, "tenant Endpoints web", func(ctx context.Context) error {
			_, err := t1.Client.CoreV1().Endpoints("apps").Get(ctx, "web", metav1.GetOptions{})
			return err
		})
		itest.Consistently(t, 3*time.Second, "super Endpoints and slices of web are the super cluster's", func(ctx context.Context) error {
			// The super endpoints controllers copy the super Service's labels (the syncer's
			// managed-by among them), never its ownership annotations.
			if ep, err := super.CoreV1().Endpoints(ns1).Get(ctx, "web", metav1.GetOptions{}); err == nil {
				if _, owned := conversion.OwnerOf(ep); owned || ep.Annotations[conversion.AnnotationUID] != "" {
					return itest.Errorf("super Endpoints web written by the syncer: %v %v", ep.Labels, ep.Annotations)
				}
			}
			sl, err := super.DiscoveryV1().EndpointSlices(ns1).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=web"})
			if err != nil {
				return err
			}
			for _, s := range sl.Items {
				if _, owned := conversion.OwnerOf(&s); owned || s.Labels[discoveryv1.LabelManagedBy] == endpointslice.ManagedBy {
					return itest.Errorf("super slice %s written by the syncer: %v", s.Name, s.Labels)
				}
			}
			return nil
		})
		// A selector-less Service that gains a selector loses its synced Endpoints.
		svc, err := t1.Client.CoreV1().Services("apps").Get(ctx, "ext-db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svc.Spec.Selector = map[string]string{"app": "db"}
		if _, err := t1.Client.CoreV1().Services("apps").Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, time.Minute, "synced Endpoints ext-db removed", func(ctx context.Context) error {
			ep, err := super.CoreV1().Endpoints(ns1).Get(ctx, "ext-db", metav1.GetOptions{})
			if err == nil && conversion.OwnedByTenant(ep, uid1) {
				return itest.Errorf("super Endpoints ext-db still the syncer's")
			}
			sl, err := super.DiscoveryV1().EndpointSlices(ns1).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelManagedBy + "=" + endpointslice.ManagedBy})
			if err != nil {
				return err
			}
			if len(sl.Items) > 0 {
				return itest.Errorf("%d synced slices left", len(sl.Items))
			}
			return nil
		})
	})

	t.Run("NetworkPolicy namespaceSelector stays inside the tenant", func(t *testing.T) {
		itest.MustCreateNS(t, t1.Client, "other")
		itest.Created(t)(t1.Client.NetworkingV1().NetworkPolicies("apps").Create(ctx, &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "from-any-ns"},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{
					{NamespaceSelector: &metav1.LabelSelector{}},
					{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "other"}}},
					{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "client"}}},
				}}},
			},
		}, metav1.CreateOptions{}))
		var np *networkingv1.NetworkPolicy
		itest.Eventually(t, time.Minute, "super NetworkPolicy", func(ctx context.Context) error {
			var err error
			np, err = super.NetworkingV1().NetworkPolicies(ns1).Get(ctx, "from-any-ns", metav1.GetOptions{})
			return err
		})
		if got := np.Spec.PodSelector.MatchLabels["app"]; got != "web" {
			t.Errorf("podSelector changed: %+v", np.Spec.PodSelector)
		}
		peers := np.Spec.Ingress[0].From
		if peers[2].NamespaceSelector != nil || peers[2].PodSelector.MatchLabels["role"] != "client" {
			t.Errorf("namespace-local peer changed: %+v", peers[2])
		}
		nss, err := super.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		matching := func(sel *metav1.LabelSelector) []string {
			s, err := metav1.LabelSelectorAsSelector(sel)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, n := range nss.Items {
				if s.Matches(labels.Set(n.Labels)) {
					out = append(out, n.Name)
				}
			}
			return out
		}
		all := matching(peers[0].NamespaceSelector)
		if len(all) < 2 {
			t.Errorf("{} selects %v, want the tenant's super namespaces (apps, other, ...)", all)
		}
		for _, n := range all {
			ns, _ := super.CoreV1().Namespaces().Get(ctx, n, metav1.GetOptions{})
			if !conversion.OwnedByTenant(ns, uid1) {
				t.Errorf("{} selects super namespace %s, which is not tenant %s's", n, t1.Name)
			}
		}
		if got, want := matching(peers[1].NamespaceSelector), conversion.SuperNamespace(t1.Name, uid1, "other"); len(got) != 1 || got[0] != want {
			t.Errorf("metadata.name=other selects %v, want [%s]", got, want)
		}
	})

	t.Run("PodDisruptionBudget and Ingress", func(t *testing.T) {
		minAvail := intstr.FromInt32(1)
		itest.Created(t)(t1.Client.PolicyV1().PodDisruptionBudgets("apps").Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvail, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		}, metav1.CreateOptions{}))
		itest.Eventually(t, time.Minute, "super PodDisruptionBudget", func(ctx context.Context) error {
			p, err := super.PolicyV1().PodDisruptionBudgets(ns1).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Spec.MinAvailable.IntValue() != 1 || p.Spec.Selector.MatchLabels["app"] != "web" {
				return itest.Errorf("spec %+v", p.Spec)
			}
			return nil
		})
		class := "nginx"
		prefix := networkingv1.PathTypePrefix
		itest.Created(t)(t1.Client.NetworkingV1().Ingresses("apps").Create(ctx, &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
				Host: "web.example", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{
						Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
				}},
			}}},
		}, metav1.CreateOptions{}))
		var si *networkingv1.Ingress
		itest.Eventually(t, time.Minute, "super Ingress", func(ctx context.Context) error {
			var err error
			si, err = super.NetworkingV1().Ingresses(ns1).Get(ctx, "web", metav1.GetOptions{})
			return err
		})
		if si.Spec.IngressClassName == nil || *si.Spec.IngressClassName != class {
			t.Errorf("ingressClassName %v", si.Spec.IngressClassName)
		}
		// The super cluster's ingress controller (played here) publishes an address.
		si.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.7"}}
		if _, err := super.NetworkingV1().Ingresses(ns1).UpdateStatus(ctx, si, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, time.Minute, "tenant Ingress status", func(ctx context.Context) error {
			ti, err := t1.Client.NetworkingV1().Ingresses("apps").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !equality.Semantic.DeepEqual(ti.Status.LoadBalancer, si.Status.LoadBalancer) {
				return itest.Errorf("tenant status %+v", ti.Status.LoadBalancer)
			}
			return nil
		})
	})

	t.Run("public PriorityClasses reach every tenant; Pods use them or are rejected", func(t *testing.T) {
		itest.Created(t)(super.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{
			ObjectMeta: metav1.ObjectMeta{Name: "gold", Labels: map[string]string{conversion.LabelPublic: conversion.PublicValue}},
			Value:      1000, Description: "public gold",
		}, metav1.CreateOptions{}))
		itest.Created(t)(super.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{
			ObjectMeta: metav1.ObjectMeta{Name: "super-private"}, Value: 2000,
		}, metav1.CreateOptions{}))
		for _, tc := range []*localcluster.ControlPlane{t1, t2} {
			itest.Eventually(t, time.Minute, "gold in "+tc.Name, func(ctx context.Context) error {
				pc, err := tc.Client.SchedulingV1().PriorityClasses().Get(ctx, "gold", metav1.GetOptions{})
				if err != nil {
					return err
				}
				if pc.Value != 1000 || pc.Description != "public gold" || !priorityclass.IsCopy(pc) {
					return itest.Errorf("tenant copy %+v", pc)
				}
				return nil
			})
			if _, err := tc.Client.SchedulingV1().PriorityClasses().Get(ctx, "super-private", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("%s: unlabelled super class copied: %v", tc.Name, err)
			}
		}
		// A tenant's own class (not public in the super cluster).
		itest.Created(t)(t1.Client.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{
			ObjectMeta: metav1.ObjectMeta{Name: "tenant-own"}, Value: 500,
		}, metav1.CreateOptions{}))
		itest.Created(t)(t1.Client.CoreV1().Pods("apps").Create(ctx, priorityPod("gold-pod", "gold"), metav1.CreateOptions{}))
		itest.Created(t)(t1.Client.CoreV1().Pods("apps").Create(ctx, priorityPod("own-pod", "tenant-own"), metav1.CreateOptions{}))
		itest.Eventually(t, time.Minute, "super Pod keeps the public class", func(ctx context.Context) error {
			p, err := super.CoreV1().Pods(ns1).Get(ctx, "gold-pod", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Spec.PriorityClassName != "gold" || p.Spec.Priority == nil || *p.Spec.Priority != 1000 {
				return itest.Errorf("priorityClassName %q priority %v", p.Spec.PriorityClassName, p.Spec.Priority)
			}
			return nil
		})
		itest.WaitEvent(t, t1.Client, "apps", "own-pod", priorityclass.ReasonPriorityClassNotPublic, "tenant-own")
		if _, err := super.CoreV1().Pods(ns1).Get(ctx, "own-pod", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a Pod with a non-public class reached the super cluster: %v", err)
		}
		// Unpublishing removes the tenant copies, never the tenant's own classes.
		pc, err := super.SchedulingV1().PriorityClasses().Get(ctx, "gold", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		delete(pc.Labels, conversion.LabelPublic)
		if _, err := super.SchedulingV1().PriorityClasses().Update(ctx, pc, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []*localcluster.ControlPlane{t1, t2} {
			itest.Eventually(t, time.Minute, "gold removed from "+tc.Name, func(ctx context.Context) error {
				if _, err := tc.Client.SchedulingV1().PriorityClasses().Get(ctx, "gold", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					return itest.Errorf("still there: %v", err)
				}
				return nil
			})
		}
		if _, err := t1.Client.SchedulingV1().PriorityClasses().Get(ctx, "tenant-own", metav1.GetOptions{}); err != nil {
			t.Errorf("tenant's own class touched: %v", err)
		}
	})

	t.Run("a Pod naming the tenant's own RuntimeClass runs with the default runtime", func(t *testing.T) {
		// The conformance test "should schedule a Pod requesting a RuntimeClass and initialize
		// its Overhead": the tenant creates a class the super cluster does not have.
		itest.Created(t)(t1.Client.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{
			ObjectMeta: metav1.ObjectMeta{Name: "tenant-handler"}, Handler: "test-handler",
			Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
		}, metav1.CreateOptions{}))
		p := priorityPod("rc-pod", "")
		rc := "tenant-handler"
		p.Spec.RuntimeClassName = &rc
		itest.Created(t)(t1.Client.CoreV1().Pods("apps").Create(ctx, p, metav1.CreateOptions{}))
		itest.Eventually(t, time.Minute, "tenant Pod scheduled with its overhead", func(ctx context.Context) error {
			tp, err := t1.Client.CoreV1().Pods("apps").Get(ctx, "rc-pod", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if tp.Spec.NodeName == "" || tp.Spec.Overhead.Cpu().String() != "10m" {
				return itest.Errorf("nodeName %q overhead %v", tp.Spec.NodeName, tp.Spec.Overhead)
			}
			return nil
		})
		sp, err := super.CoreV1().Pods(ns1).Get(ctx, "rc-pod", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sp.Spec.RuntimeClassName != nil || sp.Spec.Overhead != nil {
			t.Errorf("super Pod runtimeClassName %v overhead %v, want neither", sp.Spec.RuntimeClassName, sp.Spec.Overhead)
		}
		itest.WaitEvent(t, t1.Client, "apps", "rc-pod", pod.ReasonLocalRuntimeClass, "tenant-handler")
	})

	t.Run("the super RuntimeClasses a tenant's policy allows reach that tenant, and its Pods run with them", func(t *testing.T) {
		for _, name := range []string{"sandboxed", "unlisted"} {
			itest.Created(t)(super.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{
				ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: "runsc",
				Overhead:   &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}},
				Scheduling: &nodev1.Scheduling{Tolerations: []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists}}},
			}, metav1.CreateOptions{}))
		}
		itest.Created(t)(nil, c.Create(ctx, &tenancyv1alpha1.TenantPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "sandboxed-runtime"},
			Spec:       tenancyv1alpha1.TenantPolicySpec{Pods: &tenancyv1alpha1.PodPolicy{AllowedRuntimeClassNames: []string{"sandboxed"}}},
		}))
		setPolicyName(t, c, t1.Name, "sandboxed-runtime")
		itest.Eventually(t, time.Minute, "sandboxed copied into "+t1.Name, func(ctx context.Context) error {
			rc, err := t1.Client.NodeV1().RuntimeClasses().Get(ctx, "sandboxed", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !runtimeclass.IsCopy(rc) || rc.Handler != "runsc" || rc.Overhead.PodFixed.Cpu().String() != "50m" || rc.Scheduling != nil {
				return itest.Errorf("tenant copy %+v", rc)
			}
			return nil
		})
		for _, check := range []struct {
			tc   *localcluster.ControlPlane
			name string
		}{{t1, "unlisted"}, {t2, "sandboxed"}, {t2, "unlisted"}} {
			if _, err := check.tc.Client.NodeV1().RuntimeClasses().Get(ctx, check.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("%s got RuntimeClass %s, which its policy does not allow: %v", check.tc.Name, check.name, err)
			}
		}
		p := priorityPod("sandboxed-pod", "")
		rc := "sandboxed"
		p.Spec.RuntimeClassName = &rc
		itest.Created(t)(t1.Client.CoreV1().Pods("apps").Create(ctx, p, metav1.CreateOptions{}))
		itest.Eventually(t, time.Minute, "super Pod with the RuntimeClass, tenant Pod scheduled", func(ctx context.Context) error {
			sp, err := super.CoreV1().Pods(ns1).Get(ctx, "sandboxed-pod", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if sp.Spec.RuntimeClassName == nil || *sp.Spec.RuntimeClassName != "sandboxed" || sp.Spec.Overhead.Cpu().String() != "50m" {
				return itest.Errorf("super Pod runtimeClassName %v overhead %v", sp.Spec.RuntimeClassName, sp.Spec.Overhead)
			}
			tp, err := t1.Client.CoreV1().Pods("apps").Get(ctx, "sandboxed-pod", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if tp.Spec.NodeName == "" || tp.Spec.Overhead.Cpu().String() != "50m" {
				return itest.Errorf("tenant Pod nodeName %q overhead %v", tp.Spec.NodeName, tp.Spec.Overhead)
			}
			return nil
		})
		// Back to the default policy, which allows no RuntimeClass: the copy goes.
		setPolicyName(t, c, t1.Name, "")
		itest.Eventually(t, time.Minute, "sandboxed removed from "+t1.Name, func(ctx context.Context) error {
			if _, err := t1.Client.NodeV1().RuntimeClasses().Get(ctx, "sandboxed", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("still there: %v", err)
			}
			return nil
		})
	})

	t.Run("Events by default: Scheduled and FailedScheduling reach the tenant", func(t *testing.T) {
		itest.Created(t)(t1.Client.CoreV1().Pods("apps").Create(ctx, priorityPod("evt-runs", ""), metav1.CreateOptions{}))
		// More CPU than the super cluster's kwok Node has (32): the super scheduler reports
		// FailedScheduling (Insufficient cpu), within the built-in quota (64 CPU of requests).
		unsched := priorityPod("evt-unschedulable", "")
		cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("40")}
		unsched.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: cpu, Limits: cpu}
		itest.Created(t)(t1.Client.CoreV1().Pods("apps").Create(ctx, unsched, metav1.CreateOptions{}))
		for _, want := range []struct{ pod, reason, typ string }{
			{"evt-runs", "Scheduled", corev1.EventTypeNormal},
			{"evt-unschedulable", "FailedScheduling", corev1.EventTypeWarning},
		} {
			itest.Eventually(t, time.Minute, want.reason+" Event about "+want.pod, func(ctx context.Context) error {
				tp, err := t1.Client.CoreV1().Pods("apps").Get(ctx, want.pod, metav1.GetOptions{})
				if err != nil {
					return err
				}
				e, err := copiedEvent(ctx, t1.Client, want.pod, want.reason)
				if err != nil {
					all, _ := t1.Client.CoreV1().Events("apps").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + want.pod})
					var seen []string
					for _, e := range all.Items {
						seen = append(seen, e.Type+"/"+e.Reason+": "+e.Message)
					}
					sp, serr := super.CoreV1().Pods(ns1).Get(ctx, want.pod, metav1.GetOptions{})
					return itest.Errorf("%v (the tenant's Events about it: %q; super Pod: %v, conditions %+v)", err, seen, serr, podConditions(sp))
				}
				if e.Type != want.typ || e.InvolvedObject.UID != tp.UID || e.InvolvedObject.Namespace != "apps" {
					return itest.Errorf("type %s, involvedObject %+v; want %s about the tenant Pod (uid %s)", e.Type, e.InvolvedObject, want.typ, tp.UID)
				}
				return nil
			})
		}
	})

	t.Run("Events about synced objects are copied up, deduplicated", func(t *testing.T) {
		itest.Created(t)(t1.Client.CoreV1().Pods("apps").Create(ctx, priorityPod("evt-pod", ""), metav1.CreateOptions{}))
		var tp *corev1.Pod
		itest.Eventually(t, time.Minute, "tenant Pod bound", func(ctx context.Context) error {
			var err error
			tp, err = t1.Client.CoreV1().Pods("apps").Get(ctx, "evt-pod", metav1.GetOptions{})
			if err == nil && tp.Spec.NodeName == "" {
				return itest.Errorf("not bound")
			}
			return err
		})
		// The super scheduler's Scheduled Event about the super Pod.
		itest.Eventually(t, time.Minute, "Scheduled Event copied", func(ctx context.Context) error {
			e, err := copiedEvent(ctx, t1.Client, "evt-pod", "Scheduled")
			if err != nil {
				return err
			}
			ref := e.InvolvedObject
			if ref.Namespace != "apps" || ref.UID != tp.UID || ref.Kind != "Pod" {
				return itest.Errorf("involvedObject %+v, want the tenant Pod (uid %s)", ref, tp.UID)
			}
			if !strings.Contains(e.Message, "apps/evt-pod") || strings.Contains(e.Message, ns1) {
				return itest.Errorf("message not translated: %q", e.Message)
			}
			return nil
		})
		// A super Event that repeats (count grows) updates the one tenant copy.
		sp, err := super.CoreV1().Pods(ns1).Get(ctx, "evt-pod", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		now := metav1.Now()
		se, err := super.CoreV1().Events(ns1).Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "evt-pod.repeat"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns1, Name: "evt-pod", UID: sp.UID},
			Reason:         "BackOff", Message: "Back-off restarting failed container", Type: corev1.EventTypeWarning,
			Source: corev1.EventSource{Component: "kubelet"}, FirstTimestamp: now, LastTimestamp: now, Count: 1,
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Another tenant's objects and unsynced names are never reported into tenant 1.
		itest.Created(t)(super.CoreV1().Events(ns1).Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "not-synced.1"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns1, Name: "not-synced"},
			Reason:         "BackOff", Message: "about an object the syncer did not make", Type: corev1.EventTypeWarning,
			FirstTimestamp: now, LastTimestamp: now, Count: 1,
		}, metav1.CreateOptions{}))
		itest.Eventually(t, time.Minute, "BackOff Event copied", func(ctx context.Context) error {
			e, err := copiedEvent(ctx, t1.Client, "evt-pod", "BackOff")
			if err != nil {
				return err
			}
			if e.Count != 1 {
				return itest.Errorf("count %d", e.Count)
			}
			return nil
		})
		se.Count, se.LastTimestamp = 5, metav1.NewTime(now.Add(time.Minute))
		if _, err := super.CoreV1().Events(ns1).Update(ctx, se, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, time.Minute, "tenant copy count 5", func(ctx context.Context) error {
			evs, err := t1.Client.CoreV1().Events("apps").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=evt-pod,reason=BackOff"})
			if err != nil {
				return err
			}
			if len(evs.Items) != 1 || evs.Items[0].Count != 5 {
				return itest.Errorf("%d BackOff Events, want one with count 5: %+v", len(evs.Items), evs.Items)
			}
			return nil
		})
		evs, err := t1.Client.CoreV1().Events("apps").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=not-synced"})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs.Items) > 0 {
			t.Errorf("Event about an unsynced object copied: %+v", evs.Items[0])
		}
		for _, ns := range []string{"apps", "default"} {
			evs, err := t2.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{LabelSelector: conversion.LabelManagedBy})
			if err != nil {
				t.Fatal(err)
			}
			if len(evs.Items) > 0 {
				t.Errorf("tenant %s got tenant %s's Events: %+v", t2.Name, t1.Name, evs.Items[0].InvolvedObject)
			}
		}
	})
}

func podConditions(p *corev1.Pod) []corev1.PodCondition {
	if p == nil {
		return nil
	}
	return p.Status.Conditions
}

// setPolicyName sets Tenant name's spec.policyName ("": the default policy).
func setPolicyName(t *testing.T, c client.Client, name, policyName string) {
	t.Helper()
	itest.Eventually(t, time.Minute, "Tenant "+name+" spec.policyName="+policyName, func(ctx context.Context) error {
		tn := &tenancyv1alpha1.Tenant{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, tn); err != nil {
			return err
		}
		tn.Spec.PolicyName = policyName
		return c.Update(ctx, tn)
	})
}

func priorityPod(name, class string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{PriorityClassName: class, Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}},
	}
}

// copiedEvent returns the syncer's copy of an Event with reason about tenant object name in
// namespace apps.
func copiedEvent(ctx context.Context, c kubernetes.Interface, name, reason string) (*corev1.Event, error) {
	evs, err := c.CoreV1().Events("apps").List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + name + ",reason=" + reason,
		LabelSelector: conversion.LabelManagedBy + "=" + conversion.ManagedByValue,
	})
	if err != nil {
		return nil, err
	}
	if len(evs.Items) != 1 {
		return nil, itest.Errorf("%d copied %s Events about %s, want 1", len(evs.Items), reason, name)
	}
	return &evs.Items[0], nil
}
