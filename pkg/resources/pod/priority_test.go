package pod

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func TestPriorityClassAllowed(t *testing.T) {
	cs := fake.NewClientset(
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "gold", Labels: map[string]string{conversion.LabelPublic: "true"}}, Value: 10},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "private"}, Value: 20},
	)
	env := &resources.Env{SuperPublic: informers.NewSharedInformerFactory(cs, 0)}
	env.SuperPublic.Scheduling().V1().PriorityClasses().Informer()
	stop := make(chan struct{})
	defer close(stop)
	env.SuperPublic.Start(stop)
	env.SuperPublic.WaitForCacheSync(stop)
	cases := map[string]struct {
		class     string
		want      bool
		wantEvent bool
	}{
		"none":                        {class: "", want: true},
		"system":                      {class: "system-node-critical", want: true},
		"public super class":          {class: "gold", want: true},
		"super class, not public":     {class: "private", want: false, wantEvent: true},
		"tenant's own (not in super)": {class: "tenant-high", want: false, wantEvent: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec := record.NewFakeRecorder(4)
			c := &tenant.Cluster{Name: "t", UID: "u", Recorder: rec}
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "apps"}, Spec: corev1.PodSpec{PriorityClassName: tc.class}}
			if got := priorityClassAllowed(env, c, p); got != tc.want {
				t.Errorf("allowed = %v, want %v", got, tc.want)
			}
			select {
			case e := <-rec.Events:
				if !tc.wantEvent || !strings.Contains(e, "PriorityClassNotPublic") || !strings.Contains(e, tc.class) {
					t.Errorf("unexpected Event %q", e)
				}
			default:
				if tc.wantEvent {
					t.Error("no Event")
				}
			}
		})
	}
}
