package policy

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// heapGrowth returns the live heap growth per object of n objects made by build.
func heapGrowth(n int, build func(i int) any) float64 {
	var m0, m1 runtime.MemStats
	keep := make([]any, n)
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for i := range keep {
		keep[i] = build(i)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	runtime.KeepAlive(keep)
	return float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / float64(n)
}

// HeapBytes follows the heap a decoded object takes, for ordinary objects and for the shapes a
// tenant uses to amplify it (many tiny list entries or map keys): within 0.6–1.3 of the
// measured growth per object, and far above the protobuf size where decoding amplifies it.
func TestHeapBytesFollowsTheHeap(t *testing.T) {
	meta := func(i int) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: fmt.Sprintf("web-7f9c6d5b8-%05d", i), Namespace: "shop", UID: "0b5f9d1e-3c55-4a36-9b58-5d2f0a0d6c11",
			ResourceVersion: "123456", Labels: map[string]string{"app": "web", "tier": "frontend"}, CreationTimestamp: metav1.Now()}
	}
	cases := map[string]func(i int) any{
		"ConfigMap of 4 KB": func(i int) any {
			return &corev1.ConfigMap{ObjectMeta: meta(i), Data: map[string]string{"a.conf": strings.Repeat("a", 2000), "b.conf": strings.Repeat("b", 2000)}}
		},
		"Service": func(i int) any {
			return &corev1.Service{ObjectMeta: meta(i), Spec: corev1.ServiceSpec{Type: "ClusterIP", ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
				Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: "TCP"}}}}
		},
		"Node": func(i int) any {
			return &corev1.Node{ObjectMeta: meta(i), Status: corev1.NodeStatus{Capacity: corev1.ResourceList{"cpu": resource.MustParse("4")},
				Addresses: []corev1.NodeAddress{{Type: "InternalIP", Address: "10.0.0.1"}}, Conditions: []corev1.NodeCondition{{Type: "Ready", Status: "True"}}}}
		},
		"EndpointSlice of 1000 one-address endpoints": func(i int) any {
			e := make([]discoveryv1.Endpoint, 1000)
			for j := range e {
				e[j] = discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}}
			}
			return &discoveryv1.EndpointSlice{ObjectMeta: meta(i), AddressType: "IPv4", Endpoints: e}
		},
		"ConfigMap of 5000 empty keys": func(i int) any {
			d := make(map[string]string, 5000)
			for j := range 5000 {
				d[fmt.Sprintf("k%05d", j)] = ""
			}
			return &corev1.ConfigMap{ObjectMeta: meta(i), Data: d}
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			real := heapGrowth(300, build)
			obj := build(0)
			est, encoded := float64(HeapBytes(obj)), float64(ObjectBytes(obj))
			t.Logf("encoded %.0f bytes, estimate %.0f, measured %.0f per object (estimate/measured %.2f)", encoded, est, real, est/real)
			if r := est / real; r < 0.6 || r > 1.3 {
				t.Errorf("HeapBytes = %.0f, measured growth %.0f per object (ratio %.2f, want 0.6–1.3)", est, real, r)
			}
		})
	}
	if HeapBytes(nil) != 0 {
		t.Error("HeapBytes(nil) != 0")
	}
}
