package syncer

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/tenant"
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

// The Pod event handlers that read only a Pod's metadata, spec.nodeName and status see through
// cached Pods as they do through plain ones: the tracker's binding events, the admission
// window's pending test and a super Pod's charge.
func TestHandlersReadCachedPods(t *testing.T) {
	metrics.Register()
	const tn = "cachedpods"
	defer metrics.ForgetTenant(tn)
	tenantPod := func(node string) *podcache.Pod {
		return cached(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "web"},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}})
	}
	superPod := func(node string, st corev1.PodStatus, ann map[string]string) *podcache.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "t-app", Name: "web", Annotations: ann},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "nginx",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}}}},
			Status: st}
		conversion.Stamp(&p.ObjectMeta, conversion.Owner{Tenant: tn, TenantUID: "uid-" + tn, Namespace: "app", Name: "web", UID: "u1"})
		return cached(t, p)
	}
	phases := histogramRise(t, "vcsyncer_pod_creation_phase_duration_seconds", tn, "phase")
	var tr tracker
	tr.podAdded(tn, tenantPod(""), "", time.Now())
	sh := tr.superPodHandler()
	unbound, bound := superPod("", corev1.PodStatus{}, nil), superPod("node-1", corev1.PodStatus{}, nil)
	sh.OnAdd(unbound, false)
	sh.OnUpdate(unbound, bound)
	tr.tenantPodHandler(&tenant.Cluster{Name: tn}).OnUpdate(tenantPod(""), tenantPod("vnode-1"))
	if _, counts := phases(); counts[metrics.PhaseSuperScheduling] != 1 || counts[metrics.PhaseUpwardProcess] != 1 {
		t.Errorf("phases observed %v, want super_scheduling and upward_process once each (the bindings seen in cached Pods)", counts)
	}
	if len(tr.pods) != 0 {
		t.Errorf("tracker still holds %d Pods after the tenant Pod was bound", len(tr.pods))
	}

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
		if p, b := superPodPending(c.obj); p != c.pending || b != c.isBound {
			t.Errorf("%s: superPodPending = %t, %t; want %t, %t", name, p, b, c.pending, c.isBound)
		}
	}

	recorded := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	withCharge := superPod("node-1", corev1.PodStatus{Phase: corev1.PodRunning}, map[string]string{policy.AnnotationCharge: policy.FormatCharge(recorded)})
	if got := superPodCharge(withCharge); got.Cpu().Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("charge of a cached super Pod with a recorded charge = %v, want cpu 2", got)
	}
	if got := superPodCharge(bound)[corev1.ResourceRequestsCPU]; got.Cmp(resource.MustParse("250m")) != 0 {
		t.Errorf("requests.cpu charged for a cached super Pod without a recorded charge = %v, want its spec's 250m", got.String())
	}
	if got := superPodCharge(superPod("node-1", corev1.PodStatus{Phase: corev1.PodSucceeded}, nil)); got != nil {
		t.Errorf("charge of an ended super Pod = %v, want none", got)
	}
}
