package tenant

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/policy"
)

// TestHeldBytesBoundsEntries: limits.maxCachedObjects bounds the number of the tenant's
// objects in the caches, held or held out, of every kind together. Tiny objects under every
// byte cap fill it; the next new object is a stub (rule cachedObjects), the HeldBytes is
// marked overflowed and notifies once; objects already cached keep their entries (an update
// of one is still held in full).
func TestHeldBytesBoundsEntries(t *testing.T) {
	notified := 0
	h := HeldBytes{notify: func() { notified++ }}
	l := heldLimits("1Mi")
	limit := int32(5)
	l.MaxCachedObjects = &limit
	// One big object held out by its size is an entry too.
	if got := h.Admit(l, cmOf("big", 20000)); !IsHeldOut(got) {
		t.Fatal("a 20 KB ConfigMap passed a 10Ki maxObjectBytes")
	}
	notified = 0
	for i := range 4 {
		kind := []string{"Service", "PriorityClass", "Node", "ServiceAccount"}[i]
		if got := h.Admit(l, kindObjects(t, fmt.Sprintf("o%d", i), 10)[kind]); IsHeldOut(got) {
			t.Fatalf("%s %d held out under the entry cap", kind, i)
		}
	}
	if n := h.Entries(); n != 5 {
		t.Fatalf("Entries() = %d, want 5", n)
	}
	if h.Overflowed() || notified != 0 {
		t.Fatalf("overflowed %v (notified %d) at the cap", h.Overflowed(), notified)
	}
	// An update of a held object keeps its entry.
	if got := h.Admit(l, kindObjects(t, "o0", 20)["Service"]); IsHeldOut(got) {
		t.Fatal("an update of a held Service was held out at the entry cap")
	}
	// A new object past the cap: a stub, rule cachedObjects, overflowed, notified once.
	for i := range 3 {
		got := h.Admit(l, cmOf(fmt.Sprintf("tiny-%d", i), 1))
		if !IsHeldOut(got) {
			t.Fatalf("tiny ConfigMap %d cached in full past limits.maxCachedObjects %d", i, limit)
		}
		if d := h.HeldOutDenial(l, got.(metav1.Object), "ConfigMap ns/tiny"); d == nil || d.Rule != policy.RuleCachedObjects {
			t.Errorf("denial %v, want rule cachedObjects", d)
		}
	}
	if !h.Overflowed() || notified != 1 {
		t.Fatalf("overflowed %v, notified %d times; want true, once", h.Overflowed(), notified)
	}
	// No cap: nothing is held out by count.
	var free HeldBytes
	for i := range 50 {
		if got := free.Admit(heldLimits("1Mi"), cmOf(fmt.Sprintf("c%d", i), 1)); IsHeldOut(got) || free.Overflowed() {
			t.Fatalf("ConfigMap %d held out without limits.maxCachedObjects", i)
		}
	}
}
