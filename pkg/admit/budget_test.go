package admit

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
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

// A super Pod's charge in its tenant's budget is read from cached Pods as from plain ones.
func TestSuperPodChargeReadsCachedPods(t *testing.T) {
	const tn = "cachedpods"
	superPod := func(node string, st corev1.PodStatus, ann map[string]string) *podcache.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "t-app", Name: "web", Annotations: ann},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "nginx",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}}}},
			Status: st}
		conversion.Stamp(&p.ObjectMeta, conversion.Owner{Tenant: tn, TenantUID: "uid-" + tn, Namespace: "app", Name: "web", UID: "u1"})
		return cached(t, p)
	}
	bound := superPod("node-1", corev1.PodStatus{}, nil)
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
