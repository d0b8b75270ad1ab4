package latency

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
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

// The tracker's handlers, which read only a Pod's metadata and spec.nodeName, see the binding
// events through cached Pods as they do through plain ones.
func TestHandlersReadCachedPods(t *testing.T) {
	metrics.Register()
	const tn = "cachedpods"
	defer metrics.ForgetTenant(tn)
	tenantPod := func(node string) *podcache.Pod {
		return cached(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "web"},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}})
	}
	superPod := func(node string) *podcache.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "t-app", Name: "web"},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		conversion.Stamp(&p.ObjectMeta, conversion.Owner{Tenant: tn, TenantUID: "uid-" + tn, Namespace: "app", Name: "web", UID: "u1"})
		return cached(t, p)
	}
	phases := histogramRise(t, "vcsyncer_pod_creation_phase_duration_seconds", tn, "phase")
	var tr Tracker
	tr.podAdded(tn, tenantPod(""), "", time.Now())
	sh := tr.SuperPodHandler()
	unbound, bound := superPod(""), superPod("node-1")
	sh.OnAdd(unbound, false)
	sh.OnUpdate(unbound, bound)
	tr.TenantPodHandler(tn, func() bool { return true }).OnUpdate(tenantPod(""), tenantPod("vnode-1"))
	if _, counts := phases(); counts[metrics.PhaseSuperScheduling] != 1 || counts[metrics.PhaseUpwardProcess] != 1 {
		t.Errorf("phases observed %v, want super_scheduling and upward_process once each (the bindings seen in cached Pods)", counts)
	}
	if len(tr.pods) != 0 {
		t.Errorf("tracker still holds %d Pods after the tenant Pod was bound", len(tr.pods))
	}
}
