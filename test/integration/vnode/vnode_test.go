package vnode_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/vnode"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

const (
	// nodeMonitorGracePeriod is kube-controller-manager v1.37's default
	// --node-monitor-grace-period, which the tenants run with.
	nodeMonitorGracePeriod = 50 * time.Second
	gcGrace                = 8 * time.Second
)

func TestVirtualNodes(t *testing.T) {
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 2}, 1)
	super, tc := env.Super.Client, env.Tenants[0]
	tenantCS := tc.Client
	ctx := context.Background()

	// A third super Node with a 63-character name (the longest valid label value).
	long := strings.Repeat("l", 55) + "-node-63"
	if len(long) != 63 {
		t.Fatalf("name has %d characters", len(long))
	}
	if _, err := super.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        long,
		Annotations: map[string]string{localcluster.FakeNodeAnnotation: "fake"},
		Labels:      map[string]string{"type": "kwok", corev1.LabelHostname: long, corev1.LabelOSStable: "linux"},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	c := itest.StartSyncer(t, env.Super.RESTConfig, func(o *options.Options) { o.VNodeGCGrace = gcGrace })
	// The test pins Pods to super Nodes by name (kubernetes.io/hostname): the tenant's node pool
	// must hold them, here every kwok Node.
	itest.DefaultPolicy(t, c, tenancyv1alpha1.TenantPolicySpec{Pods: &tenancyv1alpha1.PodPolicy{
		NodeSelector: map[string]string{"type": "kwok"}}})
	if err := app.AddTenant(ctx, c, "vc-syncer-system", tc.Name, tc.Kubeconfig, 1); err != nil {
		t.Fatal(err)
	}
	itest.WaitRunning(t, c, tc.Name)

	// A control Node in the tenant that nothing heartbeats: the tenant's node-lifecycle
	// controller must mark it Unknown after the grace period. It shows that the controller runs
	// with that grace period, so vNodes that stay Ready longer owe it to their heartbeats.
	control := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "control-without-heartbeats"}}
	if _, err := tenantCS.CoreV1().Nodes().Create(ctx, control, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The tenant's controllers (ttl, node-lifecycle) write new Nodes too: retry on conflict.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := tenantCS.CoreV1().Nodes().Get(ctx, control.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}
		_, err = tenantCS.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}

	node0, node1 := localcluster.FakeNodeName(0), localcluster.FakeNodeName(1)
	itest.MustCreateNS(t, tenantCS, "app")
	pods := map[string]string{"on-0": node0, "on-1": node1, "on-long": long}
	for name, node := range pods {
		if _, err := tenantCS.CoreV1().Pods("app").Create(ctx, pinnedPod(name, node), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	itest.Eventually(t, 2*time.Minute, "tenant Pods Running and Ready on their vNodes", func(ctx context.Context) error {
		for name, node := range pods {
			p, err := tenantCS.CoreV1().Pods("app").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Spec.NodeName != node || p.Status.Phase != corev1.PodRunning || !itest.PodReady(p) {
				return itest.Errorf("Pod %s: node %q phase %s ready %v", name, p.Spec.NodeName, p.Status.Phase, itest.PodReady(p))
			}
		}
		return nil
	})

	t.Run("vNodes mirror their super Nodes and have Leases", func(t *testing.T) {
		for _, node := range []string{node0, node1, long} {
			sn, err := super.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			itest.Eventually(t, 30*time.Second, "vNode "+node, func(ctx context.Context) error {
				vn, err := tenantCS.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if !vnode.IsVNode(vn) || vn.Labels[corev1.LabelHostname] != node || vn.Labels["type"] != "kwok" {
					return itest.Errorf("labels %v", vn.Labels)
				}
				if nodeCondition(vn, corev1.NodeReady) != corev1.ConditionTrue || hasTaint(vn, corev1.TaintNodeNotReady) {
					return itest.Errorf("not Ready or tainted: %v %v", vn.Status.Conditions, vn.Spec.Taints)
				}
				if !vn.Status.Capacity.Cpu().Equal(*sn.Status.Capacity.Cpu()) || len(vn.Status.Addresses) != len(sn.Status.Addresses) ||
					vn.Status.NodeInfo.KubeletVersion != sn.Status.NodeInfo.KubeletVersion {
					return itest.Errorf("status not mirrored: capacity %v addresses %v", vn.Status.Capacity, vn.Status.Addresses)
				}
				l, err := tenantCS.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node, metav1.GetOptions{})
				if err != nil {
					return itest.Errorf("Lease: %v", err)
				}
				if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != node || l.Spec.LeaseDurationSeconds == nil ||
					*l.Spec.LeaseDurationSeconds != 40 || len(l.OwnerReferences) != 1 || l.OwnerReferences[0].UID != vn.UID {
					return itest.Errorf("Lease %+v owners %+v", l.Spec, l.OwnerReferences)
				}
				return nil
			})
		}
	})

	t.Run("vcsyncer_vnodes counts the tenant's vNodes", func(t *testing.T) {
		itest.Eventually(t, 10*time.Second, "vcsyncer_vnodes = 3", func(context.Context) error {
			mfs, err := ctrlmetrics.Registry.Gather()
			if err != nil {
				return err
			}
			for _, mf := range mfs {
				if mf.GetName() != "vcsyncer_vnodes" {
					continue
				}
				for _, m := range mf.GetMetric() {
					for _, lp := range m.GetLabel() {
						if lp.GetName() == "tenant" && lp.GetValue() == tc.Name {
							if v := m.GetGauge().GetValue(); v != 3 {
								return itest.Errorf("value %v", v)
							}
							return nil
						}
					}
				}
			}
			return itest.Errorf("no series for tenant %s", tc.Name)
		})
	})

	t.Run("Leases are renewed about every 20s", func(t *testing.T) {
		l, err := tenantCS.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node0, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		first := l.Spec.RenewTime.Time
		itest.Eventually(t, 35*time.Second, "Lease renewed", func(ctx context.Context) error {
			l, err := tenantCS.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node0, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if d := l.Spec.RenewTime.Sub(first); d < 15*time.Second || d > 25*time.Second {
				return itest.Errorf("renewed %s after the previous renewal", d)
			}
			return nil
		})
	})

	t.Run("node-lifecycle keeps vNodes and their Pods Ready past the grace period", func(t *testing.T) {
		vn, err := tenantCS.CoreV1().Nodes().Get(ctx, node0, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		born := vn.CreationTimestamp.Time
		// A new Node carries node.kubernetes.io/not-ready (NodeTaint admission) until the
		// node-lifecycle controller sees it Ready.
		itest.Eventually(t, 30*time.Second, "new vNodes untainted", func(ctx context.Context) error {
			for _, node := range pods {
				vn, err := tenantCS.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if hasTaint(vn, corev1.TaintNodeNotReady) {
					return itest.Errorf("vNode %s taints %v", node, vn.Spec.Taints)
				}
			}
			return nil
		})
		controlUnknown := false
		deadline := time.Now().Add(3 * time.Minute)
		for {
			if time.Now().After(deadline) {
				t.Fatalf("control Node never went Unknown (is the tenant's node-lifecycle controller running?)")
			}
			cn, err := tenantCS.CoreV1().Nodes().Get(ctx, control.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if nodeCondition(cn, corev1.NodeReady) == corev1.ConditionUnknown {
				controlUnknown = true
			}
			for name, node := range pods {
				vn, err := tenantCS.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if nodeCondition(vn, corev1.NodeReady) != corev1.ConditionTrue || hasTaint(vn, corev1.TaintNodeUnreachable) || hasTaint(vn, corev1.TaintNodeNotReady) {
					t.Fatalf("vNode %s lost health after %s: %+v taints %v", node, time.Since(born).Round(time.Second), vn.Status.Conditions, vn.Spec.Taints)
				}
				p, err := tenantCS.CoreV1().Pods("app").Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if !itest.PodReady(p) || p.Status.Phase != corev1.PodRunning {
					t.Fatalf("Pod %s not Ready/Running after %s: %s", name, time.Since(born).Round(time.Second), p.Status.Phase)
				}
			}
			if controlUnknown && time.Since(born) > nodeMonitorGracePeriod+15*time.Second {
				t.Logf("control Node Unknown; vNodes Ready %s after creation", time.Since(born).Round(time.Second))
				break
			}
			time.Sleep(time.Second)
		}
		evs, err := tenantCS.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "reason=NodeNotReady"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs.Items {
			if _, ours := pods[e.InvolvedObject.Name]; ours || e.InvolvedObject.Name == node0 || e.InvolvedObject.Name == node1 || e.InvolvedObject.Name == long {
				t.Errorf("NodeNotReady Event for %s: %s", e.InvolvedObject.Name, e.Message)
			}
		}
	})

	t.Run("no vNode writes while nothing changes, Leases still renewed", func(t *testing.T) {
		versions := func() (nodes, leases map[string]string) {
			nodes, leases = map[string]string{}, map[string]string{}
			for _, node := range pods {
				n, err := tenantCS.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				l, err := tenantCS.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				nodes[node], leases[node] = n.ResourceVersion, l.ResourceVersion
			}
			return nodes, leases
		}
		nb, lb := versions()
		time.Sleep(22 * time.Second)
		na, la := versions()
		for node := range nb {
			if na[node] != nb[node] {
				t.Errorf("vNode %s written during a quiet interval: resourceVersion %s -> %s", node, nb[node], na[node])
			}
			if la[node] == lb[node] {
				t.Errorf("Lease of %s not renewed in 22s", node)
			}
		}
	})

	t.Run("a vNode deleted in the tenant while Pods are bound to it comes back", func(t *testing.T) {
		old, err := tenantCS.CoreV1().Nodes().Get(ctx, node0, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tenantCS.CoreV1().Nodes().Delete(ctx, node0, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, 30*time.Second, "vNode re-created with a Lease owned by it", func(ctx context.Context) error {
			vn, err := tenantCS.CoreV1().Nodes().Get(ctx, node0, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if vn.UID == old.UID {
				return itest.Errorf("not deleted yet")
			}
			if nodeCondition(vn, corev1.NodeReady) != corev1.ConditionTrue {
				return itest.Errorf("conditions %v", vn.Status.Conditions)
			}
			l, err := tenantCS.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node0, metav1.GetOptions{})
			if err != nil {
				return itest.Errorf("Lease: %v", err)
			}
			if len(l.OwnerReferences) != 1 || l.OwnerReferences[0].UID != vn.UID {
				return itest.Errorf("Lease owners %+v", l.OwnerReferences)
			}
			return nil
		})
	})

	patchSuper := func(t *testing.T, node string, patch any, status bool) {
		t.Helper()
		data, err := json.Marshal(patch)
		if err != nil {
			t.Fatal(err)
		}
		var sub []string
		if status {
			sub = []string{"status"}
		}
		if _, err := super.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, data, metav1.PatchOptions{}, sub...); err != nil {
			t.Fatal(err)
		}
	}
	waitVNode := func(t *testing.T, what string, check func(vn *corev1.Node) error) {
		t.Helper()
		itest.Eventually(t, 20*time.Second, what, func(ctx context.Context) error {
			vn, err := tenantCS.CoreV1().Nodes().Get(ctx, node0, metav1.GetOptions{})
			if err != nil {
				return err
			}
			return check(vn)
		})
	}

	t.Run("cordoning a super Node cordons the vNode", func(t *testing.T) {
		patchSuper(t, node0, map[string]any{"spec": map[string]any{"unschedulable": true}}, false)
		waitVNode(t, "vNode unschedulable and tainted by the tenant's node-lifecycle controller", func(vn *corev1.Node) error {
			if !vn.Spec.Unschedulable || !hasTaint(vn, corev1.TaintNodeUnschedulable) {
				return itest.Errorf("unschedulable %v taints %v", vn.Spec.Unschedulable, vn.Spec.Taints)
			}
			return nil
		})
		patchSuper(t, node0, map[string]any{"spec": map[string]any{"unschedulable": nil}}, false)
		waitVNode(t, "vNode uncordoned", func(vn *corev1.Node) error {
			if vn.Spec.Unschedulable || hasTaint(vn, corev1.TaintNodeUnschedulable) {
				return itest.Errorf("unschedulable %v taints %v", vn.Spec.Unschedulable, vn.Spec.Taints)
			}
			return nil
		})
	})

	t.Run("super Node taints and conditions propagate", func(t *testing.T) {
		const key = "example.com/maintenance"
		patchSuper(t, node0, map[string]any{"spec": map[string]any{"taints": []corev1.Taint{{Key: key, Value: "yes", Effect: corev1.TaintEffectNoSchedule}}}}, false)
		waitVNode(t, "taint copied", func(vn *corev1.Node) error {
			if !hasTaint(vn, key) {
				return itest.Errorf("taints %v", vn.Spec.Taints)
			}
			return nil
		})
		patchSuper(t, node0, map[string]any{"spec": map[string]any{"taints": []corev1.Taint{}}}, false)
		waitVNode(t, "taint removed", func(vn *corev1.Node) error {
			if hasTaint(vn, key) {
				return itest.Errorf("taints %v", vn.Spec.Taints)
			}
			return nil
		})

		setMemoryPressure := func(s corev1.ConditionStatus) {
			now := metav1.Now()
			patchSuper(t, node0, map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{{
				Type: corev1.NodeMemoryPressure, Status: s, Reason: "Test", Message: "set by the test",
				LastHeartbeatTime: now, LastTransitionTime: now}}}}, true)
		}
		setMemoryPressure(corev1.ConditionTrue)
		waitVNode(t, "MemoryPressure True on the vNode, tainted by the tenant's node-lifecycle controller", func(vn *corev1.Node) error {
			if nodeCondition(vn, corev1.NodeMemoryPressure) != corev1.ConditionTrue || !hasTaint(vn, corev1.TaintNodeMemoryPressure) {
				return itest.Errorf("conditions %v taints %v", vn.Status.Conditions, vn.Spec.Taints)
			}
			if nodeCondition(vn, corev1.NodeReady) != corev1.ConditionTrue {
				return itest.Errorf("Ready lost: %v", vn.Status.Conditions)
			}
			return nil
		})
		setMemoryPressure(corev1.ConditionFalse)
		waitVNode(t, "MemoryPressure False again", func(vn *corev1.Node) error {
			if nodeCondition(vn, corev1.NodeMemoryPressure) != corev1.ConditionFalse || hasTaint(vn, corev1.TaintNodeMemoryPressure) {
				return itest.Errorf("conditions %v taints %v", vn.Status.Conditions, vn.Spec.Taints)
			}
			return nil
		})
	})

	t.Run("a vNode is removed after its last Pod left, after the grace period", func(t *testing.T) {
		if err := tenantCS.CoreV1().Pods("app").Delete(ctx, "on-1", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, time.Minute, "tenant Pod gone", func(ctx context.Context) error {
			if _, err := tenantCS.CoreV1().Pods("app").Get(ctx, "on-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("still there: %v", err)
			}
			return nil
		})
		gone := time.Now()
		time.Sleep(gcGrace / 4)
		if _, err := tenantCS.CoreV1().Nodes().Get(ctx, node1, metav1.GetOptions{}); err != nil {
			t.Fatalf("vNode removed before the grace period: %v", err)
		}
		itest.Eventually(t, gcGrace+20*time.Second, "vNode and Lease removed", func(ctx context.Context) error {
			if _, err := tenantCS.CoreV1().Nodes().Get(ctx, node1, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("vNode: %v", err)
			}
			if _, err := tenantCS.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node1, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("Lease: %v", err)
			}
			return nil
		})
		if d := time.Since(gone); d < gcGrace {
			t.Errorf("vNode removed %s after its last Pod left, before the grace period %s", d, gcGrace)
		}
		// The vNode with Pods stays.
		if _, err := tenantCS.CoreV1().Nodes().Get(ctx, node0, metav1.GetOptions{}); err != nil {
			t.Errorf("vNode %s with a Pod removed: %v", node0, err)
		}
		// A Pod whose preset spec.nodeName names that super Node does not bring its vNode back:
		// a tenant cannot make the syncer expose a super Node of its choosing.
		preset := pinnedPod("preset", node1)
		preset.Spec.NodeName = node1
		if _, err := tenantCS.CoreV1().Pods("app").Create(ctx, preset, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(2 * gcGrace); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
			if _, err := tenantCS.CoreV1().Nodes().Get(ctx, node1, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("vNode %s created for a Pod with a preset spec.nodeName: %v", node1, err)
			}
		}
		if err := tenantCS.CoreV1().Pods("app").Delete(ctx, "preset", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a deleted super Node makes its vNode and Pods go", func(t *testing.T) {
		if err := super.CoreV1().Nodes().Delete(ctx, long, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, 20*time.Second, "vNode and Lease removed", func(ctx context.Context) error {
			if _, err := tenantCS.CoreV1().Nodes().Get(ctx, long, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("vNode: %v", err)
			}
			if _, err := tenantCS.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, long, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("Lease: %v", err)
			}
			return nil
		})
		itest.Eventually(t, 3*time.Minute, "tenant Pod on the lost Node deleted or Failed", func(ctx context.Context) error {
			p, err := tenantCS.CoreV1().Pods("app").Get(ctx, "on-long", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				t.Logf("tenant Pod deleted")
				return nil
			}
			if err != nil {
				return err
			}
			if p.Status.Phase == corev1.PodFailed {
				t.Logf("tenant Pod Failed: reason %q", p.Status.Reason)
				return nil
			}
			return itest.Errorf("phase %s", p.Status.Phase)
		})
		if _, err := tenantCS.CoreV1().Nodes().Get(ctx, long, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("vNode of the deleted super Node came back: %v", err)
		}
	})
}
