package tenant

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
)

// heldLimits returns limits with maxObjectBytes 10Ki and maxCachedBytes cachedBytes.
func heldLimits(cachedBytes string) *tenancyv1alpha1.LimitsPolicy {
	o, c := resource.MustParse("10Ki"), resource.MustParse(cachedBytes)
	return &tenancyv1alpha1.LimitsPolicy{MaxObjectBytes: &o, MaxCachedBytes: &c}
}

func cmOf(name string, n int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), ResourceVersion: "1"},
		Data:       map[string]string{"v": strings.Repeat("x", n)},
	}
}

// TestHeldBytesBoundsTheCache: objects are held in full while their sum fits
// limits.maxCachedBytes, the rest are stubs (metadata only, rule cachedBytes), an object over
// limits.maxObjectBytes is a stub whatever the room (rule objectSize, keys counted), and a
// deletion makes room for what is held out.
func TestHeldBytesBoundsTheCache(t *testing.T) {
	var h HeldBytes
	l := heldLimits("25Ki")
	var stubs []string
	for i := range 5 {
		o := cmOf(string(rune('a'+i)), 8000)
		got := h.Admit(l, o)
		if IsHeldOut(got) {
			stubs = append(stubs, o.Name)
			cm := got.(*corev1.ConfigMap)
			if len(cm.Data) != 0 || cm.UID != o.UID || cm.ResourceVersion != "1" {
				t.Errorf("stub of %s keeps data or loses its identity: %+v", o.Name, cm.ObjectMeta)
			}
			d := h.HeldOutDenial(l, cm, "ConfigMap ns/"+o.Name)
			if d == nil || d.Rule != policy.RuleCachedBytes {
				t.Fatalf("stub of %s: denial %v, want rule cachedBytes", o.Name, d)
			}
			// The message names what the cap compared (the charge), not only the encoded size.
			charge := h.out[HeldKey{Kind: "ConfigMap", Namespace: "ns", Name: o.Name}].Charge
			if want := fmt.Sprintf("%d bytes in the syncer's memory", charge); charge <= policy.ObjectBytes(o) || !strings.Contains(d.Message, want) {
				t.Errorf("stub of %s: denial %q does not name its charge %d (encoded %d)", o.Name, d.Message, charge, policy.ObjectBytes(o))
			}
		} else if got != any(o) {
			t.Errorf("%s fits but was not cached as is", o.Name)
		}
	}
	held, out := h.Totals()
	if held > 25*1024 || out != 2 || strings.Join(stubs, ",") != "d,e" {
		t.Fatalf("held %d bytes (cap 25Ki), %d held out (%v); want 3 held, d and e out", held, out, stubs)
	}
	// Keys over the per-object cap: a stub with rule objectSize.
	keys := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keys", Namespace: "ns", UID: "uid-keys"}, Data: map[string]string{}}
	for i := range 60 {
		keys.Data[strings.Repeat(string(rune('a'+i%26)), 200)+string(rune('0'+i/26))] = ""
	}
	got := h.Admit(l, keys)
	if !IsHeldOut(got) {
		t.Fatal("a ConfigMap with 12 KB of keys and empty values passed a 10Ki cap")
	}
	if d := h.HeldOutDenial(l, got.(metav1.Object), "ConfigMap ns/keys"); d == nil || d.Rule != policy.RuleObjectSize {
		t.Errorf("denial %v, want rule objectSize", d)
	}
	// Deleting a held object frees its bytes; another UID at the same key frees nothing.
	if h.Release(HeldKey{"ConfigMap", "ns", "a"}, "other-uid") {
		t.Error("a release of another UID freed bytes")
	}
	if !h.Release(HeldKey{"ConfigMap", "ns", "a"}, "uid-a") {
		t.Error("releasing a held object freed nothing")
	}
	fit := h.Fitting(l, -1)
	if len(fit) != 1 || fit[0].Name != "d" {
		t.Fatalf("Fitting after one release = %+v, want d only", fit)
	}
	if got := h.Admit(l, cmOf("d", 8000)); IsHeldOut(got) {
		t.Error("d was held out again although it fits now")
	}
	if _, out := h.Totals(); out != 2 { // e and keys
		t.Errorf("%d held out, want 2", out)
	}
}

// TestHeldBytesKeepsHeldObjects: an object held keeps its place when it changes without
// growing, even when the cap was lowered; a stub coming back from a checkpoint stays a stub;
// the tenant's own held-out annotation on a full object is dropped, not obeyed.
func TestHeldBytesKeepsHeldObjects(t *testing.T) {
	var h HeldBytes
	o := cmOf("a", 8000)
	h.Admit(heldLimits("25Ki"), o)
	lowered := heldLimits("1Ki")
	if IsHeldOut(h.Admit(lowered, cmOf("a", 8000))) {
		t.Error("a lowered cap dropped an object already held")
	}
	if !IsHeldOut(h.Admit(lowered, cmOf("a", 9000))) {
		t.Error("an object that grew over the lowered cap is still held")
	}
	st := stub(cmOf("b", 8000), policy.RuleCachedBytes, 8000)
	if !IsHeldOut(h.Admit(heldLimits("25Ki"), st)) {
		t.Error("a restored stub was cached as a full object")
	}
	forged := cmOf("c", 100)
	forged.Annotations = map[string]string{AnnotationHeldOut: "cachedBytes 1"}
	got := h.Admit(heldLimits("25Ki"), forged)
	if IsHeldOut(got) || got.(*corev1.ConfigMap).Annotations[AnnotationHeldOut] != "" {
		t.Error("the tenant's own held-out annotation was obeyed or kept")
	}
	if got := h.Admit(lowered, &corev1.Pod{}); IsHeldOut(got) {
		t.Error("a Pod is not bounded here")
	}
}

// TestMemoryBoundCondition: the Tenant's WithinMemoryBound condition is False while objects
// are held out and True again once none are; the Cluster is notified on each change only.
func TestMemoryBoundCondition(t *testing.T) {
	notified := 0
	h := HeldBytes{notify: func() { notified++ }}
	tn := &tenancyv1alpha1.Tenant{}
	setMemoryBoundStatus(tn, &h, State{})
	if c := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionWithinMemoryBound); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("condition %+v, want True", c)
	}
	l := heldLimits("10Ki")
	h.Admit(l, cmOf("a", 8000))
	h.Admit(l, cmOf("b", 8000)) // held out
	h.Admit(l, cmOf("c", 8000)) // held out: no second notification
	if notified != 1 {
		t.Errorf("%d notifications after objects were held out, want 1", notified)
	}
	setMemoryBoundStatus(tn, &h, State{})
	if c := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionWithinMemoryBound); c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonMemoryBoundReached {
		t.Fatalf("condition %+v, want False MemoryBoundReached", c)
	}
	h.Release(HeldKey{"ConfigMap", "ns", "b"}, "uid-b")
	h.Release(HeldKey{"ConfigMap", "ns", "c"}, "uid-c")
	if notified != 2 {
		t.Errorf("%d notifications after none is held out, want 2", notified)
	}
	setMemoryBoundStatus(tn, &h, State{})
	if c := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionWithinMemoryBound); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("condition %+v, want True again", c)
	}
}
