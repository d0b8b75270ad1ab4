package podcache

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/reference"
)

func makePod(ns, name, node string, lbl map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), ResourceVersion: "7", Labels: lbl},
		Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: "default",
			Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.3",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
}

func TestRoundTrip(t *testing.T) {
	p := makePod("ns", "a", "n1", map[string]string{"app": "web"})
	c, err := New(p.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	got, ok := From(c)
	if !ok {
		t.Fatal("From refused a cached Pod")
	}
	if diff := cmp.Diff(p, got); diff != "" {
		t.Errorf("decoded cached Pod differs (-want +got):\n%s", diff)
	}
	if plain, ok := From(p); !ok || plain != p {
		t.Error("From does not return a plain Pod as it is")
	}
	if _, ok := From(&corev1.Service{}); ok {
		t.Error("From accepted a Service")
	}
	// Checkpoints store a cached Pod as the full Pod's encoding.
	b, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := p.Marshal(); !bytes.Equal(b, want) {
		t.Error("Marshal of a cached Pod differs from the Pod's own Marshal")
	}
	var back corev1.Pod
	if err := back.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, &back); diff != "" {
		t.Errorf("Marshal lost part of the Pod (-want +got):\n%s", diff)
	}
}

func TestSpecEqualAndDeepCopy(t *testing.T) {
	a, _ := New(makePod("ns", "a", "n1", nil))
	b, _ := New(makePod("ns", "a", "n1", nil))
	bound, _ := New(makePod("ns", "a", "n2", nil))
	if !a.SpecEqual(b) || a.SpecEqual(bound) {
		t.Errorf("SpecEqual: equal specs %v, different nodes %v", a.SpecEqual(b), a.SpecEqual(bound))
	}
	cp := a.DeepCopyObject().(*Pod)
	cp.Labels = map[string]string{"x": "y"}
	cp.spec[0] ^= 0xff
	if a.Labels != nil || !a.SpecEqual(b) {
		t.Error("DeepCopyObject shares state with the original")
	}
}

// Event recorders build an ObjectReference from the object's kind; a cached Pod's type is in
// no scheme, so it must report its kind itself.
func TestReferenceOfCachedPod(t *testing.T) {
	c, _ := New(makePod("ns", "a", "", nil))
	ref, err := reference.GetReference(scheme.Scheme, c)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Kind != "Pod" || ref.APIVersion != "v1" || ref.Name != "a" || ref.Namespace != "ns" {
		t.Errorf("reference %+v", ref)
	}
}

func TestLister(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range []*corev1.Pod{
		makePod("ns1", "a", "n1", map[string]string{"app": "web"}),
		makePod("ns1", "b", "", map[string]string{"app": "db"}),
		makePod("ns2", "c", "", map[string]string{"app": "web"}),
	} {
		c, _ := New(p)
		if err := idx.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	// A plain Pod in the same store (as unit tests put there) is read too.
	if err := idx.Add(makePod("ns2", "plain", "", map[string]string{"app": "web"})); err != nil {
		t.Fatal(err)
	}
	l := NewLister(idx)
	names := func(ps []*corev1.Pod) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Namespace+"/"+p.Name)
		}
		return out
	}
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	sortedEqual := func(what string, got []*corev1.Pod, want ...string) {
		t.Helper()
		g := names(got)
		if diff := cmp.Diff(want, g, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	all, _ := l.List(web)
	sortedEqual("List(app=web)", all, "ns1/a", "ns2/c", "ns2/plain")
	ns1, _ := l.Pods("ns1").List(labels.Everything())
	sortedEqual("Pods(ns1).List", ns1, "ns1/a", "ns1/b")
	everywhere, _ := l.Pods(metav1.NamespaceAll).List(web)
	sortedEqual("Pods(all).List(app=web)", everywhere, "ns1/a", "ns2/c", "ns2/plain")
	p, err := l.Pods("ns1").Get("a")
	if err != nil || p.Spec.NodeName != "n1" || p.Status.PodIP != "10.0.0.3" {
		t.Errorf("Get(ns1/a) = %v, %v", p, err)
	}
	if _, err := l.Pods("ns2").Get("a"); !apierrors.IsNotFound(err) {
		t.Errorf("Get of an absent Pod: %v, want NotFound", err)
	}
}

// Size is the length of Marshal's encoding, and a bare Pod keeps only its node name.
func TestSizeAndBare(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Annotations: map[string]string{"a": strings.Repeat("x", 300)}},
		Spec:   corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	c, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if c.Size() != len(b) || c.Size() != p.Size() {
		t.Errorf("Size() = %d, Marshal %d bytes, the Pod's own Size %d", c.Size(), len(b), p.Size())
	}
	if c.Bare() {
		t.Error("a Pod with a container and a status is bare")
	}
	bare := NewBare(metav1.ObjectMeta{Name: "p"}, "n1")
	full, err := bare.Pod()
	if err != nil || !bare.Bare() || full.Spec.NodeName != "n1" || len(full.Spec.Containers) != 0 {
		t.Errorf("NewBare: bare %v, pod %+v, err %v", bare.Bare(), full, err)
	}
}

func TestNodeNameWithoutDecoding(t *testing.T) {
	many := make([]corev1.Container, 30)
	for i := range many {
		many[i] = corev1.Container{Name: fmt.Sprint("c", i), Image: "busybox", Args: []string{"sleep", "1d"}}
	}
	for name, p := range map[string]*corev1.Pod{
		"unbound": {Spec: corev1.PodSpec{Containers: many[:1]}},
		"bound":   {Spec: corev1.PodSpec{NodeName: "node-7", Containers: many[:1]}},
		// Fields before and after nodeName (10): volumes (1), containers (2), nodeSelector (7),
		// hostNetwork (11), tolerations (22), a long spec.
		"crowded": {Spec: corev1.PodSpec{NodeName: "super-node-with-a-long-name.example.com", Containers: many,
			Volumes: []corev1.Volume{{Name: "v"}}, NodeSelector: map[string]string{"a": "b"}, HostNetwork: true,
			Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}}},
		"bare": {},
	} {
		c, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.NodeName(); got != p.Spec.NodeName {
			t.Errorf("%s: NodeName() = %q, want %q", name, got, p.Spec.NodeName)
		}
		for _, obj := range []any{c, p} {
			if got, ok := NodeNameOf(obj); !ok || got != p.Spec.NodeName {
				t.Errorf("%s: NodeNameOf(%T) = %q, %t; want %q", name, obj, got, ok, p.Spec.NodeName)
			}
			if m, ok := MetaOf(obj); !ok || m.Name != p.Name {
				t.Errorf("%s: MetaOf(%T) = %v, %t", name, obj, m, ok)
			}
		}
	}
	if got := NewBare(metav1.ObjectMeta{Name: "x"}, "node-3").NodeName(); got != "node-3" {
		t.Errorf("bare Pod's NodeName() = %q, want node-3", got)
	}
	if got := (&Pod{spec: []byte{0x52, 0x7f}}).NodeName(); got != "" {
		t.Errorf("a truncated spec's NodeName() = %q, want empty", got)
	}
	if _, ok := NodeNameOf("not a Pod"); ok {
		t.Error("NodeNameOf(a string) = true")
	}
}

// BenchmarkReadNodeName compares reading a cached Pod's spec.nodeName alone with decoding the
// Pod whole, what the Pod event handlers did before (go test -bench ReadNodeName ./pkg/podcache).
func BenchmarkReadNodeName(b *testing.B) {
	p := makePod("app", "web", "node-1", map[string]string{"app": "web"})
	p.Spec.Volumes = []corev1.Volume{{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "token",
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['tenancy.vcsyncer.io/sa-token.0']"}}}}}}}}}}
	c, err := New(p)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("nodeName", func(b *testing.B) {
		for b.Loop() {
			if n, _ := NodeNameOf(c); n != "node-1" {
				b.Fatal(n)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			if d, _ := From(c); d.Spec.NodeName != "node-1" {
				b.Fatal(d.Spec.NodeName)
			}
		}
	})
}
