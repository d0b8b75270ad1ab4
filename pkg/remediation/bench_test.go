package remediation

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
)

// benchPod returns a tenant Pod as the tenant cache holds it (trimmed spec, full status).
func benchPod(ns string, i int) *corev1.Pod {
	start := metav1.NewTime(time.Unix(1_700_000_000, 0))
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("web-%05d", i), Namespace: ns, UID: types.UID(fmt.Sprintf("uid-%s-%05d", ns, i)),
			ResourceVersion: fmt.Sprint(1000 + i), CreationTimestamp: start,
			Labels:      map[string]string{"app": "web", "pod-template-hash": "5d8f7c9b6", "tier": "frontend"},
			Annotations: map[string]string{"example.com/owner": "team-a"},
		},
		Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%50), Containers: []corev1.Container{
			{Name: "web", Image: "nginx:1.27"}, {Name: "sidecar", Image: "envoy:1.31"},
		}},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "192.168.0.10", PodIP: fmt.Sprintf("10.%d.%d.%d", i/65536, i/256%256, i%256),
			StartTime: &start, QOSClass: corev1.PodQOSBurstable,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: start},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: start},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: start},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: start},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: start},
			},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "web", Ready: true, Image: "nginx:1.27", ImageID: "sha256:abc", ContainerID: "containerd://1",
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}}},
				{Name: "sidecar", Ready: true, Image: "envoy:1.31", ImageID: "sha256:def", ContainerID: "containerd://2",
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}}},
			},
		},
	}
	conversion.TrimPodSpec(p)
	return p
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkScan measures one remediation scan over tenant and super caches holding the given
// number of Pods, all in sync (the steady state: every Pod is compared, nothing is enqueued).
// Besides ns/op and allocs/op it reports the process CPU time per scan (cpu-ms/op).
func BenchmarkScan(b *testing.B) {
	for _, bc := range []struct{ tenants, pods, mismatchEvery int }{
		{1, 10_000, 0},
		{1, 10_000, 100}, // 1% of the super Pods differ (a tenant label edited in the super cluster)
		{100, 100, 0},    // 10,000 Pods spread over 100 tenants
	} {
		name := fmt.Sprintf("tenants=%d/pods-per-tenant=%d/mismatch-every=%d", bc.tenants, bc.pods, bc.mismatchEvery)
		b.Run(name, func(b *testing.B) {
			f := newFixture(b)
			p := pod.Resource
			for ti := range bc.tenants {
				c := f.addTenant(fmt.Sprintf("tenant-%03d", ti), true, true)
				for i := range bc.pods {
					ns := fmt.Sprintf("ns-%02d", i%100)
					tp := benchPod(ns, i)
					sp := superPodOf(c, tp)
					conversion.TrimPodSpec(sp)
					if bc.mismatchEvery > 0 && i%bc.mismatchEvery == 0 {
						sp.Labels["app"] = "edited-in-super" // a label copied from the tenant
					}
					mustAdd(b, f.tenantStore(c, p), tp)
					mustAdd(b, f.superStore(p), sp)
				}
			}
			f.sc.o.Resources = []resources.Resource{p}
			// Warm up: the first scan records candidates; later scans confirm and re-enqueue.
			f.sc.Scan()
			f.q.take()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			var last Result
			for b.Loop() {
				last = f.sc.Scan()
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			want := bc.tenants * bc.pods * 2
			if last.Checked != want {
				b.Fatalf("checked %d objects, want %d", last.Checked, want)
			}
			if bc.mismatchEvery > 0 && last.Requeued != bc.tenants*bc.pods/bc.mismatchEvery {
				b.Fatalf("requeued %d, want %d", last.Requeued, bc.tenants*bc.pods/bc.mismatchEvery)
			}
			if bc.mismatchEvery == 0 && last.Candidates != 0 {
				b.Fatalf("%d candidates in a steady state", last.Candidates)
			}
			f.q.take()
		})
	}
}
