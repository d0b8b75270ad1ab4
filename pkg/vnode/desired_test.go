package vnode

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

type nodeBuilder struct{ n *corev1.Node }

func makeNode(name string) *nodeBuilder {
	return &nodeBuilder{&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}}
}

func (b *nodeBuilder) label(k, v string) *nodeBuilder {
	if b.n.Labels == nil {
		b.n.Labels = map[string]string{}
	}
	b.n.Labels[k] = v
	return b
}

func (b *nodeBuilder) taint(key string, effect corev1.TaintEffect) *nodeBuilder {
	b.n.Spec.Taints = append(b.n.Spec.Taints, corev1.Taint{Key: key, Effect: effect})
	return b
}

func (b *nodeBuilder) cordon() *nodeBuilder { b.n.Spec.Unschedulable = true; return b }

func (b *nodeBuilder) ready(s corev1.ConditionStatus, heartbeat time.Time) *nodeBuilder {
	b.n.Status.Conditions = append(b.n.Status.Conditions, corev1.NodeCondition{
		Type: corev1.NodeReady, Status: s, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.NewTime(heartbeat), LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
	})
	return b
}

func (b *nodeBuilder) capacity(cpu string) *nodeBuilder {
	r := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	b.n.Status.Capacity, b.n.Status.Allocatable = r, r
	b.n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}
	return b
}

func (b *nodeBuilder) obj() *corev1.Node { return b.n }

func TestDesiredNodeLabels(t *testing.T) {
	name63 := strings.Repeat("a", 61) + ".b" // 63 characters, valid as a label value
	name64 := strings.Repeat("n", 64)
	long := strings.Repeat("x", 60) + "." + strings.Repeat("y", 60) // a 121-char DNS subdomain
	cases := map[string]struct {
		super, current *corev1.Node
		wantLabels     map[string]string
	}{
		"labels copied, hostname from name": {
			super:      makeNode("node-1").label("zone", "a").obj(),
			wantLabels: map[string]string{"zone": "a", corev1.LabelHostname: "node-1", LabelVNode: "true"},
		},
		"super hostname label wins": {
			super:      makeNode("node-1").label(corev1.LabelHostname, "host-1").obj(),
			wantLabels: map[string]string{corev1.LabelHostname: "host-1", LabelVNode: "true"},
		},
		"63-character name is a valid hostname label": {
			super:      makeNode(name63).obj(),
			wantLabels: map[string]string{corev1.LabelHostname: name63, LabelVNode: "true"},
		},
		"64-character name: hostname label left out": {
			super:      makeNode(name64).obj(),
			wantLabels: map[string]string{LabelVNode: "true"},
		},
		"121-character name with its own hostname label": {
			super:      makeNode(long).label(corev1.LabelHostname, "short").obj(),
			wantLabels: map[string]string{corev1.LabelHostname: "short", LabelVNode: "true"},
		},
		"label removed from the super Node is removed, tenant label kept": {
			super: makeNode("node-1").label("zone", "b").obj(),
			current: func() *corev1.Node {
				n := DesiredNode(makeNode("node-1").label("zone", "a").label("gpu", "yes").obj(), nil)
				n.Labels["tenant-added"] = "x"
				return n
			}(),
			wantLabels: map[string]string{"zone": "b", corev1.LabelHostname: "node-1", LabelVNode: "true", "tenant-added": "x"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := DesiredNode(tc.super, tc.current)
			if diff := cmp.Diff(tc.wantLabels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if got.Name != tc.super.Name {
				t.Errorf("name %q, want %q", got.Name, tc.super.Name)
			}
			for k, v := range got.Labels {
				if errs := validation.IsQualifiedName(k); len(errs) > 0 {
					t.Errorf("invalid label key %q: %v", k, errs)
				}
				if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
					t.Errorf("invalid label value %q=%q: %v", k, v, errs)
				}
			}
		})
	}
}

func TestDesiredNodeTaintsAndCordon(t *testing.T) {
	super := makeNode("n").cordon().
		taint("dedicated", corev1.TaintEffectNoSchedule).
		taint(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule). // the super's own lifecycle taint
		taint(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute).obj()
	current := DesiredNode(makeNode("n").obj(), nil)
	current.Spec.Taints = []corev1.Taint{
		{Key: "old-super-taint", Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}, // the tenant lifecycle controller's
	}
	got := DesiredNode(super, current)
	if !got.Spec.Unschedulable {
		t.Error("cordon not copied")
	}
	want := []corev1.Taint{
		{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute},
	}
	if diff := cmp.Diff(want, got.Spec.Taints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
	if !NodeChanged(got, current) {
		t.Error("NodeChanged = false for a changed vNode")
	}
	// Applying the result again changes nothing, whatever the taint order.
	again := got.DeepCopy()
	again.Spec.Taints = []corev1.Taint{again.Spec.Taints[1], again.Spec.Taints[0]}
	if NodeChanged(DesiredNode(super, again), again) {
		t.Error("NodeChanged = true for an up-to-date vNode (taints reordered)")
	}
	// Uncordon propagates.
	super.Spec.Unschedulable = false
	if d := DesiredNode(super, got); d.Spec.Unschedulable || !NodeChanged(d, got) {
		t.Error("uncordon not propagated")
	}
}

func TestDesiredStatus(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	every := 5 * time.Minute
	super := makeNode("n").ready(corev1.ConditionTrue, t0.Add(-time.Hour)).capacity("32").obj()

	st, write := DesiredStatus(super, nil, t0, every)
	if !write {
		t.Fatal("new vNode: write = false")
	}
	if hb := st.Conditions[0].LastHeartbeatTime.Time; !hb.Equal(t0) {
		t.Errorf("heartbeat %v, want now %v (not the super Node's)", hb, t0)
	}
	if st.Conditions[0].LastTransitionTime != super.Status.Conditions[0].LastTransitionTime {
		t.Error("lastTransitionTime not copied")
	}
	if !st.Capacity.Cpu().Equal(resource.MustParse("32")) || len(st.Addresses) != 1 {
		t.Errorf("capacity/addresses not copied: %+v", st)
	}

	cases := map[string]struct {
		super     *corev1.Node
		now       time.Time
		wantWrite bool
	}{
		"nothing changed, heartbeat fresh: no write": {super: super, now: t0.Add(every - time.Second)},
		"super heartbeat moved only: no write": {
			super: makeNode("n").ready(corev1.ConditionTrue, t0.Add(time.Minute)).capacity("32").obj(), now: t0.Add(time.Minute),
		},
		"heartbeat due: write":     {super: super, now: t0.Add(every), wantWrite: true},
		"condition changed: write": {super: makeNode("n").ready(corev1.ConditionFalse, t0).capacity("32").obj(), now: t0.Add(time.Second), wantWrite: true},
		"capacity changed: write":  {super: makeNode("n").ready(corev1.ConditionTrue, t0).capacity("16").obj(), now: t0.Add(time.Second), wantWrite: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, write := DesiredStatus(tc.super, &st, tc.now, every)
			if write != tc.wantWrite {
				t.Fatalf("write = %v, want %v", write, tc.wantWrite)
			}
			wantHB := t0
			if tc.wantWrite {
				wantHB = tc.now
			}
			if hb := got.Conditions[0].LastHeartbeatTime.Time; !hb.Equal(wantHB) {
				t.Errorf("heartbeat %v, want %v", hb, wantHB)
			}
			if HeartbeatDue(&st, tc.now, every) != (tc.now.Sub(t0) >= every) {
				t.Errorf("HeartbeatDue disagrees at %v", tc.now)
			}
		})
	}
}

func TestDesiredLease(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	n := makeNode(strings.Repeat("a", 63)).obj()
	n.UID = "uid-1"
	l := DesiredLease(n, nil, 40*time.Second, now)
	if l.Namespace != "kube-node-lease" || l.Name != n.Name || *l.Spec.HolderIdentity != n.Name ||
		*l.Spec.LeaseDurationSeconds != 40 || !l.Spec.RenewTime.Time.Equal(now) {
		t.Errorf("lease %+v", l)
	}
	if len(l.OwnerReferences) != 1 || l.OwnerReferences[0].UID != "uid-1" || l.OwnerReferences[0].Kind != "Node" {
		t.Errorf("owner %+v", l.OwnerReferences)
	}
	l.ResourceVersion = "7"
	r := DesiredLease(n, l, 40*time.Second, now.Add(10*time.Second))
	if r.ResourceVersion != "7" || !r.Spec.RenewTime.Time.Equal(now.Add(10*time.Second)) {
		t.Errorf("renewal %+v", r)
	}
}

func TestDesiredStatusForKubeletEndpoint(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	every := 5 * time.Minute
	super := makeNode("n").ready(corev1.ConditionTrue, t0.Add(-time.Hour)).capacity("32").obj()
	super.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "kwok-node-1"}, {Type: corev1.NodeInternalIP, Address: "10.200.0.2"}}
	cases := map[string]struct {
		ep   KubeletEndpoint
		want []corev1.NodeAddress
	}{
		"IP":   {ep: KubeletEndpoint{Address: "10.0.0.7", Port: 10250}, want: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.7"}}},
		"name": {ep: KubeletEndpoint{Address: "vc-syncer-kubelet.vc-syncer-system.svc", Port: 10250}, want: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "vc-syncer-kubelet.vc-syncer-system.svc"}, {Type: corev1.NodeInternalDNS, Address: "vc-syncer-kubelet.vc-syncer-system.svc"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st, write := DesiredStatusFor(super, tc.ep, nil, t0, every)
			if !write {
				t.Fatal("new vNode: write = false")
			}
			if !equality.Semantic.DeepEqual(st.Addresses, tc.want) || st.DaemonEndpoints.KubeletEndpoint.Port != tc.ep.Port {
				t.Errorf("addresses %v port %d, want %v %d (no super Node address)", st.Addresses, st.DaemonEndpoints.KubeletEndpoint.Port, tc.want, tc.ep.Port)
			}
			if _, write := DesiredStatusFor(super, tc.ep, &st, t0.Add(time.Second), every); write {
				t.Error("unchanged status written again")
			}
			moved := tc.ep
			moved.Port++
			if _, write := DesiredStatusFor(super, moved, &st, t0.Add(time.Second), every); !write {
				t.Error("a new kubelet port is not written")
			}
		})
	}
}
