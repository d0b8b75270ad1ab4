package syncer

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resources"
)

// TestPodEchoSkipsOnlyTheCreatedPod: the Add of a super Pod the reconciler announced is not
// queued downward only while the tenant Pod is still the one it was created for. A tenant that
// deletes its Pod while the super Pod is being created (the reconcile its deletion runs may read
// a super cache without the new Pod, and does nothing) must not be left with a running super Pod
// its budget no longer counts: the Add is queued and deletes it. Gate conditions the tenant set
// before the create are copied by the Add's reconcile too.
func TestPodEchoSkipsOnlyTheCreatedPod(t *testing.T) {
	s, c := newSyncerWithTenant(t)
	superNS := resources.SuperNamespace(c, "shop")
	store := s.resources[resources.KindPod].TenantInformer(c).GetIndexer()
	owner := conversion.Owner{Tenant: c.Name, TenantUID: c.UID, Namespace: "shop", Name: "web-0", UID: "pod-uid-1"}
	super := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: superNS, Name: "web-0"}}
	tenantPod := func(mutate func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", UID: "pod-uid-1"}}
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	now := metav1.NewTime(time.Now())
	for _, tc := range []struct {
		name   string
		tenant *corev1.Pod // nil: not in the tenant cache
		want   bool
	}{
		{"the tenant Pod as created", tenantPod(nil), true},
		{"deleted from the tenant meanwhile", nil, false},
		{"being deleted in the tenant", tenantPod(func(p *corev1.Pod) { p.DeletionTimestamp = &now }), false},
		{"recreated in the tenant under the name", tenantPod(func(p *corev1.Pod) { p.UID = "pod-uid-2" }), false},
		{"with readiness gates", tenantPod(func(p *corev1.Pod) {
			p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}}
		}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, obj := range store.List() {
				if err := store.Delete(obj); err != nil {
					t.Fatal(err)
				}
			}
			if tc.tenant != nil {
				if err := store.Add(tc.tenant); err != nil {
					t.Fatal(err)
				}
			}
			s.echoes.Expect(superNS, "web-0", owner.UID)
			s.echoes.Answered(superNS, "web-0")
			watched := metrics.PodCreationCalls(c.Name, metrics.CallSuperWatch)
			informed := metrics.PodCreationCalls(c.Name, metrics.CallSuperInformer)
			if got := s.podEcho(c, super, owner); got != tc.want {
				t.Errorf("the super Pod's Add taken for the create's echo: %t, want %t", got, tc.want)
			}
			if s.podEcho(c, super, owner) {
				t.Error("a second Add taken for the same create's echo")
			}
			// The create's echo came, whether it is queued or not: its delivery is measured once.
			if d := metrics.PodCreationCalls(c.Name, metrics.CallSuperWatch) - watched; d != 1 {
				t.Errorf("super_watch observations rose by %d, want 1", d)
			}
			if d := metrics.PodCreationCalls(c.Name, metrics.CallSuperInformer) - informed; d != 1 {
				t.Errorf("super_informer observations rose by %d, want 1", d)
			}
		})
	}
}

// TestTenantBindingGoesDownOnlyWhenNeeded: a tenant Pod's binding to the node of its super Pod
// (the upward reconciler's copy of the super scheduler's) is not queued downward; a binding to
// another node, of a Pod whose cached super Pod is another tenant Pod's copy or is missing, or
// of a Pod with readiness gates is.
func TestTenantBindingGoesDownOnlyWhenNeeded(t *testing.T) {
	s, c := newSyncerWithTenant(t)
	superNS := resources.SuperNamespace(c, "shop")
	superStore := s.env.SuperInformers.Core().V1().Pods().Informer().GetIndexer()
	setSuper := func(uid, node string) {
		t.Helper()
		for _, obj := range superStore.List() {
			if err := superStore.Delete(obj); err != nil {
				t.Fatal(err)
			}
		}
		if uid == "" {
			return
		}
		if err := superStore.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: superNS, Name: "web-0",
			Annotations: map[string]string{conversion.AnnotationUID: uid}}, Spec: corev1.PodSpec{NodeName: node}}); err != nil {
			t.Fatal(err)
		}
	}
	pods := func(node string, gates bool) (*corev1.Pod, *corev1.Pod) {
		o := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", UID: "pod-uid-1", ResourceVersion: "1"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		if gates {
			o.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}}
		}
		n := o.DeepCopy()
		n.ResourceVersion, n.Spec.NodeName = "2", node
		return o, n
	}
	for _, tc := range []struct {
		name              string
		superUID, superAt string
		bindTo            string
		gates             bool
		want              bool
	}{
		{"binding to the super Pod's node", "pod-uid-1", "node-1", "node-1", false, false},
		{"binding to another node", "pod-uid-1", "node-1", "node-2", false, true},
		{"super Pod not bound", "pod-uid-1", "", "node-1", false, true},
		{"super Pod of another tenant Pod", "pod-uid-0", "node-1", "node-1", false, true},
		{"no super Pod cached", "", "", "node-1", false, true},
		{"readiness gates", "pod-uid-1", "node-1", "node-1", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setSuper(tc.superUID, tc.superAt)
			o, n := pods(tc.bindTo, tc.gates)
			if got := s.tenantUpdateGoesDown(c, o, n); got != tc.want {
				t.Errorf("queued downward: %t, want %t", got, tc.want)
			}
		})
	}
}
