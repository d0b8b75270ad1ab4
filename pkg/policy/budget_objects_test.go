package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestObjectCharge: each copied kind is charged as the super cluster's quota admission counts
// it, so the tenant-wide budget and the backstop ResourceQuota agree on what an object costs.
func TestObjectCharge(t *testing.T) {
	gold := "gold"
	ports := []corev1.ServicePort{{Port: 80}, {Port: 443, NodePort: 30443}}
	cases := map[string]struct {
		obj  runtime.Object
		want corev1.ResourceList
	}{
		"configmap": {&corev1.ConfigMap{}, rl("configmaps", "1", "count/configmaps", "1")},
		"secret":    {&corev1.Secret{}, rl("secrets", "1", "count/secrets", "1")},
		"ingress":   {&networkingv1.Ingress{}, rl("count/ingresses.networking.k8s.io", "1")},
		"clusterip service": {&corev1.Service{Spec: corev1.ServiceSpec{Ports: ports}},
			rl("services", "1", "count/services", "1")},
		"nodeport service": {&corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: ports}},
			rl("services", "1", "count/services", "1", "services.nodeports", "2")},
		"loadbalancer service": {&corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports}},
			rl("services", "1", "count/services", "1", "services.nodeports", "2", "services.loadbalancers", "1")},
		"loadbalancer without node ports": {&corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports,
			AllocateLoadBalancerNodePorts: ptr(false)}},
			rl("services", "1", "count/services", "1", "services.nodeports", "1", "services.loadbalancers", "1")},
		"claim without class": {claimOf(nil, nil, "1Gi", ""),
			rl("persistentvolumeclaims", "1", "count/persistentvolumeclaims", "1", "requests.storage", "1Gi")},
		"claim of a class": {claimOf(&gold, nil, "1500m", ""),
			rl("persistentvolumeclaims", "1", "count/persistentvolumeclaims", "1", "requests.storage", "2",
				"gold.storageclass.storage.k8s.io/requests.storage", "2", "gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1")},
		"claim of a beta class annotation": {claimOf(ptr("other"), map[string]string{corev1.BetaStorageClassAnnotation: gold}, "1Gi", ""),
			rl("persistentvolumeclaims", "1", "count/persistentvolumeclaims", "1", "requests.storage", "1Gi",
				"gold.storageclass.storage.k8s.io/requests.storage", "1Gi", "gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1")},
		"claim allocated more than it asks": {claimOf(nil, nil, "1Gi", "2Gi"),
			rl("persistentvolumeclaims", "1", "count/persistentvolumeclaims", "1", "requests.storage", "2Gi")},
		"pod":  {&corev1.Pod{}, nil},
		"node": {&corev1.Node{}, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ObjectCharge(tc.obj), quantities); diff != "" {
				t.Errorf("ObjectCharge (-want +got):\n%s", diff)
			}
		})
	}
}

func claimOf(class *string, ann map[string]string, size, allocated string) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: ann}, Spec: corev1.PersistentVolumeClaimSpec{
		StorageClassName: class,
		Resources:        corev1.VolumeResourceRequirements{Requests: rl("storage", size)},
	}}
	if allocated != "" {
		c.Status.AllocatedResources = rl("storage", allocated)
	}
	return c
}

// TestBudgetKeys: which keys of limits.quota the budget counts over the tenant, and which the
// backstop ResourceQuota keeps in each namespace.
func TestBudgetKeys(t *testing.T) {
	cases := map[corev1.ResourceName]struct {
		budget, backstop bool
		canonical        corev1.ResourceName
	}{
		"pods":             {true, false, "pods"},
		"count/pods":       {true, false, "count/pods"},
		"cpu":              {true, false, "requests.cpu"},
		"limits.memory":    {true, false, "limits.memory"},
		"hugepages-2Mi":    {true, false, "requests.hugepages-2Mi"},
		"requests.storage": {true, true, "requests.storage"},
		"gold.storageclass.storage.k8s.io/persistentvolumeclaims": {true, true, "gold.storageclass.storage.k8s.io/persistentvolumeclaims"},
		"services":                          {true, true, "services"},
		"services.loadbalancers":            {true, true, "services.loadbalancers"},
		"services.nodeports":                {true, true, "services.nodeports"},
		"configmaps":                        {true, true, "configmaps"},
		"replicationcontrollers":            {true, true, "replicationcontrollers"},
		"resourcequotas":                    {true, true, "resourcequotas"},
		"count/ingresses.networking.k8s.io": {true, true, "count/ingresses.networking.k8s.io"},
		"nvidia.com/gpu":                    {false, false, ""},
		"requests.nvidia.com/gpu":           {true, false, "requests.nvidia.com/gpu"},
	}
	for k, tc := range cases {
		n, ok := normalizeBudgetKey(k)
		if ok != tc.budget || n != tc.canonical {
			t.Errorf("normalizeBudgetKey(%s) = %s, %v; want %s, %v", k, n, ok, tc.canonical, tc.budget)
		}
		if got := BackstopKey(k); got != tc.backstop {
			t.Errorf("BackstopKey(%s) = %v, want %v", k, got, tc.backstop)
		}
	}
}
