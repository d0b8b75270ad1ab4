package tenant

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/vcsyncer/syncer/pkg/eventcache"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
)

// kindObjects returns one object of every kind in HeldKinds, each as the apiserver would give
// it (a non-empty spec where the apiserver sets one), named name in namespace "ns" (a
// Namespace: named name), with annotation "note" of n bytes. A Pod is in its cached form.
func kindObjects(t *testing.T, name string, n int) map[string]any {
	t.Helper()
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), ResourceVersion: "7",
			Labels: map[string]string{"app": "x"}, Annotations: map[string]string{"note": strings.Repeat("n", n)}}
	}
	one := intstr.FromInt32(1)
	pod := &corev1.Pod{ObjectMeta: meta(), Spec: corev1.PodSpec{NodeName: "vnode-1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	cached, err := podcache.New(pod)
	if err != nil {
		t.Fatal(err)
	}
	nsMeta := meta()
	nsMeta.Namespace = ""
	cluster := func() metav1.ObjectMeta { m := meta(); m.Namespace = ""; return m }
	retain, immediate, lower := corev1.PersistentVolumeReclaimRetain, storagev1.VolumeBindingImmediate, corev1.PreemptLowerPriority
	return map[string]any{
		// The cluster-scoped kinds the syncer watches in every tenant, which a tenant can
		// create too.
		"Node": &corev1.Node{ObjectMeta: cluster(), Spec: corev1.NodeSpec{Unschedulable: true},
			Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}},
		"PersistentVolume": &corev1.PersistentVolume{ObjectMeta: cluster(), Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}},
		}, Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable}},
		"StorageClass":  &storagev1.StorageClass{ObjectMeta: cluster(), Provisioner: "example.com/p", ReclaimPolicy: &retain, VolumeBindingMode: &immediate},
		"PriorityClass": &schedulingv1.PriorityClass{ObjectMeta: cluster(), Value: 0, PreemptionPolicy: &lower},
		"RuntimeClass":  &nodev1.RuntimeClass{ObjectMeta: cluster(), Handler: "runc"},

		"ConfigMap":      &corev1.ConfigMap{ObjectMeta: meta(), Data: map[string]string{"a": "b"}},
		"Secret":         &corev1.Secret{ObjectMeta: meta(), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a": []byte("b")}},
		"Service":        &corev1.Service{ObjectMeta: meta(), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Port: 80}}}},
		"ServiceAccount": &corev1.ServiceAccount{ObjectMeta: meta(), ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}},
		"Endpoints":      &corev1.Endpoints{ObjectMeta: meta(), Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}}}}},
		"EndpointSlice":  &discoveryv1.EndpointSlice{ObjectMeta: meta(), AddressType: discoveryv1.AddressTypeIPv4},
		"PersistentVolumeClaim": &corev1.PersistentVolumeClaim{ObjectMeta: meta(), Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}},
		"PodDisruptionBudget": &policyv1.PodDisruptionBudget{ObjectMeta: meta(), Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one}},
		"Ingress":             &networkingv1.Ingress{ObjectMeta: meta(), Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "a.example.com"}}}},
		"NetworkPolicy": &networkingv1.NetworkPolicy{ObjectMeta: meta(), Spec: networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}},
		"Namespace": &corev1.Namespace{ObjectMeta: nsMeta, Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
			Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
		"Pod": cached,
		// An Event copy's cached record (annotations are set here only to make one over the
		// cap: NewCopy drops them, so a real record never is).
		"Event": &eventcache.Copy{ObjectMeta: meta(), Digest: eventcache.ShownDigest(&corev1.Event{Reason: "Scheduled"})},
	}
}

// TestHeldBytesBoundsEveryKind: an object of every synced kind over limits.maxObjectBytes
// (its annotations counted) is cached as a stub of its own Go type: metadata only (name,
// namespace, UID, resourceVersion, AnnotationHeldOut; a Pod keeps spec.nodeName), recognised
// as a stub by its shape and refused with rule objectSize; the same object under the cap is
// cached as it is, and not taken for a stub.
func TestHeldBytesBoundsEveryKind(t *testing.T) {
	l := heldLimits("1Mi")
	small, big := kindObjects(t, "small", 100), kindObjects(t, "big", 20000)
	if len(big) != len(HeldKinds) {
		t.Fatalf("kindObjects covers %d kinds, HeldKinds %d", len(big), len(HeldKinds))
	}
	for _, kind := range HeldKinds {
		t.Run(kind, func(t *testing.T) {
			var h HeldBytes
			if got := h.Admit(l, small[kind]); got != small[kind] || IsHeldOut(got) {
				t.Fatalf("a small %s was not cached as it is (stub: %v)", kind, IsHeldOut(got))
			}
			charged := max(policy.ObjectBytes(small[kind]), policy.HeapBytes(small[kind]))
			if kind == "Namespace" {
				charged += NamespaceSuperBytes // its super namespace, quota and bookkeeping
			}
			if held, _ := h.Totals(); held <= 0 || held != charged || held < policy.ObjectBytes(small[kind]) {
				t.Errorf("held %d bytes for a small %s, want its charge %d (encoded %d, heap %d)",
					held, kind, charged, policy.ObjectBytes(small[kind]), policy.HeapBytes(small[kind]))
			}
			got := h.Admit(l, big[kind])
			if !IsHeldOut(got) {
				t.Fatalf("a %s with 20 KB of annotations passed a 10Ki maxObjectBytes", kind)
			}
			if gk, _ := heldKind(got); gk != kind {
				t.Fatalf("stub of a %s has Go type %T", kind, got)
			}
			m := got.(metav1.Object)
			want := big[kind].(metav1.Object)
			if m.GetName() != want.GetName() || m.GetNamespace() != want.GetNamespace() || m.GetUID() != want.GetUID() || m.GetResourceVersion() != "7" {
				t.Errorf("stub lost its identity: %s/%s %s rv %s", m.GetNamespace(), m.GetName(), m.GetUID(), m.GetResourceVersion())
			}
			if len(m.GetLabels()) != 0 || len(m.GetAnnotations()) != 1 {
				t.Errorf("stub keeps labels %v or annotations other than held-out: %d", m.GetLabels(), len(m.GetAnnotations()))
			}
			if size := policy.ObjectBytes(got); size > 1024 {
				t.Errorf("stub of a %s is %d bytes", kind, size)
			}
			if d := h.HeldOutDenial(l, m, kind+" ns/big"); d == nil || d.Rule != policy.RuleObjectSize {
				t.Errorf("denial %v, want rule objectSize", d)
			}
			if kind == "Pod" {
				p, ok := podcache.From(got)
				if !ok || p.Spec.NodeName != "vnode-1" || len(p.Spec.Containers) != 0 || p.Status.Phase != "" {
					t.Errorf("Pod stub: nodeName %q, %d containers, phase %q; want vnode-1, none, empty", p.Spec.NodeName, len(p.Spec.Containers), p.Status.Phase)
				}
			}
			// A stub coming back (a checkpoint, a readmission that found no room) stays one.
			if again := h.Admit(l, got); !IsHeldOut(again) {
				t.Error("a stub admitted again is not a stub")
			}
			if _, out := h.Totals(); out != 1 {
				t.Errorf("%d objects held out, want 1", out)
			}
		})
	}
}

// TestHeldBytesCountsEveryKindTogether: limits.maxCachedBytes is one budget for all of a
// tenant's kinds: Services and ServiceAccounts fill it, and the next Pod is held out (rule
// cachedBytes); deleting a Service makes room for it (Fitting).
func TestHeldBytesCountsEveryKindTogether(t *testing.T) {
	var h HeldBytes
	l := heldLimits("30Ki")
	for i, kind := range []string{"Service", "ServiceAccount", "Service"} {
		objs := kindObjects(t, string(rune('a'+i)), 8000)
		if got := h.Admit(l, objs[kind]); IsHeldOut(got) {
			t.Fatalf("%s %d held out with room left", kind, i)
		}
	}
	pod := kindObjects(t, "p", 8000)["Pod"]
	got := h.Admit(l, pod)
	if !IsHeldOut(got) {
		held, _ := h.Totals()
		t.Fatalf("a Pod of %d bytes was held beside %d bytes of Services under a 30Ki cap", policy.ObjectBytes(pod), held)
	}
	if d := h.HeldOutDenial(l, got.(metav1.Object), "Pod ns/p"); d == nil || d.Rule != policy.RuleCachedBytes {
		t.Errorf("denial %v, want rule cachedBytes", d)
	}
	if !h.Release(HeldKey{"Service", "ns", "a"}, "uid-a") {
		t.Fatal("releasing a held Service freed nothing")
	}
	if fit := h.Fitting(l, -1); len(fit) != 1 || fit[0].Kind != "Pod" || fit[0].Name != "p" {
		t.Fatalf("Fitting after the release = %+v, want Pod ns/p", fit)
	}
}

// TestStubShapeIsNotAFullObject: the tenant's own objects that carry AnnotationHeldOut but
// have a spec the apiserver always sets are not taken for stubs (the annotation is dropped
// and they are held in full).
func TestStubShapeIsNotAFullObject(t *testing.T) {
	l := heldLimits("1Mi")
	for _, kind := range []string{"Service", "EndpointSlice", "PersistentVolumeClaim", "Ingress", "NetworkPolicy", "Namespace", "Pod",
		"PersistentVolume", "StorageClass", "PriorityClass", "RuntimeClass"} {
		obj := kindObjects(t, "forged", 10)[kind]
		m := obj.(metav1.Object)
		m.SetLabels(nil)
		m.SetAnnotations(map[string]string{AnnotationHeldOut: "objectSize 1"})
		if IsHeldOut(obj) {
			t.Errorf("a %s with a spec and the held-out annotation is taken for a stub", kind)
			continue
		}
		var h HeldBytes
		got := h.Admit(l, obj)
		if IsHeldOut(got) || len(got.(metav1.Object).GetAnnotations()) != 0 {
			t.Errorf("%s: the tenant's held-out annotation was kept (%v)", kind, got.(metav1.Object).GetAnnotations())
		}
	}
}
