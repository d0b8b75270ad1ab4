package pod

import (
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// checkPods returns a bound, Running tenant Pod (as trimmed in the tenant cache) and its super
// copy as the reconcilers leave it.
func checkPods(c *tenant.Cluster) (*corev1.Pod, *corev1.Pod) {
	t := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "pod-uid", ResourceVersion: "3",
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "x"}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "nginx:1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7", QOSClass: corev1.PodQOSBestEffort,
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	s := Desired(c, t, resources.SuperNamespace(c, "shop"), nil)
	s.UID, s.ResourceVersion = "super-uid", "90"
	s.Spec.NodeName = "n1"
	s.Status = *t.Status.DeepCopy()
	s.Annotations["added-by-a-super-webhook"] = "y"
	return t, s
}

func TestCheck(t *testing.T) {
	cs := fake.NewClientset()
	c := &tenant.Cluster{Name: "t1", UID: "tenant-uid", Informers: informers.NewSharedInformerFactory(cs, 0)}
	env := &resources.Env{Super: cs, SuperInformers: informers.NewSharedInformerFactory(cs, 0), SuperNodes: informers.NewSharedInformerFactory(cs, 0)}
	now := metav1.Now()
	cases := map[string]restest.CheckCase[*corev1.Pod]{
		"in sync (extra super annotations kept)": {Want: resources.InSync},
		"super Pod missing": {
			Mutate: func(t, _ *corev1.Pod) (*corev1.Pod, *corev1.Pod) { return t, nil },
			Want:   resources.MismatchMissingInSuper,
		},
		"super Pod missing, tenant Pod ran and finished: expected": {
			Mutate: func(t, _ *corev1.Pod) (*corev1.Pod, *corev1.Pod) { t.Status.Phase = corev1.PodFailed; return t, nil },
			Want:   resources.InSync,
		},
		"super Pod missing, tenant Pod ran and still Running: marked lost by the reconcile": {
			Mutate: func(t, _ *corev1.Pod) (*corev1.Pod, *corev1.Pod) { return t, nil },
			Want:   resources.MismatchMissingInSuper,
		},
		"super Pod missing, preset nodeName that is no vNode: never synced": {
			Mutate: func(t, _ *corev1.Pod) (*corev1.Pod, *corev1.Pod) { t.Status = corev1.PodStatus{}; return t, nil },
			Want:   resources.InSync,
		},
		"super Pod missing, unscheduled tenant Pod": {
			Mutate: func(t, _ *corev1.Pod) (*corev1.Pod, *corev1.Pod) {
				t.Spec.NodeName, t.Status = "", corev1.PodStatus{}
				return t, nil
			},
			Want: resources.MismatchMissingInSuper,
		},
		"tenant Pod being deleted, super Pod gone": {
			Mutate: func(t, _ *corev1.Pod) (*corev1.Pod, *corev1.Pod) { t.DeletionTimestamp = &now; return t, nil },
			Want:   resources.InSync,
		},
		"tenant Pod being deleted, super Pod live": {
			Mutate: func(t, s *corev1.Pod) (*corev1.Pod, *corev1.Pod) { t.DeletionTimestamp = &now; return t, s },
			Want:   resources.MismatchStaleInSuper,
		},
		"tenant Pod being deleted, super Pod going": {
			Mutate: func(t, s *corev1.Pod) (*corev1.Pod, *corev1.Pod) {
				t.DeletionTimestamp, s.DeletionTimestamp = &now, &now
				return t, s
			},
			Want: resources.InSync,
		},
		"super Pod of an earlier tenant Pod with the same name": {
			Mutate: func(t, s *corev1.Pod) (*corev1.Pod, *corev1.Pod) { t.UID = "recreated"; return t, s },
			Want:   resources.MismatchStaleInSuper,
		},
		"label changed in the super cluster": {
			Mutate: func(t, s *corev1.Pod) (*corev1.Pod, *corev1.Pod) { s.Labels["app"] = "other"; return t, s },
			Want:   resources.MismatchContentDiffers,
		},
		"label added in the super cluster by someone else (kept, not fought over)": {
			Mutate: func(t, s *corev1.Pod) (*corev1.Pod, *corev1.Pod) { s.Labels["extra"] = "1"; return t, s },
			Want:   resources.InSync,
		},
		"label removed in the tenant still in super": {
			Mutate: func(t, s *corev1.Pod) (*corev1.Pod, *corev1.Pod) { t.Labels = nil; return t, s },
			Want:   resources.MismatchContentDiffers,
		},
		"tenant annotation missing in super": {
			Mutate: func(t, s *corev1.Pod) (*corev1.Pod, *corev1.Pod) { delete(s.Annotations, "note"); return t, s },
			Want:   resources.MismatchContentDiffers,
		},
		"image changed in the tenant": {
			Mutate: func(t, s *corev1.Pod) (*corev1.Pod, *corev1.Pod) { t.Spec.Containers[0].Image = "nginx:2"; return t, s },
			Want:   resources.MismatchContentDiffers,
		},
		"super Pod bound, tenant Pod not": {
			Mutate: func(t, s *corev1.Pod) (*corev1.Pod, *corev1.Pod) { t.Spec.NodeName = ""; return t, s },
			Want:   resources.MismatchStatusDiffers,
		},
		"phase differs": {
			Mutate: func(t, s *corev1.Pod) (*corev1.Pod, *corev1.Pod) { s.Status.Phase = corev1.PodSucceeded; return t, s },
			Want:   resources.MismatchStatusDiffers,
		},
		"condition differs": {
			Mutate: func(t, s *corev1.Pod) (*corev1.Pod, *corev1.Pod) {
				t.Status.Conditions[1].Status = corev1.ConditionFalse
				return t, s
			},
			Want: resources.MismatchStatusDiffers,
		},
		"tenant gate condition in both": {
			Mutate: func(t, s *corev1.Pod) (*corev1.Pod, *corev1.Pod) {
				t.Status.Conditions = append(t.Status.Conditions, corev1.PodCondition{Type: "example.com/ready", Status: corev1.ConditionTrue})
				t.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}}
				s.Status.Conditions = append(s.Status.Conditions, corev1.PodCondition{Type: "example.com/ready", Status: corev1.ConditionTrue})
				return t, s
			},
			Want: resources.InSync,
		},
		"tenant gate condition not in the super Pod yet: copied down": {
			Mutate: func(t, s *corev1.Pod) (*corev1.Pod, *corev1.Pod) {
				t.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}}
				t.Status.Conditions = append(t.Status.Conditions, corev1.PodCondition{Type: "example.com/ready", Status: corev1.ConditionTrue})
				return t, s
			},
			Want: resources.MismatchContentDiffers,
		},
		"gate condition only in the super Pod (kwok's, or withdrawn in the tenant)": {
			Mutate: func(t, s *corev1.Pod) (*corev1.Pod, *corev1.Pod) {
				t.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}}
				s.Status.Conditions = append(s.Status.Conditions, corev1.PodCondition{Type: "example.com/ready", Status: corev1.ConditionTrue})
				return t, s
			},
			Want: resources.MismatchContentDiffers,
		},
		"a tenant condition that is no readiness gate is not copied down": {
			Mutate: func(t, s *corev1.Pod) (*corev1.Pod, *corev1.Pod) {
				t.Status.Conditions = append(t.Status.Conditions, corev1.PodCondition{Type: "example.com/other", Status: corev1.ConditionTrue})
				return t, s
			},
			Want: resources.InSync,
		},
		"tenant-only status fields (QoS class) do not count": {
			Mutate: func(t, s *corev1.Pod) (*corev1.Pod, *corev1.Pod) {
				s.Status.QOSClass = corev1.PodQOSGuaranteed
				return t, s
			},
			Want: resources.InSync,
		},
	}
	restest.RunCheckCases(t, func(t, s metav1.Object) resources.Mismatch { return (Resource).Check(env, c, t, s) }, func() (*corev1.Pod, *corev1.Pod) { return checkPods(c) }, cases)
}

// mutations applied at random to a tenant Pod and its super copy, to check that the fast
// comparisons of Check agree with the reconcilers' own decisions.
var podMutations = []func(t, s *corev1.Pod){
	func(t, _ *corev1.Pod) { t.Labels["app"] = "other" },
	func(t, _ *corev1.Pod) { t.Labels["new"] = "1" },
	func(t, _ *corev1.Pod) { delete(t.Labels, "app") },
	func(t, _ *corev1.Pod) { t.Labels[conversion.LabelManagedBy] = "tenant-set" },
	func(_, s *corev1.Pod) { s.Labels["extra"] = "1" },
	func(_, s *corev1.Pod) { delete(s.Labels, conversion.LabelTenantUID) },
	func(t, _ *corev1.Pod) { t.Annotations["note"] = "changed" },
	func(t, _ *corev1.Pod) { t.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{}" },
	func(t, _ *corev1.Pod) { t.Annotations[conversion.AnnotationName] = "spoofed" },
	func(_, s *corev1.Pod) { s.Annotations["added"] = "by-webhook" },
	func(_, s *corev1.Pod) { delete(s.Annotations, "note") },
	func(_, s *corev1.Pod) { s.Annotations[conversion.AnnotationNamespace] = "elsewhere" },
	func(t, _ *corev1.Pod) { t.Spec.Containers[0].Image = "nginx:2" },
	func(_, s *corev1.Pod) { s.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "busybox"}} },
	func(t, _ *corev1.Pod) { clear(t.Labels) },
	func(_, s *corev1.Pod) { s.Status.Phase = corev1.PodFailed },
	func(_, s *corev1.Pod) { s.Status.PodIP = "10.9.9.9" },
	func(t, _ *corev1.Pod) { t.Status.Conditions[0].ObservedGeneration = 4 },
	func(_, s *corev1.Pod) { s.Status.Conditions[1].ObservedGeneration = 2 },
	func(_, s *corev1.Pod) { s.Status.NominatedNodeName = "n2" },
	func(_, s *corev1.Pod) { s.Status.QOSClass = corev1.PodQOSGuaranteed },
	func(_, s *corev1.Pod) { s.Status.ObservedGeneration = 9 },
	func(_, s *corev1.Pod) { s.Status.Message = "evicted" },
	func(_, s *corev1.Pod) {
		s.Status.Conditions = append(s.Status.Conditions, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue})
	},
	func(_, s *corev1.Pod) {
		s.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Ready: true}}
	},
	func(_, s *corev1.Pod) { s.Status.HostIPs = []corev1.HostIP{} }, // empty vs nil: semantically equal
	func(t, _ *corev1.Pod) {
		t.Status.Conditions = append(t.Status.Conditions, corev1.PodCondition{Type: "example.com/ready", Status: corev1.ConditionTrue})
	},
	func(_, s *corev1.Pod) {
		s.Status.Conditions = append(s.Status.Conditions, corev1.PodCondition{Type: "example.com/ready", Status: corev1.ConditionFalse})
	},
	func(t, s *corev1.Pod) {
		t.Status.Conditions = append([]corev1.PodCondition{{Type: "tenant-first", Status: corev1.ConditionTrue}}, t.Status.Conditions...)
		s.Status.Conditions = append(s.Status.Conditions, corev1.PodCondition{Type: "tenant-first", Status: corev1.ConditionTrue})
	},
	func(t, s *corev1.Pod) {
		now := metav1.Now()
		s.Status.StartTime = &now
		utc := metav1.NewTime(now.UTC()) // the same instant in another location
		t.Status.StartTime = &utc
	},
}

// TestFastComparisonsMatchReconcilers checks, over random combinations of mutations, that
// contentInSync equals !NeedsUpdate(Desired(...)) (the downward reconcile's decision) and
// statusInSync equals Semantic.DeepEqual(DesiredStatus(...)) (the upward reconcile's).
func TestFastComparisonsMatchReconcilers(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "tenant-uid"}
	rng := rand.New(rand.NewPCG(1, 2))
	var contentDiffers, statusDiffers int
	for i := range 3000 {
		tp, sp := checkPods(c)
		for range rng.IntN(3) {
			podMutations[rng.IntN(len(podMutations))](tp, sp)
		}
		wantContent := !NeedsUpdate(Desired(c, tp, sp.Namespace, sp), sp)
		if got := contentInSync(c, tp, sp); got != wantContent {
			t.Fatalf("case %d: contentInSync = %v, reconcile decides %v\ntenant %+v\nsuper %+v", i, got, wantContent, tp.ObjectMeta, sp.ObjectMeta)
		}
		wantStatus := equality.Semantic.DeepEqual(DesiredStatus(tp, sp), &tp.Status)
		if got := statusInSync(tp, sp); got != wantStatus {
			t.Fatalf("case %d: statusInSync = %v, reconcile decides %v\ntenant %+v\nsuper %+v", i, got, wantStatus, tp.Status, sp.Status)
		}
		if !wantContent {
			contentDiffers++
		}
		if !wantStatus {
			statusDiffers++
		}
	}
	if contentDiffers == 0 || contentDiffers == 3000 || statusDiffers == 0 || statusDiffers == 3000 {
		t.Fatalf("mutations do not cover both outcomes: content differs %d, status differs %d of 3000", contentDiffers, statusDiffers)
	}
}
