package pod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
)

// TestTenantBindingOnly: a tenant Pod's binding, as the tenant cache sees it (the old version
// whole, the bound one trimmed), is told apart from a binding that comes with any other change
// a relist could fold into one update, and from updates that are not a binding; the Pods it is
// given are left as they were.
func TestTenantBindingOnly(t *testing.T) {
	unbound := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1", ResourceVersion: "1", Labels: map[string]string{"app": "a"}},
			Spec: corev1.PodSpec{
				Containers:  []corev1.Container{{Name: "c", Image: "nginx:1", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}},
				Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
			},
			Status: corev1.PodStatus{Phase: corev1.PodPending},
		}
	}
	bind := func(p *corev1.Pod) *corev1.Pod {
		p.ResourceVersion = "2"
		p.Spec.NodeName = "node-1"
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		return p
	}
	// cached returns p as the tenant informers' transform keeps it.
	cached := func(p *corev1.Pod) any {
		if p.Spec.NodeName == "" {
			c, err := podcache.NewFull(p)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		conversion.TrimPodSpec(p)
		c, err := podcache.New(p)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// decoded returns the cached Pod as the handler reads it.
	decoded := func(obj any) *corev1.Pod {
		p, ok := podcache.From(obj)
		if !ok {
			t.Fatalf("%T does not decode", obj)
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		change func(*corev1.Pod)
		want   bool
	}{
		{"binding", func(*corev1.Pod) {}, true},
		{"binding and a label", func(p *corev1.Pod) { p.Labels["tier"] = "x" }, false},
		{"binding and an image", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:2" }, false},
		{"binding and a deletion", func(p *corev1.Pod) { now := metav1.Now(); p.DeletionTimestamp = &now }, false},
		{"binding of a recreated Pod", func(p *corev1.Pod) { p.UID = "u2" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := bind(unbound())
			tc.change(n)
			if got := TenantBindingOnly(decoded(cached(unbound())), decoded(cached(n.DeepCopy()))); got != tc.want {
				t.Errorf("cached: got %t, want %t", got, tc.want)
			}
			o := unbound()
			if got := TenantBindingOnly(o, n); got != tc.want {
				t.Errorf("plain Pods: got %t, want %t", got, tc.want)
			}
			if len(o.Spec.Containers[0].Env) != 1 || len(o.Spec.Tolerations) != 1 || len(n.Spec.Tolerations) != 1 {
				t.Errorf("a Pod was trimmed in place: old %+v, new %+v", o.Spec, n.Spec)
			}
		})
	}
	t.Run("not a binding", func(t *testing.T) {
		o, n := bind(unbound()), bind(unbound())
		n.ResourceVersion = "3"
		if TenantBindingOnly(decoded(cached(o)), decoded(cached(n))) || TenantBindingOnly(o, n) {
			t.Error("an update of a bound Pod taken for its binding")
		}
		if TenantBindingOnly(decoded(cached(unbound())), decoded(cached(unbound()))) {
			t.Error("an update of an unbound Pod taken for its binding")
		}
	})
}
