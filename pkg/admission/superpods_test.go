package admission

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
)

// cached returns p in the form the informers cache it.
func cached(t *testing.T, p *corev1.Pod) *podcache.Pod {
	t.Helper()
	c, err := podcache.New(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// SuperPodPending, which reads only a Pod's metadata, spec.nodeName and status, sees through
// cached Pods as it does through plain ones.
func TestSuperPodPendingReadsCachedPods(t *testing.T) {
	const tn = "cachedpods"
	superPod := func(node string, st corev1.PodStatus, ann map[string]string) *podcache.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "t-app", Name: "web", Annotations: ann},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "nginx",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}}}},
			Status: st}
		conversion.Stamp(&p.ObjectMeta, conversion.Owner{Tenant: tn, TenantUID: "uid-" + tn, Namespace: "app", Name: "web", UID: "u1"})
		return cached(t, p)
	}
	unbound, bound := superPod("", corev1.PodStatus{}, nil), superPod("node-1", corev1.PodStatus{}, nil)
	for name, c := range map[string]struct {
		obj              any
		pending, isBound bool
	}{
		"unbound":       {unbound, true, false},
		"bound":         {bound, false, true},
		"unschedulable": {superPod("", corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse}}}, nil), false, false},
		"failed":        {superPod("", corev1.PodStatus{Phase: corev1.PodFailed}, nil), false, false},
		"not a Pod":     {&corev1.ConfigMap{}, false, false},
	} {
		if p, b := SuperPodPending(c.obj); p != c.pending || b != c.isBound {
			t.Errorf("%s: SuperPodPending = %t, %t; want %t, %t", name, p, b, c.pending, c.isBound)
		}
	}
}
