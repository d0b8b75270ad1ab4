package tenant

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/policy"
)

// TestForgedStubsAreCounted: a tenant ConfigMap shaped like a stub (no data, no labels, only
// AnnotationHeldOut) but carrying a long annotation value or many finalizers is not taken for
// a stub: it is counted and, past the caps, replaced by a real stub, so the bytes the syncer
// keeps for the tenant stay within limits.maxCachedBytes.
func TestForgedStubsAreCounted(t *testing.T) {
	var fins []string
	for i := range 300 {
		fins = append(fins, fmt.Sprintf("f%d.%s/f", i, strings.Repeat("x", 60)))
	}
	var owners []metav1.OwnerReference
	for i := range 40 {
		owners = append(owners, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: fmt.Sprintf("%s-%d", strings.Repeat("o", 200), i), UID: types.UID(fmt.Sprint(i))})
	}
	forgeries := map[string]metav1.ObjectMeta{
		"long annotation value": {Annotations: map[string]string{AnnotationHeldOut: "objectSize " + strings.Repeat("9", 20*1024)}},
		"many finalizers":       {Finalizers: fins, Annotations: map[string]string{AnnotationHeldOut: "objectSize 1"}},
		"owner references":      {OwnerReferences: owners, Annotations: map[string]string{AnnotationHeldOut: "objectSize 1"}},
	}
	for name, meta := range forgeries {
		t.Run(name, func(t *testing.T) {
			var h HeldBytes
			l := heldLimits("25Ki") // maxObjectBytes 10Ki, maxCachedBytes 25Ki
			var cached int64
			for i := range 50 {
				cm := &corev1.ConfigMap{ObjectMeta: *meta.DeepCopy()}
				cm.Name, cm.Namespace, cm.UID, cm.ResourceVersion = fmt.Sprintf("big-%d", i), "ns", types.UID(fmt.Sprint("u", i)), "1"
				cached += policy.ObjectBytes(h.Admit(l, cm))
			}
			held, _ := h.Totals()
			if held > 25*1024 {
				t.Errorf("held %d bytes, over the 25Ki cap", held)
			}
			// What the cache keeps: the objects held (within the cap) and stubs of about 200
			// bytes each.
			if limit := int64(25*1024 + 50*400); cached > limit {
				t.Errorf("forged stubs cached whole: %d bytes in the cache, want at most %d (held %d)", cached, limit, held)
			}
		})
	}
}

// TestForgedNegativeSizeFitsNothing: a forged stub whose size is negative does not make other
// stubs look as if they fit (Fitting).
func TestForgedNegativeSizeFitsNothing(t *testing.T) {
	var h HeldBytes
	l := heldLimits("25Ki")
	h.Admit(l, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", UID: "a", ResourceVersion: "1",
		Annotations: map[string]string{AnnotationHeldOut: "cachedBytes -9000000000000000000"}}})
	for _, n := range []string{"b", "c", "d", "e"} {
		h.Admit(l, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "ns", UID: types.UID(n), ResourceVersion: "1",
			Annotations: map[string]string{AnnotationHeldOut: "cachedBytes 8000"}}})
	}
	var got []string
	for _, o := range h.Fitting(l, -1) {
		got = append(got, o.Name)
	}
	// Three of b to e fit (3 × 8000 < 25Ki), not four; a counts nothing and fits.
	if len(got) > 4 {
		t.Errorf("Fitting offers %v: a negative forged size let more through than the cap holds", got)
	}
}
