package admit

import (
	"fmt"
	"sort"
	"testing"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func TestObjectLimitsCap(t *testing.T) {
	var l objectLimits
	c, other := &tenant.Cluster{Name: "a"}, &tenant.Cluster{Name: "b"}
	const kind = resources.KindConfigMap
	for i := range 2 {
		if ok, _ := l.admit(c, kind, fmt.Sprintf("ns/cm-%d", i), 2, false); !ok {
			t.Fatalf("cm-%d refused under the cap", i)
		}
	}
	ok, newly := l.admit(c, kind, "ns/cm-2", 2, false)
	if ok || !newly {
		t.Fatalf("third object: admit = %v, newly refused = %v; want refused, reported", ok, newly)
	}
	if ok, newly := l.admit(c, kind, "ns/cm-2", 2, false); ok || newly {
		t.Errorf("third object again (an update): admit = %v, newly = %v; want refused, not reported again", ok, newly)
	}
	if !l.isRefused(c, kind, "ns/cm-2") || l.isRefused(c, kind, "ns/cm-0") {
		t.Error("isRefused wrong")
	}
	if ok, _ := l.admit(c, kind, "ns/cm-0", 2, false); !ok {
		t.Error("an admitted object refused on its update")
	}
	if ok, _ := l.admit(other, kind, "ns/cm-9", 2, false); !ok {
		t.Error("another tenant's object refused: the cap is per tenant")
	}
	if ok, _ := l.admit(c, resources.KindSecret, "ns/s", 2, false); !ok {
		t.Error("another kind's object refused: the cap is per kind")
	}
	if p := l.release(c, kind, "ns/cm-2", 2); len(p) != 0 {
		t.Errorf("deleting a refused object promoted %v", p)
	}
	_, _ = l.admit(c, kind, "ns/cm-3", 2, false)
	if p := l.release(c, kind, "ns/cm-0", 2); len(p) != 1 || p[0] != "ns/cm-3" {
		t.Errorf("deleting an admitted object promoted %v, want [ns/cm-3]", p)
	}
	if l.isRefused(c, kind, "ns/cm-3") {
		t.Error("a promoted object is still refused")
	}
	if a, r := l.counts(c, kind); a != 2 || r != 0 {
		t.Errorf("counts = %d admitted, %d refused; want 2, 0", a, r)
	}
}

func TestObjectLimitsForceAndPolicyChanges(t *testing.T) {
	var l objectLimits
	c := &tenant.Cluster{Name: "a"}
	const kind = resources.KindPod
	// Objects with super copies (found on the initial list) are admitted over the cap: a
	// restart or a lowered cap never drops synced objects.
	for i := range 3 {
		if ok, _ := l.admit(c, kind, fmt.Sprintf("ns/p-%d", i), 1, true); !ok {
			t.Fatal("forced admission refused")
		}
	}
	if ok, _ := l.admit(c, kind, "ns/new", 1, false); ok {
		t.Error("a new object admitted while over the (lowered) cap")
	}
	if p := l.release(c, kind, "ns/p-0", 1); len(p) != 0 {
		t.Errorf("a slot freed below an exceeded cap promoted %v", p)
	}
	_, _ = l.admit(c, kind, "ns/new2", 1, false)
	got := l.raise(c, 10)
	sort.Strings(got[kind])
	if fmt.Sprint(got[kind]) != "[ns/new ns/new2]" {
		t.Errorf("raising the cap promoted %v, want [ns/new ns/new2]", got)
	}
	if ok, _ := l.admit(c, kind, "ns/any", -1, false); !ok {
		t.Error("no cap (-1) refused an object")
	}
	l.forget(c)
	if a, _ := l.counts(c, kind); a != 0 {
		t.Error("forget kept state")
	}
}
