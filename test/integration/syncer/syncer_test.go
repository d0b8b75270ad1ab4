package syncer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

func TestSyncer(t *testing.T) {
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 2}, 3)
	c := itest.StartSyncer(t, env.Super.RESTConfig, nil)
	allow := true
	// NodePort and LoadBalancer Services (with externalTrafficPolicy Local) are refused by
	// the built-in policy; this test checks their translation.
	itest.DefaultPolicy(t, c, tenancyv1alpha1.TenantPolicySpec{Services: &tenancyv1alpha1.ServicePolicy{
		AllowedTypes:            []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer},
		AllowLocalTrafficPolicy: &allow},
		// The built-in quota allows no node ports or load balancers.
		Limits: &tenancyv1alpha1.LimitsPolicy{Quota: corev1.ResourceList{
			corev1.ResourceServicesNodePorts: resource.MustParse("10"), corev1.ResourceServicesLoadBalancers: resource.MustParse("10"),
			corev1.ResourcePods: resource.MustParse("1000")}}})
	super := env.Super.Client
	ctx := context.Background()
	t1, t2, t3 := env.Tenants[0], env.Tenants[1], env.Tenants[2]

	// Tenant 3 gets 600 objects before it is registered: they must all be synced.
	const preexisting = 600
	itest.MustCreateNS(t, t3.Client, "bulk")
	for i := range preexisting {
		_, err := t3.Client.CoreV1().ConfigMaps("bulk").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", i)}, Data: map[string]string{"i": fmt.Sprint(i)},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []*localcluster.ControlPlane{t1, t2} {
		if err := itest.AddTenant(ctx, c, itest.KubeconfigNS, tc, 1); err != nil {
			t.Fatal(err)
		}
	}
	itest.WaitRunning(t, c, t1.Name)
	itest.WaitRunning(t, c, t2.Name)
	uid1 := itest.TenantUID(t, c, t1.Name)
	uid2 := itest.TenantUID(t, c, t2.Name)

	t.Run("status reports prefix and conditions", func(t *testing.T) {
		tn := getTenant(t, c, t1.Name)
		if want := conversion.SuperNamespacePrefix(t1.Name, uid1); tn.Status.SuperNamespacePrefix != want {
			t.Errorf("superNamespacePrefix = %q, want %q", tn.Status.SuperNamespacePrefix, want)
		}
		for _, typ := range []string{tenancyv1alpha1.ConditionKubeconfigValid, tenancyv1alpha1.ConditionConnected, tenancyv1alpha1.ConditionSynced} {
			if !meta.IsStatusConditionTrue(tn.Status.Conditions, typ) {
				t.Errorf("condition %s not True: %+v", typ, tn.Status.Conditions)
			}
		}
		if tn.Spec.Weight != 1 || tn.Status.ObservedGeneration != tn.Generation {
			t.Errorf("weight %d observedGeneration %d generation %d", tn.Spec.Weight, tn.Status.ObservedGeneration, tn.Generation)
		}
	})

	// The same namespace and names in two tenants.
	for _, tc := range []*localcluster.ControlPlane{t1, t2} {
		itest.MustCreateNS(t, tc.Client, "shop")
		itest.Created(t)(tc.Client.CoreV1().ConfigMaps("shop").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"owner": tc.Name}}, metav1.CreateOptions{}))
		itest.Created(t)(tc.Client.CoreV1().Secrets("shop").Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "creds"}, StringData: map[string]string{"password": "pw-" + tc.Name}}, metav1.CreateOptions{}))
		itest.Created(t)(tc.Client.CoreV1().ServiceAccounts("shop").Create(ctx, &corev1.ServiceAccount{
			ObjectMeta: metav1.ObjectMeta{Name: "builder"}}, metav1.CreateOptions{}))
		itest.Created(t)(tc.Client.CoreV1().Services("shop").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": "web"},
				Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}, metav1.CreateOptions{}))
		itest.Created(t)(tc.Client.CoreV1().Services("shop").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "db"},
			Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "db"}, Ports: []corev1.ServicePort{{Port: 5432}}}}, metav1.CreateOptions{}))
		itest.Created(t)(tc.Client.CoreV1().Pods("shop").Create(ctx, webPod("web-0"), metav1.CreateOptions{}))
	}
	ns1 := conversion.SuperNamespace(t1.Name, uid1, "shop")
	ns2 := conversion.SuperNamespace(t2.Name, uid2, "shop")

	t.Run("downward: every kind lands in its own mapped namespace", func(t *testing.T) {
		if ns1 == ns2 {
			t.Fatalf("two tenants share super namespace %s", ns1)
		}
		for ns, owner := range map[string]*localcluster.ControlPlane{ns1: t1, ns2: t2} {
			itest.Eventually(t, time.Minute, "ConfigMap in "+ns, func(ctx context.Context) error {
				cm, err := super.CoreV1().ConfigMaps(ns).Get(ctx, "cfg", metav1.GetOptions{})
				if err != nil {
					return err
				}
				if cm.Data["owner"] != owner.Name || cm.Annotations[conversion.AnnotationTenant] != owner.Name {
					return itest.Errorf("wrong content %v %v", cm.Data, cm.Annotations)
				}
				return nil
			})
			itest.Eventually(t, time.Minute, "Secret in "+ns, func(ctx context.Context) error {
				s, err := super.CoreV1().Secrets(ns).Get(ctx, "creds", metav1.GetOptions{})
				if err != nil {
					return err
				}
				if string(s.Data["password"]) != "pw-"+owner.Name {
					return itest.Errorf("wrong secret data")
				}
				return nil
			})
			itest.Eventually(t, time.Minute, "ServiceAccount in "+ns, func(ctx context.Context) error {
				_, err := super.CoreV1().ServiceAccounts(ns).Get(ctx, "builder", metav1.GetOptions{})
				return err
			})
			itest.Eventually(t, time.Minute, "Services in "+ns, func(ctx context.Context) error {
				web, err := super.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
				if err != nil {
					return err
				}
				tw, err := owner.Client.CoreV1().Services("shop").Get(ctx, "web", metav1.GetOptions{})
				if err != nil {
					return err
				}
				if web.Spec.ClusterIP == "" || web.Spec.ClusterIP == tw.Spec.ClusterIP && strings.HasPrefix(tw.Spec.ClusterIP, "10.0.0.") {
					return itest.Errorf("super ClusterIP %q not allocated by the super cluster (tenant %q)", web.Spec.ClusterIP, tw.Spec.ClusterIP)
				}
				if web.Spec.Ports[0].NodePort == 0 {
					return itest.Errorf("super did not allocate a node port")
				}
				db, err := super.CoreV1().Services(ns).Get(ctx, "db", metav1.GetOptions{})
				if err != nil {
					return err
				}
				if db.Spec.ClusterIP != corev1.ClusterIPNone {
					return itest.Errorf("headless Service not headless: %q", db.Spec.ClusterIP)
				}
				return nil
			})
		}
		// The tenant's own default/kubernetes Service (clusterIPs set by the tenant) syncs
		// with a super-allocated address.
		itest.Eventually(t, time.Minute, "tenant kubernetes Service", func(ctx context.Context) error {
			s, err := super.CoreV1().Services(conversion.SuperNamespace(t1.Name, uid1, "default")).Get(ctx, "kubernetes", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if s.Spec.ClusterIP == "10.0.0.1" || s.Spec.ClusterIP == "" {
				return itest.Errorf("clusterIP %q", s.Spec.ClusterIP)
			}
			return nil
		})
	})

	t.Run("upward: Pods run, bound to vNodes, with the super Pod's node and IP", func(t *testing.T) {
		for ns, owner := range map[string]*localcluster.ControlPlane{ns1: t1, ns2: t2} {
			itest.Eventually(t, time.Minute, "Pod Running in "+owner.Name, func(ctx context.Context) error {
				sp, err := super.CoreV1().Pods(ns).Get(ctx, "web-0", metav1.GetOptions{})
				if err != nil {
					return err
				}
				tp, err := owner.Client.CoreV1().Pods("shop").Get(ctx, "web-0", metav1.GetOptions{})
				if err != nil {
					return err
				}
				if tp.Status.Phase != corev1.PodRunning || tp.Spec.NodeName != sp.Spec.NodeName || tp.Status.PodIP == "" || tp.Status.PodIP != sp.Status.PodIP {
					return itest.Errorf("tenant %s %s %s, super %s %s %s", tp.Status.Phase, tp.Spec.NodeName, tp.Status.PodIP, sp.Status.Phase, sp.Spec.NodeName, sp.Status.PodIP)
				}
				if !podReady(tp) {
					return itest.Errorf("tenant Pod not Ready")
				}
				n, err := owner.Client.CoreV1().Nodes().Get(ctx, tp.Spec.NodeName, metav1.GetOptions{})
				if err != nil {
					return itest.Errorf("vNode: %v", err)
				}
				if n.Labels[pod.LabelVNode] != "true" {
					return itest.Errorf("vNode not labelled")
				}
				for _, v := range sp.Spec.Volumes {
					if v.Projected != nil {
						for _, s := range v.Projected.Sources {
							if s.ServiceAccountToken != nil {
								return itest.Errorf("super Pod mounts a service-account token volume %s", v.Name)
							}
						}
					}
				}
				return nil
			})
		}
	})

	t.Run("service-account tokens come from the tenant", func(t *testing.T) {
		testTenantTokens(t, super, t1, ns1, "shop", "web-0")
	})

	t.Run("downward-API fieldRefs keep the tenant's namespace and UID", func(t *testing.T) {
		testDownwardAPIIdentity(t, super, t2, ns2, "shop")
	})

	t.Run("Pods reach their tenant's apiserver and DNS", func(t *testing.T) {
		testTenantAPIAccess(t, super, t1, ns1, conversion.SuperNamespace(t1.Name, uid1, "kube-system"), "shop")
	})

	t.Run("preset spec.nodeName: honoured for a super Node, never run otherwise", func(t *testing.T) {
		web, err := t1.Client.CoreV1().Pods("shop").Get(ctx, "web-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pinned := webPod("pinned")
		pinned.Spec.NodeName = web.Spec.NodeName // one of tenant 1's vNodes
		itest.Created(t)(t1.Client.CoreV1().Pods("shop").Create(ctx, pinned, metav1.CreateOptions{}))
		nowhere := webPod("nowhere")
		nowhere.Spec.NodeName = "no-such-node"
		itest.Created(t)(t1.Client.CoreV1().Pods("shop").Create(ctx, nowhere, metav1.CreateOptions{}))
		itest.Eventually(t, time.Minute, "pinned Pod Running on its node", func(ctx context.Context) error {
			tp, err := t1.Client.CoreV1().Pods("shop").Get(ctx, "pinned", metav1.GetOptions{})
			if err != nil {
				return err
			}
			sp, err := super.CoreV1().Pods(ns1).Get(ctx, "pinned", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if sp.Spec.NodeName != pinned.Spec.NodeName || tp.Status.Phase != corev1.PodRunning || tp.Status.PodIP != sp.Status.PodIP {
				return itest.Errorf("super node %q, tenant phase %s IP %q vs %q", sp.Spec.NodeName, tp.Status.Phase, tp.Status.PodIP, sp.Status.PodIP)
			}
			_, err = t1.Client.CoreV1().Nodes().Get(ctx, pinned.Spec.NodeName, metav1.GetOptions{})
			return err
		})
		itest.WaitEvent(t, t1.Client, "shop", "nowhere", pod.ReasonNodeNotFound, "")
		if _, err := super.CoreV1().Pods(ns1).Get(ctx, "nowhere", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("a Pod preset to a missing node was synced: %v", err)
		}
		// A tenant admin forging a vNode for a super Node that hosts none of its Pods gains nothing.
		node := func(labels map[string]string) *corev1.Node {
			return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "reserved-node", Labels: labels}}
		}
		itest.Created(t)(super.CoreV1().Nodes().Create(ctx, node(nil), metav1.CreateOptions{}))
		t.Cleanup(func() {
			_ = super.CoreV1().Nodes().Delete(context.Background(), "reserved-node", metav1.DeleteOptions{})
		})
		itest.Created(t)(t1.Client.CoreV1().Nodes().Create(ctx, node(map[string]string{pod.LabelVNode: "true"}), metav1.CreateOptions{}))
		forged := webPod("forged")
		forged.Spec.NodeName = "reserved-node"
		itest.Created(t)(t1.Client.CoreV1().Pods("shop").Create(ctx, forged, metav1.CreateOptions{}))
		itest.WaitEvent(t, t1.Client, "shop", "forged", pod.ReasonNodeNotFound, "")
		if _, err := super.CoreV1().Pods(ns1).Get(ctx, "forged", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("a Pod preset to a forged vNode was bound in the super cluster: %v", err)
		}
		_ = t1.Client.CoreV1().Pods("shop").Delete(ctx, "forged", metav1.DeleteOptions{})
	})

	t.Run("vNodes carry no lifecycle taints, so DaemonSets get Pods", func(t *testing.T) {
		one := int32(1)
		labels := map[string]string{"app": "agent"}
		ds := &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "agent"},
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{TerminationGracePeriodSeconds: new(int64),
						Containers: []corev1.Container{{Name: "agent", Image: "busybox"}}},
				},
				RevisionHistoryLimit: &one,
			},
		}
		itest.Created(t)(t1.Client.AppsV1().DaemonSets("shop").Create(ctx, ds, metav1.CreateOptions{}))
		itest.Eventually(t, 2*time.Minute, "DaemonSet Pods ready on every vNode", func(ctx context.Context) error {
			nodes, err := t1.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, n := range nodes.Items {
				for _, taint := range n.Spec.Taints {
					if taint.Key == corev1.TaintNodeNotReady || taint.Key == corev1.TaintNodeUnreachable {
						return itest.Errorf("vNode %s has taint %s", n.Name, taint.Key)
					}
				}
			}
			d, err := t1.Client.AppsV1().DaemonSets("shop").Get(ctx, "agent", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if d.Status.DesiredNumberScheduled == 0 || d.Status.NumberReady != d.Status.DesiredNumberScheduled ||
				int(d.Status.DesiredNumberScheduled) != len(nodes.Items) {
				return itest.Errorf("desired %d ready %d vNodes %d", d.Status.DesiredNumberScheduled, d.Status.NumberReady, len(nodes.Items))
			}
			return nil
		})
	})

	t.Run("tenants cannot weaken super-cluster policy", func(t *testing.T) {
		// A tenant namespace asking for privileged Pod Security and an empty node selector.
		if _, err := t1.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name:        "sneaky",
			Labels:      map[string]string{"pod-security.kubernetes.io/enforce": "privileged", "team": "a"},
			Annotations: map[string]string{"scheduler.alpha.kubernetes.io/node-selector": ""},
		}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		sneaky := conversion.SuperNamespace(t1.Name, uid1, "sneaky")
		itest.Eventually(t, time.Minute, "super namespace with the syncer's policy", func(ctx context.Context) error {
			ns, err := super.CoreV1().Namespaces().Get(ctx, sneaky, metav1.GetOptions{})
			if err != nil {
				return err
			}
			// The tenant's labels are there under the syncer's keys only (team=a as
			// ns.tenancy.vcsyncer.io/team=a), never as keys the super cluster acts on.
			team, _ := conversion.SuperNamespaceLabelKey("team")
			if ns.Labels["pod-security.kubernetes.io/enforce"] != "baseline" || ns.Labels[team] != "a" || ns.Labels["team"] != "" {
				return itest.Errorf("labels %v", ns.Labels)
			}
			if _, ok := ns.Annotations["scheduler.alpha.kubernetes.io/node-selector"]; ok {
				return itest.Errorf("reserved annotation copied: %v", ns.Annotations)
			}
			return nil
		})
		// A super admin's stricter level is not reverted.
		ns, err := super.CoreV1().Namespaces().Get(ctx, sneaky, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ns.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
		if _, err := super.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		tns, err := t1.Client.CoreV1().Namespaces().Get(ctx, "sneaky", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tns.Labels["team"] = "b" // a tenant change triggers a reconcile of the namespace
		if _, err := t1.Client.CoreV1().Namespaces().Update(ctx, tns, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, time.Minute, "tenant label change synced, admin level kept", func(ctx context.Context) error {
			ns, err := super.CoreV1().Namespaces().Get(ctx, sneaky, metav1.GetOptions{})
			if err != nil {
				return err
			}
			team, _ := conversion.SuperNamespaceLabelKey("team")
			if ns.Labels[team] != "b" || ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
				return itest.Errorf("labels %v", ns.Labels)
			}
			return nil
		})
		// A privileged Pod is rejected by the super cluster's Pod Security admission and the
		// tenant hears about it.
		itest.MustCreateNS(t, t1.Client, "privileged")
		priv := true
		itest.Created(t)(t1.Client.CoreV1().Pods("privileged").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "root"},
			Spec: corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{Name: "c", Image: "busybox",
				SecurityContext: &corev1.SecurityContext{Privileged: &priv}}}},
		}, metav1.CreateOptions{}))
		itest.WaitEvent(t, t1.Client, "privileged", "root", "SuperClusterRejected", "PodSecurity")
		if _, err := super.CoreV1().Pods(conversion.SuperNamespace(t1.Name, uid1, "privileged")).Get(ctx, "root", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("privileged Pod reached the super cluster: %v", err)
		}
		// externalIPs are never copied (CVE-2020-8554).
		itest.Created(t)(t1.Client.CoreV1().Services("privileged").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "mitm"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"a": "b"}, Ports: []corev1.ServicePort{{Port: 80}},
				ExternalIPs: []string{"8.8.8.8"}},
		}, metav1.CreateOptions{}))
		itest.Eventually(t, time.Minute, "Service without externalIPs", func(ctx context.Context) error {
			s, err := super.CoreV1().Services(conversion.SuperNamespace(t1.Name, uid1, "privileged")).Get(ctx, "mitm", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(s.Spec.ExternalIPs) > 0 {
				return itest.Errorf("externalIPs copied: %v", s.Spec.ExternalIPs)
			}
			return nil
		})
		// Someone else's object at a mapped name: SyncConflict, never touched.
		squatNS := conversion.SuperNamespace(t1.Name, uid1, "privileged")
		if _, err := super.CoreV1().ConfigMaps(squatNS).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "squat"}, Data: map[string]string{"a": "super"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Created(t)(t1.Client.CoreV1().ConfigMaps("privileged").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "squat"}, Data: map[string]string{"a": "tenant"}}, metav1.CreateOptions{}))
		itest.WaitEvent(t, t1.Client, "privileged", "squat", "SyncConflict", "")
		if cm, err := super.CoreV1().ConfigMaps(squatNS).Get(ctx, "squat", metav1.GetOptions{}); err != nil || cm.Data["a"] != "super" {
			t.Fatalf("someone else's ConfigMap was touched: %v %v", err, cm)
		}
	})

	t.Run("updates flow down, extra super annotations are kept", func(t *testing.T) {
		cm, err := t1.Client.CoreV1().ConfigMaps("shop").Get(ctx, "cfg", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sc, err := super.CoreV1().ConfigMaps(ns1).Get(ctx, "cfg", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sc.Annotations["example.com/added-by-super-controller"] = "yes"
		if _, err := super.CoreV1().ConfigMaps(ns1).Update(ctx, sc, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		cm.Data["owner"] = "changed"
		if _, err := t1.Client.CoreV1().ConfigMaps("shop").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, time.Minute, "ConfigMap update", func(ctx context.Context) error {
			sc, err := super.CoreV1().ConfigMaps(ns1).Get(ctx, "cfg", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if sc.Data["owner"] != "changed" || sc.Annotations["example.com/added-by-super-controller"] != "yes" {
				return itest.Errorf("data %v annotations %v", sc.Data, sc.Annotations)
			}
			return nil
		})
		p, err := t1.Client.CoreV1().Pods("shop").Get(ctx, "web-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Labels["version"] = "v2"
		if _, err := t1.Client.CoreV1().Pods("shop").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, time.Minute, "Pod label update", func(ctx context.Context) error {
			sp, err := super.CoreV1().Pods(ns1).Get(ctx, "web-0", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if sp.Labels["version"] != "v2" {
				return itest.Errorf("labels %v", sp.Labels)
			}
			return nil
		})
	})

	t.Run("a scheduling gate the tenant removes leaves the super Pod, which is then scheduled", func(t *testing.T) {
		const name = "gated"
		gated := webPod(name)
		gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/hold"}}
		itest.Created(t)(t1.Client.CoreV1().Pods("shop").Create(ctx, gated, metav1.CreateOptions{}))
		t.Cleanup(func() {
			_ = t1.Client.CoreV1().Pods("shop").Delete(context.Background(), name, metav1.DeleteOptions{})
		})
		itest.Eventually(t, time.Minute, "super Pod created with the tenant's gate, not scheduled", func(ctx context.Context) error {
			sp, err := super.CoreV1().Pods(ns1).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(sp.Spec.SchedulingGates) != 1 || sp.Spec.SchedulingGates[0].Name != "example.com/hold" || sp.Spec.NodeName != "" {
				return itest.Errorf("gates %v, node %q", sp.Spec.SchedulingGates, sp.Spec.NodeName)
			}
			return nil
		})
		itest.Eventually(t, time.Minute, "tenant Pod's gate removed", func(ctx context.Context) error {
			tp, err := t1.Client.CoreV1().Pods("shop").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			tp.Spec.SchedulingGates = nil
			_, err = t1.Client.CoreV1().Pods("shop").Update(ctx, tp, metav1.UpdateOptions{})
			return err
		})
		itest.Eventually(t, time.Minute, "super Pod without the gate, scheduled, and the tenant Pod Running on its vNode", func(ctx context.Context) error {
			sp, err := super.CoreV1().Pods(ns1).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(sp.Spec.SchedulingGates) != 0 || sp.Spec.NodeName == "" {
				return itest.Errorf("super Pod gates %v, node %q", sp.Spec.SchedulingGates, sp.Spec.NodeName)
			}
			tp, err := t1.Client.CoreV1().Pods("shop").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if tp.Status.Phase != corev1.PodRunning || tp.Spec.NodeName != sp.Spec.NodeName {
				return itest.Errorf("tenant Pod %s on %q, super Pod on %q", tp.Status.Phase, tp.Spec.NodeName, sp.Spec.NodeName)
			}
			return nil
		})
	})

	t.Run("no fights: others' super labels, annotations and image rewrites kept; tenant removals flow down", func(t *testing.T) {
		testNoFights(t, super, t2, ns2, "shop", "web-0")
	})

	t.Run("a LoadBalancer Service with externalTrafficPolicy Local is written once", func(t *testing.T) {
		testServiceNoLoop(t, super, t1, ns1, "shop")
	})

	t.Run("updates keep the super cluster's finalizers", func(t *testing.T) {
		testKeepsFinalizers(t, super, t1, ns1, "shop")
	})

	t.Run("a super copy deleted by someone else is recreated; the tenant object stays", func(t *testing.T) {
		if err := super.CoreV1().Secrets(ns2).Delete(ctx, "creds", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, time.Minute, "Secret recreated", func(ctx context.Context) error {
			_, err := super.CoreV1().Secrets(ns2).Get(ctx, "creds", metav1.GetOptions{})
			return err
		})
		if _, err := t2.Client.CoreV1().Secrets("shop").Get(ctx, "creds", metav1.GetOptions{}); err != nil {
			t.Fatalf("tenant Secret: %v", err)
		}
	})

	t.Run("a running super Pod that disappears fails the tenant Pod", func(t *testing.T) {
		if err := super.CoreV1().Pods(ns2).Delete(ctx, "web-0", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, time.Minute, "tenant Pod Failed", func(ctx context.Context) error {
			tp, err := t2.Client.CoreV1().Pods("shop").Get(ctx, "web-0", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if tp.Status.Phase != corev1.PodFailed || tp.Status.Reason != pod.ReasonSuperPodLost {
				return itest.Errorf("phase %s reason %s", tp.Status.Phase, tp.Status.Reason)
			}
			return nil
		})
		itest.Consistently(t, 2*time.Second, "no replacement super Pod for a lost bound Pod", func(ctx context.Context) error {
			if _, err := super.CoreV1().Pods(ns2).Get(ctx, "web-0", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("super Pod recreated for a bound tenant Pod: %v", err)
			}
			return nil
		})
	})

	t.Run("objects the syncer does not own are never touched", func(t *testing.T) {
		// Someone else already uses the super namespace that tenant 1's namespace "taken" maps to.
		foreign := conversion.SuperNamespace(t1.Name, uid1, "taken")
		if _, err := super.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: foreign, Labels: map[string]string{"owner": "someone-else"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.MustCreateNS(t, t1.Client, "taken")
		itest.Created(t)(t1.Client.CoreV1().ConfigMaps("taken").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}))
		itest.Consistently(t, 3*time.Second, "foreign namespace untouched", func(ctx context.Context) error {
			ns, err := super.CoreV1().Namespaces().Get(ctx, foreign, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if _, ok := ns.Labels[conversion.LabelManagedBy]; ok || ns.Labels["owner"] != "someone-else" {
				return itest.Errorf("foreign namespace modified: %v", ns.Labels)
			}
			if _, err := super.CoreV1().ConfigMaps(foreign).Get(ctx, "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("syncer wrote into a foreign namespace: %v", err)
			}
			return nil
		})
		// Deleting the tenant namespace must not delete the foreign super namespace.
		if err := t1.Client.CoreV1().Namespaces().Delete(ctx, "taken", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Consistently(t, 2*time.Second, "foreign namespace not deleted", func(ctx context.Context) error {
			ns, err := super.CoreV1().Namespaces().Get(ctx, foreign, metav1.GetOptions{})
			if err != nil || !ns.DeletionTimestamp.IsZero() {
				return itest.Errorf("foreign namespace deleted: %v", err)
			}
			return nil
		})
	})

	t.Run("bad kubeconfigs give False conditions and never stop other tenants", func(t *testing.T) {
		if err := app.AddTenant(ctx, c, itest.KubeconfigNS, "garbage", []byte("not: [a kubeconfig"), 1); err != nil {
			t.Fatal(err)
		}
		unreachable := string(itest.Unreachable(t, t3.Kubeconfig))
		if unreachable == string(t3.Kubeconfig) {
			t.Fatal("could not rewrite the server address of the kubeconfig")
		}
		if err := app.AddTenant(ctx, c, itest.KubeconfigNS, "unreachable", []byte(unreachable), 1); err != nil {
			t.Fatal(err)
		}
		waitConditionFalse(t, c, "garbage", tenancyv1alpha1.ConditionKubeconfigValid, "InvalidKubeconfig")
		waitConditionFalse(t, c, "unreachable", tenancyv1alpha1.ConditionConnected, "Unreachable")
		// Other tenants keep syncing meanwhile.
		itest.Created(t)(t1.Client.CoreV1().ConfigMaps("shop").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "while-others-are-broken"}}, metav1.CreateOptions{}))
		itest.Eventually(t, 30*time.Second, "tenant 1 still syncs", func(ctx context.Context) error {
			_, err := super.CoreV1().ConfigMaps(ns1).Get(ctx, "while-others-are-broken", metav1.GetOptions{})
			return err
		})
		if g := getTenant(t, c, "garbage"); g.Status.Phase != tenancyv1alpha1.TenantPending {
			t.Errorf("garbage phase = %s", g.Status.Phase)
		}
	})

	t.Run("a second Tenant for the same control plane is refused", func(t *testing.T) {
		if err := app.AddTenant(ctx, c, itest.KubeconfigNS, "dup", t2.Kubeconfig, 1); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, time.Minute, "dup refused", func(ctx context.Context) error {
			tn := &tenancyv1alpha1.Tenant{}
			if err := c.Get(ctx, client.ObjectKey{Name: "dup"}, tn); err != nil {
				return err
			}
			cond := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionConnected)
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != "DuplicateControlPlane" || !strings.Contains(cond.Message, "already syncs") {
				return itest.Errorf("condition %+v", cond)
			}
			return nil
		})
		if l, err := super.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: conversion.LabelTenantUID + "=" + itest.TenantUID(t, c, "dup")}); err != nil || len(l.Items) > 0 {
			t.Fatalf("duplicate tenant synced namespaces: %v %d", err, len(l.Items))
		}
		if err := c.Delete(ctx, &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "dup"}}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a Tenant whose Secret appears later, rotated to tenant 3, syncs everything", func(t *testing.T) {
		late := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "late"}, Spec: tenancyv1alpha1.TenantSpec{
			KubeconfigSecretRef: tenancyv1alpha1.SecretKeyRef{Namespace: itest.KubeconfigNS, Name: "late-kubeconfig"}}}
		if err := c.Create(ctx, late); err != nil {
			t.Fatal(err)
		}
		waitConditionFalse(t, c, "late", tenancyv1alpha1.ConditionKubeconfigValid, "SecretNotFound")
		// First a kubeconfig that is valid but points nowhere, then rotated to tenant 3's.
		unreachable := string(itest.Unreachable(t, t3.Kubeconfig))
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: itest.KubeconfigNS, Name: "late-kubeconfig"},
			Data: map[string][]byte{"kubeconfig": []byte(unreachable)}}
		if err := c.Create(ctx, sec); err != nil {
			t.Fatal(err)
		}
		waitConditionFalse(t, c, "late", tenancyv1alpha1.ConditionConnected, "Unreachable")
		sec.Data["kubeconfig"] = t3.Kubeconfig
		if err := c.Update(ctx, sec); err != nil {
			t.Fatal(err)
		}
		itest.WaitRunning(t, c, "late")
		uid := itest.TenantUID(t, c, "late")
		bulk := conversion.SuperNamespace("late", uid, "bulk")
		itest.Eventually(t, 2*time.Minute, "all pre-existing objects synced", func(ctx context.Context) error {
			l, err := super.CoreV1().ConfigMaps(bulk).List(ctx, metav1.ListOptions{LabelSelector: conversion.LabelManagedBy})
			if err != nil {
				return err
			}
			if len(l.Items) != preexisting {
				return itest.Errorf("%d of %d ConfigMaps synced", len(l.Items), preexisting)
			}
			return nil
		})
	})

	t.Run("deleting tenant objects deletes their super copies", func(t *testing.T) {
		if err := t1.Client.CoreV1().Pods("shop").Delete(ctx, "web-0", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, time.Minute, "tenant and super Pod gone", func(ctx context.Context) error {
			if _, err := t1.Client.CoreV1().Pods("shop").Get(ctx, "web-0", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("tenant Pod still there: %v", err)
			}
			if _, err := super.CoreV1().Pods(ns1).Get(ctx, "web-0", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("super Pod still there: %v", err)
			}
			return nil
		})
		if err := t1.Client.CoreV1().Namespaces().Delete(ctx, "shop", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, 2*time.Minute, "super namespace gone", func(ctx context.Context) error {
			if _, err := super.CoreV1().Namespaces().Get(ctx, ns1, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("super namespace %s still there: %v", ns1, err)
			}
			return nil
		})
		// Tenant 2's namespace of the same name is untouched.
		if _, err := super.CoreV1().ConfigMaps(ns2).Get(ctx, "cfg", metav1.GetOptions{}); err != nil {
			t.Fatalf("tenant 2's objects affected: %v", err)
		}
	})

	t.Run("removing a Tenant stops it and deletes its super namespaces", func(t *testing.T) {
		uid := itest.TenantUID(t, c, "late")
		if err := c.Delete(ctx, &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "late"}}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, 2*time.Minute, "Tenant and its namespaces gone", func(ctx context.Context) error {
			l, err := super.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: conversion.LabelTenantUID + "=" + uid})
			if err != nil {
				return err
			}
			if len(l.Items) > 0 {
				return itest.Errorf("%d super namespaces left", len(l.Items))
			}
			err = c.Get(ctx, client.ObjectKey{Name: "late"}, &tenancyv1alpha1.Tenant{})
			if !apierrors.IsNotFound(err) {
				return itest.Errorf("Tenant still there: %v", err)
			}
			return nil
		})
		// A new object in tenant 3 is no longer synced.
		itest.Created(t)(t3.Client.CoreV1().ConfigMaps("bulk").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "after-removal"}}, metav1.CreateOptions{}))
		itest.Consistently(t, 2*time.Second, "removed tenant not synced", func(ctx context.Context) error {
			l, err := super.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: conversion.LabelTenantUID + "=" + uid})
			if err != nil {
				return err
			}
			if len(l.Items) > 0 {
				return itest.Errorf("removed tenant synced again")
			}
			return nil
		})
	})

	// Each downward reconcile of a Pod decodes the tenant and super Pods (and, on a machine
	// the burst saturates, waits for a CPU); those that have nothing to do are the syncer's own
	// writes coming back. A new Pod needs one, to create its super Pod; neither the Add of that
	// super Pod (the create coming back) nor the tenant Pod's binding (the upward reconciler's
	// copy of the super scheduler's) queues it downward again.
	t.Run("the syncer's own writes of a new Pod do not queue it downward again", func(t *testing.T) {
		itest.MustCreateNS(t, t2.Client, "echo")
		itest.Eventually(t, time.Minute, "the super copy of echo/default", func(ctx context.Context) error {
			_, err := super.CoreV1().ServiceAccounts(conversion.SuperNamespace(t2.Name, uid2, "echo")).Get(ctx, "default", metav1.GetOptions{})
			return err
		})
		before := settledDownwardPodReconciles(t, t2.Name)
		taken := metrics.TokenPrefetches(t2.Name, "taken")
		itest.Created(t)(t2.Client.CoreV1().Pods("echo").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "solo"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{}))
		itest.Eventually(t, time.Minute, "echo/solo Running in the tenant", func(ctx context.Context) error {
			p, err := t2.Client.CoreV1().Pods("echo").Get(ctx, "solo", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Status.Phase != corev1.PodRunning {
				return itest.Errorf("phase %q", p.Status.Phase)
			}
			return nil
		})
		if n := settledDownwardPodReconciles(t, t2.Name) - before; n != 1 {
			t.Errorf("%v downward Pod reconciles of %s from the Pod's creation to Running, want 1 (its create)", n, t2.Name)
		}
		// Its token was requested when the tenant informer delivered it, not by its worker.
		if d := metrics.TokenPrefetches(t2.Name, "taken") - taken; d != 1 {
			t.Errorf("the reconcile took %v prefetched token rounds for the new Pod, want 1", d)
		}
		sp, err := super.CoreV1().Pods(conversion.SuperNamespace(t2.Name, uid2, "echo")).Get(ctx, "solo", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sp.Annotations[pod.AnnotationTokenPrefix+"0"] == "" {
			t.Errorf("super Pod without its tenant token (annotation %s0)", pod.AnnotationTokenPrefix)
		}
		// A change of the tenant's after the binding still goes down.
		if _, err := t2.Client.CoreV1().Pods("echo").Patch(ctx, "solo", types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":"x"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, time.Minute, "the label on the super Pod", func(ctx context.Context) error {
			p, err := super.CoreV1().Pods(conversion.SuperNamespace(t2.Name, uid2, "echo")).Get(ctx, "solo", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Labels["tier"] != "x" {
				return itest.Errorf("labels %v", p.Labels)
			}
			return nil
		})
	})

	t.Run("per-tenant queue metrics, deleted with the tenant", func(t *testing.T) {
		families, err := ctrlmetrics.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]map[string]bool{} // metric -> tenants
		for _, f := range families {
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "tenant" {
						if seen[f.GetName()] == nil {
							seen[f.GetName()] = map[string]bool{}
						}
						seen[f.GetName()][l.GetValue()] = true
					}
				}
			}
		}
		for _, name := range []string{"vcsyncer_queue_adds_total", "vcsyncer_queue_wait_duration_seconds", "vcsyncer_queue_depth", "vcsyncer_queue_oldest_item_age_seconds"} {
			if !seen[name][t1.Name] || !seen[name][t2.Name] {
				t.Errorf("%s has no series for %s and %s: %v", name, t1.Name, t2.Name, seen[name])
			}
			if seen[name]["late"] {
				t.Errorf("%s still has series of the removed tenant", name)
			}
		}
	})
}

func TestTenantCRDValidation(t *testing.T) {
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 1}, 0)
	ctx := context.Background()
	// Several replicas installing the CRD at once must all succeed (update conflicts are retried).
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- app.InstallCRD(ctx, env.Super.RESTConfig) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent InstallCRD: %v", err)
		}
	}
	c, err := client.New(env.Super.RESTConfig, client.Options{Scheme: app.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ref := tenancyv1alpha1.SecretKeyRef{Namespace: itest.KubeconfigNS, Name: "k"}
	cases := map[string]struct {
		tenant  tenancyv1alpha1.Tenant
		wantErr bool
	}{
		"valid with defaults":      {tenant: tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "ok"}, Spec: tenancyv1alpha1.TenantSpec{KubeconfigSecretRef: ref}}},
		"name too long":            {tenant: tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("a", 41)}, Spec: tenancyv1alpha1.TenantSpec{KubeconfigSecretRef: ref}}, wantErr: true},
		"name with dot":            {tenant: tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "a.b"}, Spec: tenancyv1alpha1.TenantSpec{KubeconfigSecretRef: ref}}, wantErr: true},
		"weight too high":          {tenant: tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "heavy"}, Spec: tenancyv1alpha1.TenantSpec{KubeconfigSecretRef: ref, Weight: 5000}}, wantErr: true},
		"missing secret name":      {tenant: tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "noref"}, Spec: tenancyv1alpha1.TenantSpec{KubeconfigSecretRef: tenancyv1alpha1.SecretKeyRef{Namespace: itest.KubeconfigNS}}}, wantErr: true},
		"service ranges":           {tenant: tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "ranges"}, Spec: tenancyv1alpha1.TenantSpec{KubeconfigSecretRef: ref, ServiceCIDRs: []string{"10.96.16.0/20", "fd00:10:96::/112"}}}},
		"service range not a CIDR": {tenant: tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "badrange"}, Spec: tenancyv1alpha1.TenantSpec{KubeconfigSecretRef: ref, ServiceCIDRs: []string{"10.96.16.1"}}}, wantErr: true},
		"three service ranges":     {tenant: tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "threeranges"}, Spec: tenancyv1alpha1.TenantSpec{KubeconfigSecretRef: ref, ServiceCIDRs: []string{"10.96.1.0/24", "10.96.2.0/24", "10.96.3.0/24"}}}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tn := tc.tenant.DeepCopy()
			err := c.Create(ctx, tn)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Create error = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && (tn.Spec.Weight != 1 || tn.Spec.KubeconfigSecretRef.Key != "kubeconfig") {
				t.Errorf("defaults not applied: weight %d key %q", tn.Spec.Weight, tn.Spec.KubeconfigSecretRef.Key)
			}
		})
	}
}

func webPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			ServiceAccountName: "builder",
			Containers: []corev1.Container{{
				Name: "web", Image: "nginx:1.27",
				EnvFrom:      []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
				VolumeMounts: []corev1.VolumeMount{{Name: "creds", MountPath: "/creds"}},
			}},
			Volumes: []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}}},
		},
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func getTenant(t *testing.T, c client.Client, name string) *tenancyv1alpha1.Tenant {
	t.Helper()
	tn := &tenancyv1alpha1.Tenant{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, tn); err != nil {
		t.Fatal(err)
	}
	return tn
}

// waitConditionFalse waits until Tenant name has condition typ False with reason.
func waitConditionFalse(t *testing.T, c client.Client, name, typ, reason string) {
	t.Helper()
	const status = metav1.ConditionFalse
	itest.Eventually(t, time.Minute, fmt.Sprintf("Tenant %s %s=%s (%s)", name, typ, status, reason), func(ctx context.Context) error {
		tn := &tenancyv1alpha1.Tenant{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, tn); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(tn.Status.Conditions, typ)
		if cond == nil || cond.Status != status || cond.Reason != reason {
			return itest.Errorf("condition %+v", cond)
		}
		return nil
	})
}

// settledDownwardPodReconciles waits until the downward Pod reconciles of tenant have not
// changed for 3 s (at most a minute) and returns their number.
func settledDownwardPodReconciles(t *testing.T, tenant string) float64 {
	t.Helper()
	last, since := downwardPodReconciles(t, tenant), time.Now()
	for deadline := time.Now().Add(time.Minute); time.Since(since) < 3*time.Second; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the downward Pod reconciles of %s did not settle within a minute", tenant)
		}
		if n := downwardPodReconciles(t, tenant); n != last {
			last, since = n, time.Now()
		}
	}
	return last
}

// downwardPodReconciles returns the downward Pod reconciles of tenant the in-process syncer has
// run (vcsyncer_sync_duration_seconds_count, both results).
func downwardPodReconciles(t *testing.T, tenant string) float64 {
	t.Helper()
	return itest.RegistryValue(t, "vcsyncer_sync_duration_seconds", map[string]string{"tenant": tenant, "kind": "Pod", "direction": "downward"})
}
